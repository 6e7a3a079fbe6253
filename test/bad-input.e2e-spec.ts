import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  big,
  idleStallMs,
  legacy,
  modern,
  nested,
  openLegacySession,
  raw,
  sendBad,
  type BadInputRow,
} from './support/bad-input';
import { startFleet, type AppKind, type Fleet } from './support/fleet';
import { devToken } from './support/ts-clients';

/** Every app answers bad input within these bounds (issue 23). */
const LIMITS = { stallMs: 100, rssGrowthMb: 50, answerBytes: 64 * 1024, logGrowthBytes: 64 * 1024 };
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const deepArgs = () =>
  `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute_demo_code","arguments":{"code":"1","x":${nested(8000)}}}}`;
const deepModern = (method: string) => () =>
  `{"jsonrpc":"2.0","id":1,"method":"${method}","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"x":${nested(8000)}}}`;

/**
 * The bad-input table: one malformed request per line, run against the executor, router, gateway and dispatcher
 * alike. Add a row with `modern(...)`, `legacy(...)` or `raw(...)` and the answer it must get.
 */
const ROWS: BadInputRow[] = [
  // §3 unbounded input is never echoed whole
  {
    name: '3 MB tool name (2026-07-28)',
    request: modern('tools/call', { name: big(3), arguments: {} }),
    expect: {
      status: 200,
      code: -32602,
      message: /^Invalid params for tools\/call: params\.name is 3145728 characters long \(at most 128\)/,
    },
  },
  {
    name: '3 MB tool name (2025 session)',
    request: legacy('tools/call', { name: big(3), arguments: {} }),
    expect: { status: 200, code: -32602, message: /params\.name is 3145728 characters long/ },
  },
  {
    name: '3 MB execution_session_id',
    request: modern(
      'tools/call',
      { name: 'execute_demo_code', arguments: { code: '1', execution_session_id: big(3) } },
      { name: 'execute_demo_code' },
    ),
    expect: { status: 200, message: /Session a{80}… \(3145728 characters\) not found/ },
  },
  {
    name: '10 MB tool name: over server.max_body_mb',
    request: modern('tools/call', { name: big(10), arguments: {} }),
    expect: {
      status: 413,
      code: -32600,
      message: /^Request body too large: the limit is 4 MiB\. .*raise server\.max_body_mb\.$/,
    },
  },
  {
    name: '5000-character JSON-RPC id',
    request: modern(
      'tools/list',
      {},
      { raw: () => JSON.stringify({ jsonrpc: '2.0', id: 'i'.repeat(5000), method: 'tools/list', params: {} }) },
    ),
    expect: { status: 400, code: -32600, message: /JSON-RPC id is 5000 characters long/ },
  },
  // §6 nesting is bounded at parse time
  {
    name: 'JSON nested 8000 levels (2026-07-28 tools/list)',
    request: modern('tools/list', {}, { raw: deepModern('tools/list') }),
    expect: { status: 400, code: -32700, message: /^Parse error: .*nested deeper than 100 levels/ },
  },
  {
    name: 'JSON nested 8000 levels in tool arguments (2026-07-28)',
    request: modern('tools/call', {}, { name: 'execute_demo_code', raw: deepArgs }),
    expect: { status: 400, code: -32700, message: /nested deeper than 100 levels/ },
  },
  {
    name: 'JSON nested 8000 levels in tool arguments (2025 session)',
    request: legacy('tools/call', {}, { raw: deepArgs }),
    expect: { status: 400, code: -32700, message: /nested deeper than 100 levels/ },
  },
  // §7 what /mcp accepts
  {
    name: 'POST with Content-Type text/plain (2026-07-28)',
    request: raw(
      'POST',
      { 'content-type': 'text/plain', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
      '{}',
    ),
    expect: {
      status: 415,
      message: /Content-Type 'text\/plain' is not accepted\. Send JSON-RPC messages as Content-Type: application\/json/,
    },
  },
  {
    name: 'PUT /mcp',
    request: raw('PUT', { 'content-type': 'application/json' }, '{}'),
    expect: { status: 405, message: /does not serve PUT/, headers: { allow: /^GET, POST, DELETE$/ } },
  },
  {
    name: 'PATCH /mcp',
    request: raw('PATCH', { 'content-type': 'application/json' }, '{}'),
    expect: { status: 405, headers: { allow: /^GET, POST, DELETE$/ } },
  },
  { name: 'OPTIONS /mcp', request: raw('OPTIONS'), expect: { status: 405, headers: { allow: /^GET, POST, DELETE$/ } } },
  // §8 invalid params are -32602 with one line
  {
    name: 'tools/list with a numeric cursor (2026-07-28)',
    request: modern('tools/list', { cursor: 5 }),
    expect: {
      status: 200,
      code: -32602,
      message: /^Invalid params for tools\/list: params\.cursor must be a string, not a number/,
    },
  },
  {
    name: 'tools/list with an object cursor (2025 session)',
    request: legacy('tools/list', { cursor: {} }),
    expect: { status: 200, code: -32602, message: /params\.cursor must be a string, not an object/ },
  },
  {
    name: 'tools/call with arguments 5 (2026-07-28)',
    request: modern('tools/call', { name: 'execute_demo_code', arguments: 5 }, { name: 'execute_demo_code' }),
    expect: {
      status: 200,
      code: -32602,
      message: /^Invalid params for tools\/call: params\.arguments: Invalid input: expected record, received number/,
    },
  },
  {
    name: 'tools/call with arguments [] (2025 session)',
    request: legacy('tools/call', { name: 'execute_demo_code', arguments: [] }),
    expect: { status: 200, code: -32602, message: /params\.arguments: Invalid input/ },
  },
  // §11 task ids are validated; the caller's declared capabilities reach the upstream
  {
    name: 'tasks/get with an object taskId',
    request: modern('tasks/get', { taskId: { a: 1 } }, { capabilities: TASKS, name: 'x' }),
    expect: {
      status: 200,
      code: -32602,
      message: /^Invalid params for tasks\/get: params\.taskId must be a string, not an object/,
    },
  },
  {
    name: 'tasks/get with a 1 MB taskId',
    request: modern('tasks/get', { taskId: big(1) }, { capabilities: TASKS, name: 'x' }),
    expect: { status: 200, code: -32602, message: /params\.taskId is 1048576 characters long/ },
  },
  {
    name: 'tasks/get of an unknown task, Tasks extension declared',
    request: modern('tasks/get', { taskId: 'j_000000000000' }, { capabilities: TASKS, name: 'j_000000000000' }),
    expect: { status: 200, code: -32602, message: /Task .*not found/ },
    apps: ['executor', 'router', 'gateway'],
  },
];

describe('bad input: every app answers clearly, stays responsive and bounded (real processes)', () => {
  let fleet: Fleet;
  const token = devToken('fuzzer');
  const sessions = new Map<AppKind, string>();
  /** Each app's /health noise at rest: a stall is what a request adds on top (quiet CI: a few ms). */
  const noise = new Map<AppKind, number>();

  beforeAll(async () => {
    fleet = await startFleet();
    for (const t of fleet.targets) sessions.set(t.kind, await openLegacySession(t.mcpUrl, token));
    for (const t of fleet.targets) noise.set(t.kind, await idleStallMs(t));
  });
  afterAll(async () => {
    await fleet?.stop();
  });

  for (const row of ROWS) {
    for (const kind of row.apps ?? (['executor', 'router', 'gateway', 'dispatcher'] as const)) {
      it(`${row.name} → HTTP ${row.expect.status}${row.expect.code ? ` ${row.expect.code}` : ''} (${kind})`, async () => {
        const target = fleet.target(kind);
        const out = await sendBad(target, row.request(), { token, legacySession: sessions.get(kind) });
        const seen = { status: out.status, code: out.code, text: out.text?.slice(0, 300) };
        expect(seen).toMatchObject({
          status: row.expect.status,
          ...(row.expect.code ? { code: row.expect.code } : {}),
        });
        if (row.expect.message) expect(out.text).toMatch(row.expect.message);
        for (const [h, re] of Object.entries(row.expect.headers ?? {})) expect(out.headers.get(h)).toMatch(re);
        if (out.code !== undefined) expect(out.text).not.toContain('\n'); // JSON-RPC error messages are one line
        expect({ bytes: out.bytes < LIMITS.answerBytes, log: out.logGrowthBytes < LIMITS.logGrowthBytes }).toEqual({
          bytes: true,
          log: true,
        });
        // A stall the input causes repeats when it is sent again; a scheduling hiccup of a loaded machine does not.
        const idle = noise.get(kind) ?? 0;
        let stallMs = out.stallMs;
        if (stallMs - idle >= LIMITS.stallMs)
          stallMs = Math.min(
            stallMs,
            (await sendBad(target, row.request(), { token, legacySession: sessions.get(kind) })).stallMs,
          );
        expect(stallMs - idle).toBeLessThan(LIMITS.stallMs);
        expect(out.rssGrowthMb).toBeLessThan(LIMITS.rssGrowthMb);
      });
    }
  }
});
