import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shutDown } from './support/app-process';
import { type RunningEmbedded, startEmbedded } from './support/embedded-process';
import { pyCalls } from './support/py-client';

// examples/embedding/*.ts run as a user runs them (tsx over the built 'stoa' entry), driven by the Python MCP client.
describe('examples/embedding/executor.ts: custom search, publisher and validate hook', () => {
  let ex: RunningEmbedded | undefined;
  let outbox = '';

  beforeAll(async () => {
    ex = await startEmbedded('examples/embedding/executor.ts', (dir) => ({ EXAMPLE_OUTBOX_DIR: join(dir, 'outbox') }));
    outbox = join(ex.dir, 'outbox');
  });
  afterAll(() => shutDown(ex));

  it('ranks search_embedded_tools with the custom backend (share of query words, not BM25)', async () => {
    const [r] = await pyCalls(ex!.mcpUrl, 'auto', [
      { tool: 'search_embedded_tools', args: { query: 'parse csv text', top: 2, category: 'tools' } },
    ]);
    const tools = r!.json.tools as { name: string; score: number; to_access: string; server_name: string }[];
    expect(tools[0]).toMatchObject({
      name: 'parse_csv',
      score: 1,
      server_name: 'embedded',
      to_access: 'Call via execute_embedded_code',
    });
    expect(tools.length).toBe(2);
    expect(r!.json.skills).toEqual([]);
  });

  it('still refuses an over-long query before the backend sees it', async () => {
    const [r] = await pyCalls(ex!.mcpUrl, 'auto', [
      { tool: 'search_embedded_tools', args: { query: 'x'.repeat(5000) } },
    ]);
    expect(r!.is_error).toBe(true);
    expect(r!.json.error).toContain('Query too long');
  });

  it('refuses os.system through the validate hook with its message, and the session keeps working', async () => {
    const [first, refused, after] = await pyCalls(ex!.mcpUrl, 'auto', [
      { tool: 'execute_embedded_code', args: { code: 'kept = 41' } },
      {
        tool: 'execute_embedded_code',
        args: { code: "import os\nos.system('true')", execution_session_id: '{{0.session_id}}' },
      },
      { tool: 'execute_embedded_code', args: { code: 'print(kept + 1)', execution_session_id: '{{0.session_id}}' } },
    ]);
    expect(refused!.json).toMatchObject({ success: false, session_id: first!.json.session_id });
    expect(refused!.json.error).toBe(
      'os.system is disabled on this server. Use subprocess.run([...], capture_output=True) so the output lands in the result.',
    );
    expect(after!.json).toMatchObject({ success: true, stdout: '42\n', session_id: first!.json.session_id });
  });

  it("sends a kernel variable to the custom 'outbox' publisher, which writes the pickled object", async () => {
    const [, sent] = await pyCalls(ex!.mcpUrl, 'auto', [
      { tool: 'execute_embedded_code', args: { code: "report = {'rows': 3}" } },
      {
        tool: 'embedded_send',
        args: { data_ref: 'report', to: 'outbox', execution_session_id: '{{0.session_id}}' },
      },
    ]);
    expect(sent!.json).toMatchObject({
      success: true,
      destination: 'outbox',
      name: 'report',
      serializer: expect.stringMatching(/^(pickle|dill|cloudpickle)$/), // the best one the kernel has
    });
    const file = (sent!.json.remote_uri as string).replace('outbox://', '');
    expect(file).toBe(`${sent!.json.transfer_id as string}-report`);
    expect(readdirSync(outbox)).toEqual([file]);
    expect(statSync(join(outbox, file)).size).toBe(sent!.json.size_bytes);
    expect(readFileSync(join(outbox, file))[0]).toBe(0x80); // pickle protocol header
  });

  it('lists the custom destination in the send tool', async () => {
    const [r] = await pyCalls(ex!.mcpUrl, 'auto', [
      { tool: 'embedded_send', args: { data_ref: 'nothing', to: 'nowhere' } },
    ]);
    expect(r!.json.error).toBe("Unknown destination 'nowhere'. Available destinations: ['user', 'outbox']");
    expect(existsSync(outbox)).toBe(true);
  });
});

describe('examples/embedding/router.ts: a router assembled in code over two executors', () => {
  let net: RunningEmbedded | undefined;

  beforeAll(async () => {
    net = await startEmbedded('examples/embedding/router.ts');
  });
  afterAll(() => shutDown(net));

  it('serves both executors through one endpoint', async () => {
    const [tools, alpha, beta] = await pyCalls(
      net!.mcpUrl,
      'auto',
      [
        { tool: 'execute_alpha_code', args: { code: "print('from alpha')" } },
        { tool: 'execute_beta_code', args: { code: "print('from beta')" } },
      ],
      { listTools: true },
    );
    expect(tools!.json.tools).toEqual(
      expect.arrayContaining(['execute_alpha_code', 'execute_beta_code', 'search_lab_tools']),
    );
    expect(alpha!.json).toMatchObject({ success: true, stdout: 'from alpha\n' });
    expect(beta!.json).toMatchObject({ success: true, stdout: 'from beta\n' });
  });

  it("searches alpha's catalog through the router", async () => {
    const [r] = await pyCalls(net!.mcpUrl, 'auto', [
      { tool: 'search_lab_tools', args: { query: 'parse csv', category: 'tools' } },
    ]);
    expect((r!.json.tools as { name: string; server_name: string }[])[0]).toMatchObject({
      name: 'parse_csv',
      server_name: 'alpha',
    });
  });
});
