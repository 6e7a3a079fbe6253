import { Worker } from 'node:worker_threads';
import type { AppKind, Target } from './fleet';
import { rssMb } from './processes';

/** One malformed request, as built for a target (2025-era requests go over that target's open MCP session). */
export interface BadRequest {
  httpMethod?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Send on the target's 2025-era MCP session (Mcp-Session-Id added). */
  legacy?: boolean;
}

/** What the answer must be. `message` is matched against error.message, or a tool result's text. */
export interface Expected {
  status: number;
  code?: number;
  message?: RegExp;
  headers?: Record<string, RegExp>;
}

/** A row of the bad-input table: one line each, built with the helpers below. */
export interface BadInputRow {
  name: string;
  request: () => BadRequest;
  expect: Expected;
  /** Apps the row runs against (default: all four). */
  apps?: readonly AppKind[];
}

/** What a row's request came to, with the app's health around it. */
export interface Outcome {
  status: number;
  headers: Headers;
  bytes: number;
  code?: number;
  text?: string;
  /** Longest /health round trip while the request ran (ms). */
  stallMs: number;
  rssGrowthMb: number;
  logGrowthBytes: number;
}

const MODERN = '2026-07-28';
const META = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'stoa-bad-input', version: '1.0.0' },
};
const ACCEPT = 'application/json, text/event-stream';

/** A 2026-07-28 request (`_meta` envelope, MCP headers); `raw` replaces the JSON body. */
export function modern(
  method: string,
  params: Record<string, unknown> = {},
  opts: { name?: string; capabilities?: Record<string, unknown>; raw?: () => string } = {},
): () => BadRequest {
  return () => {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: ACCEPT,
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
    };
    if (opts.name) headers['mcp-name'] = opts.name;
    const _meta = { ...META, 'io.modelcontextprotocol/clientCapabilities': opts.capabilities ?? {} };
    return {
      headers,
      body: opts.raw?.() ?? JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta } }),
    };
  };
}

/** A request on the target's 2025-era MCP session; `raw` replaces the JSON body. */
export function legacy(
  method: string,
  params: Record<string, unknown> = {},
  opts: { raw?: () => string } = {},
): () => BadRequest {
  return () => ({
    legacy: true,
    headers: { 'content-type': 'application/json', accept: ACCEPT },
    body: opts.raw?.() ?? JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
}

/** Any HTTP request to /mcp. */
export function raw(httpMethod: string, headers: Record<string, string> = {}, body?: string): () => BadRequest {
  return () => ({ httpMethod, headers, body });
}

/** `levels` nested arrays, as JSON text. */
export const nested = (levels: number): string => '['.repeat(levels) + ']'.repeat(levels);
/** A string of `mb` MiB. */
export const big = (mb: number): string => 'a'.repeat(Math.round(mb * 1024 * 1024));

/** Opens a 2025-era MCP session on `mcpUrl` (initialize + initialized) and returns its Mcp-Session-Id. */
export async function openLegacySession(mcpUrl: string, token: string): Promise<string> {
  const headers = { 'content-type': 'application/json', accept: ACCEPT, authorization: `Bearer ${token}` };
  const init = {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'stoa-bad-input', version: '1.0.0' },
    },
  };
  const res = await fetch(mcpUrl, { method: 'POST', headers, body: JSON.stringify(init) });
  await res.text();
  const sid = res.headers.get('mcp-session-id');
  if (!sid) throw new Error(`initialize at ${mcpUrl} gave no Mcp-Session-Id (HTTP ${res.status})`);
  const sessionHeaders = { ...headers, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
  await (
    await fetch(mcpUrl, {
      method: 'POST',
      headers: sessionHeaders,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    })
  ).text();
  return sid;
}

/** The slowest /health round trip of `target` at rest over `ms` (the machine's own noise, measured in the same run). */
export async function idleStallMs(target: Target, ms = 1000): Promise<number> {
  const probe = healthProbe(`${target.url}/health`);
  await probe.ready;
  await new Promise((r) => setTimeout(r, ms)); // the measuring window itself, not a wait for an event
  probe.stop();
  return probe.result;
}

/**
 * Sends `req` to `target` while a worker thread probes /health back to back (its own event loop, so the
 * test's JSON work cannot inflate the figure), and measures RSS and log growth of the app around it.
 */
export async function sendBad(
  target: Target,
  req: BadRequest,
  auth: { token: string; legacySession?: string },
): Promise<Outcome> {
  const headers: Record<string, string> = { authorization: `Bearer ${auth.token}`, ...req.headers };
  if (req.legacy)
    Object.assign(headers, { 'mcp-session-id': auth.legacySession ?? '', 'mcp-protocol-version': '2025-11-25' });
  const body = req.body === undefined ? undefined : Buffer.from(req.body);
  const rssBefore = rssMb(target.pid);
  const logsBefore = target.logs().length;
  const probe = healthProbe(`${target.url}/health`);
  await probe.ready;
  let res: Response;
  let payload: Buffer;
  try {
    res = await fetch(target.mcpUrl, { method: req.httpMethod ?? 'POST', headers, body });
    payload = Buffer.from(await res.arrayBuffer());
  } finally {
    probe.stop();
  }
  const stallMs = await probe.result;
  const answer = parseAnswer(payload, res.headers.get('content-type') ?? '');
  return {
    status: res.status,
    headers: res.headers,
    bytes: payload.length,
    ...answer,
    stallMs,
    rssGrowthMb: rssMb(target.pid) - rssBefore,
    logGrowthBytes: target.logs().length - logsBefore,
  };
}

/** error.code/message of a JSON-RPC answer (JSON or the last SSE event), or a tool result's text. */
function parseAnswer(payload: Buffer, type: string): { code?: number; text?: string } {
  let text = payload.toString('utf8');
  if (type.includes('text/event-stream'))
    text =
      text
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trim())
        .pop() ?? '';
  try {
    const m = JSON.parse(text) as {
      error?: { code?: number; message?: string };
      result?: { content?: { text?: string }[] };
    };
    if (m.error) return { code: m.error.code, text: m.error.message };
    return { text: m.result?.content?.map((c) => c.text ?? '').join('') };
  } catch {
    return { text };
  }
}

const PROBE = `
const { parentPort, workerData } = require('node:worker_threads');
let stopped = false, worst = 0;
parentPort.on('message', () => (stopped = true));
(async () => {
  for (let i = 0; i < 3; i++) await (await fetch(workerData.url)).text(); // warm: connection and fetch set up
  parentPort.postMessage({ ready: true });
  do {
    const t0 = performance.now();
    try { await (await fetch(workerData.url)).text(); } catch {}
    worst = Math.max(worst, performance.now() - t0);
    await new Promise((r) => setTimeout(r, 5));
  } while (!stopped);
  parentPort.postMessage({ worst });
})();`;

/** /health round trips in a worker thread until stopped; resolves with the slowest (ms). */
function healthProbe(url: string): { ready: Promise<void>; stop: () => void; result: Promise<number> } {
  const worker = new Worker(PROBE, { eval: true, workerData: { url } });
  let onReady!: () => void;
  const ready = new Promise<void>((r) => (onReady = r));
  const result = new Promise<number>((resolve, reject) => {
    worker.on('message', (m: { ready?: boolean; worst?: number }) => {
      if (m.ready) onReady();
      if (m.worst !== undefined) {
        resolve(m.worst);
        void worker.terminate();
      }
    });
    worker.on('error', reject);
  });
  return { ready, stop: () => worker.postMessage('stop'), result };
}
