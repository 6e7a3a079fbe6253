import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { upstreamUrls } from '@stoa/client';
import { CliError } from './cli.errors';

/** A connected MCP client (2026-07-28 when the server speaks it, else 2025-era). */
async function connect(url: string, token: string | undefined): Promise<Client> {
  let endpoint: URL;
  try {
    endpoint = new URL(upstreamUrls(url).mcp);
  } catch {
    throw new CliError(`'${url}' is not a URL: pass the server's address, e.g. http://127.0.0.1:8000/mcp`, 2);
  }
  const client = new Client({ name: 'stoa-cli', version: '0.1.0' }, { versionNegotiation: { mode: 'auto' } });
  const headers = token ? { Authorization: `Bearer ${token}` } : undefined;
  try {
    await client.connect(new StreamableHTTPClientTransport(endpoint, { requestInit: { headers } }));
  } catch (err) {
    throw new CliError(
      `Cannot connect to ${endpoint.href}: ${(err as Error).message}. Is the server running, and is --token right?`,
    );
  }
  return client;
}

/** `key=value` pairs → tool arguments; a value that parses as JSON (numbers, true, lists, objects) is that JSON. */
export function parseToolArguments(pairs: readonly string[]): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new CliError(`'${pair}' is not key=value: write arguments as code='print(1)' or top=3`, 2);
    const raw = pair.slice(eq + 1);
    let value: unknown = raw;
    try {
      value = JSON.parse(raw);
    } catch {
      /* plain text */
    }
    args[pair.slice(0, eq)] = value;
  }
  return args;
}

/** Calls one tool and returns what to print (the result's JSON, pretty) and whether the tool failed. */
export async function callTool(
  url: string,
  tool: string,
  args: Record<string, unknown>,
  token: string | undefined,
): Promise<{ output: string; isError: boolean }> {
  const client = await connect(url, token);
  try {
    const result = await client.callTool({ name: tool, arguments: args }, { timeout: 3_600_000 });
    const text = (result.content as { type: string; text?: string }[])
      .filter((c) => c.type === 'text')
      .map((c) => c.text ?? '')
      .join('');
    let output = text;
    try {
      output = JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      if (!text && result.structuredContent) output = JSON.stringify(result.structuredContent, null, 2);
    }
    return { output, isError: result.isError === true };
  } finally {
    await client.close();
  }
}

/** The server's tools: name and the first line of each description. */
export async function listTools(url: string, token: string | undefined): Promise<{ name: string; summary: string }[]> {
  const client = await connect(url, token);
  try {
    const tools: { name: string; summary: string }[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined);
      for (const t of page.tools) tools.push({ name: t.name, summary: (t.description ?? '').split('\n')[0] ?? '' });
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  } finally {
    await client.close();
  }
}
