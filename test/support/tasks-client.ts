import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  createTaskSessionFromClient,
  DispatchError,
  type JsonRpcResponse,
  type RawClientDispatch,
} from '@modelcontextprotocol/ext-tasks/client';
import { modernRequest } from './modern-request';

type TaskSession = ReturnType<typeof createTaskSessionFromClient>;

/**
 * Raw 2026-07-28 dispatch for ext-tasks: the SDK client's codec rejects `resultType: "task"` on tools/call,
 * so ext-tasks frames its own requests and we carry them over HTTP (headers, id, JSON or SSE replies).
 */
function fetchDispatch(url: string, protocolVersion: string, extraHeaders: Record<string, string>): RawClientDispatch {
  let seq = 0;
  return async (request, options) => {
    const req = request as { method: string; params?: Record<string, unknown> };
    const id = `ext-tasks-${++seq}`;
    const headers = new Headers({
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': protocolVersion,
      'mcp-method': req.method,
      ...extraHeaders,
      ...options?.context?.headers,
    });
    if (req.method === 'tools/call') headers.set('mcp-name', String(req.params?.name));
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', id, ...req }),
        signal: options?.signal,
      });
    } catch (err) {
      if (options?.signal?.aborted) throw err;
      throw new DispatchError('MCP HTTP request failed', req.method === 'tasks/get', { cause: err });
    }
    const text = await res.text();
    const messages: { id?: string; error?: unknown; result?: unknown }[] = (
      res.headers.get('content-type') ?? ''
    ).includes('text/event-stream')
      ? text
          .split(/\r?\n\r?\n/)
          .map((ev) =>
            ev
              .split(/\r?\n/)
              .filter((l) => l.startsWith('data:'))
              .map((l) => l.slice(5).trimStart())
              .join('\n'),
          )
          .filter(Boolean)
          .map((d) => JSON.parse(d) as { id?: string })
      : text
        ? [JSON.parse(text) as { id?: string }]
        : [];
    const msg = messages.find((m) => m.id === id);
    if (!msg) throw new DispatchError(`No JSON-RPC response for ${req.method} (HTTP ${res.status})`);
    return (
      msg.error ? { kind: 'error', error: msg.error } : { kind: 'result', result: msg.result }
    ) as JsonRpcResponse;
  };
}

/** An ext-tasks session over a 2026-07-28 SDK v2 client (the Tasks extension declared on its own requests). */
export async function tasksSession(
  url: string,
  token?: string,
): Promise<{ session: TaskSession; client: Client; close: () => Promise<void> }> {
  const clientInfo = { name: 'stoa-tasks-test', version: '1.0.0' };
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const client = new Client(clientInfo, { versionNegotiation: { mode: 'auto' }, capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  const protocolVersion = client.getNegotiatedProtocolVersion() as string;
  // ext-tasks is typed against the ESM build of the SDK client; this test runs the same class from CommonJS.
  const session = createTaskSessionFromClient(client as unknown as Parameters<typeof createTaskSessionFromClient>[0], {
    endpointId: url,
    rawDispatch: fetchDispatch(url, protocolVersion, headers),
    v2RequestFraming: { protocolVersion, clientInfo, clientCapabilities: {} },
  });
  return { session, client, close: async () => (await session.close(), await client.close()) };
}

/** A JSON-RPC message of a `subscriptions/listen` stream (the fields tests read). */
export interface ListenMessage {
  id?: string | number;
  method?: string;
  params?: { taskId?: string; status?: string; notifications?: { taskIds?: string[] }; result?: unknown };
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

/**
 * Opens a 2026-07-28 `subscriptions/listen` for task notifications of `taskIds` (Tasks extension declared) and
 * reads it until the server ends it or `timeoutMs` passes; `onOpen` runs once the acknowledgement is in.
 */
export async function listenForTasks(
  mcpUrl: string,
  token: string,
  taskIds: string[],
  o: { timeoutMs?: number; onOpen?: () => Promise<void> } = {},
): Promise<{ status: number; messages: ListenMessage[] }> {
  const tasks = {
    'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
  };
  const request = modernRequest(
    'subscriptions/listen',
    { notifications: { taskIds } },
    { meta: tasks, id: 'listen-1' },
  );
  const res = await fetch(mcpUrl, {
    method: 'POST',
    headers: { ...request.headers, authorization: `Bearer ${token}` },
    body: JSON.stringify(request.body),
    signal: AbortSignal.timeout(o.timeoutMs ?? 15_000),
  });
  const messages: ListenMessage[] = [];
  let buffer = '';
  let opened = false;
  try {
    for await (const chunk of res.body ?? []) {
      buffer += Buffer.from(chunk).toString('utf8');
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines.filter((l) => l.startsWith('data: ') || l.startsWith('{')))
        messages.push(JSON.parse(line.replace(/^data: /, '')) as ListenMessage);
      if (!messages.length || opened) continue;
      opened = true;
      await o.onOpen?.();
    }
  } catch (err) {
    if ((err as Error).name !== 'TimeoutError') throw err;
  }
  if (buffer.trim()) messages.push(JSON.parse(buffer) as ListenMessage);
  return { status: res.status, messages };
}
