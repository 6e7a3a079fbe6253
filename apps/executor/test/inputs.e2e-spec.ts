import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { shutDown } from '../../../test/support/app-process';
import { until } from '../../../test/support/router-process';
import { devToken, v2Client, type TestClient } from '../../../test/support/ts-clients';
import { bubblewrapAvailable } from '../../../test/support/sandbox';

/** Asset tags and handles in code, through a real executor and MCP clients of two users. */
describe('asset tags and handles', () => {
  let ex: RunningExecutor;
  let alice: TestClient;
  let bob: TestClient;
  const extra = mkdtempSync(join(tmpdir(), 'stoa-datasets-'));
  const run = async (c: TestClient, code: string, sid?: string) =>
    (await c.call('execute_demo_code', { code, ...(sid ? { execution_session_id: sid } : {}) })).json;

  beforeAll(async () => {
    writeFileSync(join(extra, 'extra.csv'), 'x\n1\n');
    ex = await startExecutor({
      config: { transfer: { assets: { roots: [extra] }, handles: { max_bytes: 1024 * 1024 } } },
    });
    mkdirSync(join(ex.dataDir, 'datasets', 'lab'), { recursive: true });
    writeFileSync(join(ex.dataDir, 'datasets', 'lab', 'samples.csv'), 'id,value\n1,3.5\n2,4.5\n');
    symlinkSync('/etc/hostname', join(ex.dataDir, 'datasets', 'sneaky.txt'));
    alice = await v2Client(ex.mcpUrl, 'auto', devToken('alice'));
    bob = await v2Client(ex.mcpUrl, 'auto', devToken('bob'));
  });
  afterAll(() => shutDown(alice, bob, ex));

  it('<local> tags in assignments and call arguments become pathlib.Path variables of cached copies', async () => {
    const samples = join(ex.dataDir, 'datasets', 'lab', 'samples.csv');
    const r = await run(
      alice,
      [
        `p = "<local>${samples}</local>"`,
        `print(type(p).__name__, open(p).read().splitlines()[1])`,
        `print(len(open("<local>lab/samples.csv</local>").read()), open("<local>${join(extra, 'extra.csv')}").read().split())`,
        `print("<local>${samples}</local>")  # a call argument too`,
        `"<local>not/a/candidate</local>"  # a bare expression is left alone`,
      ].join('\n'),
    );
    expect(r.stderr).toBe('');
    const lines = (r.stdout as string).split('\n');
    expect(lines[0]).toMatch(/^(PosixPath|Path) 1,3.5$/);
    expect(lines[1]).toBe("21 ['x', '1']");
    expect(lines[2]).toMatch(/\/inbox\/k-[^/]+\/assets\/[0-9a-f]{64}\.csv$/);
    expect(lines[3]).toBe("'<local>not/a/candidate</local>'");
  });

  // Kernels running as the server's own user (a fresh machine's dev fallback) could write anywhere it can.
  it.runIf(bubblewrapAvailable())(
    'the asset cache is read-only for the kernel: it cannot plant links where the server writes',
    async () => {
      const r = await run(
        alice,
        `import os\np = "<local>lab/samples.csv</local>"\nos.symlink('/etc/passwd', os.path.join(os.path.dirname(p), 'planted.csv'))`,
      );
      expect(r.success).toBe(false);
      expect(r.stderr).toMatch(/PermissionError|Read-only file system/);
    },
  );

  it('<local> refuses paths outside the allowed roots, traversal and symlinks out of them; nothing runs', async () => {
    for (const [tag, why] of [
      ['<local>/etc/passwd</local>', 'outside the directories this server shares'],
      ['<local>../../../../etc/passwd</local>', 'outside the directories this server shares'],
      [
        `<local>${join(ex.dataDir, 'datasets', 'lab', '..', '..', 'stoa.sqlite')}</local>`,
        'outside the directories this server shares',
      ],
      ['<local>sneaky.txt</local>', 'File not found'],
      ['<local>lab/missing.csv</local>', 'File not found'],
      ['<blob>0123456789abcdef</blob>', "not in this server's data catalog"],
    ]) {
      const r = await run(alice, `ran = True\ndata = open("${tag}").read()`);
      expect({ tag, success: r.success }).toEqual({ tag, success: false });
      expect(r.error).toContain(`Failed to resolve asset '${tag}'`);
      expect(r.error).toContain(why);
      expect((await run(alice, "'ran' in globals()", r.session_id as string)).stdout).toBe('False\n');
    }
    // Other markup in strings is not an asset tag.
    expect((await run(alice, 'print(len("<b>bold</b>"))')).stdout).toBe('11\n');
  });

  it('tags in top-level string arguments of MCP tools resolve too (reference §2.8.3)', async () => {
    const s = await run(alice, 'pass');
    const ok = await alice.call('execute_demo_code', {
      code: 'pass',
      description: '<local>lab/samples.csv</local>',
      execution_session_id: s.session_id,
    });
    expect(ok.json.description).toMatch(/\/inbox\/k-[^/]+\/assets\/[0-9a-f]{64}\.csv$/);
    const bad = await alice.call('execute_demo_code', {
      code: 'pass',
      description: '<local>/etc/passwd</local>',
      execution_session_id: s.session_id,
    });
    expect(bad.isError).toBe(true);
    expect(bad.text).toContain(
      "Failed to resolve DataLake asset '<local>/etc/passwd</local>' for parameter 'description': '/etc/passwd' is outside the directories this server shares",
    );
  });

  it('stash(obj) gives a handle the same user can use in another session and in a batch item', async () => {
    const s1 = await run(
      alice,
      "import fractions\nh = stash({'model': [1, 2, 3], 'f': fractions.Fraction(1, 3)})\nprint(h)",
    );
    const handle = (s1.stdout as string).trim();
    expect(handle).toMatch(/^h_[0-9a-f]{12}$/);
    const s2 = await run(alice, `obj = "${handle}"\nprint(obj['model'], obj['f'])`);
    expect(s2).toMatchObject({ success: true, stdout: '[1, 2, 3] 1/3\n' });
    expect(s2.session_id).not.toBe(s1.session_id);

    const batch = (
      await alice.call('demo_parallel_execute', {
        code: `result = sum("${handle}"['model']) * k`,
        inputs: [{ k: 1 }, { k: 10 }],
      })
    ).json;
    const done = await until('batch done', async () => {
      const r = (await alice.call('demo_check_batch', { batch_id: batch.batch_id })).json;
      return r.status === 'running' ? undefined : r;
    });
    expect((done.jobs as { result: unknown }[]).map((j) => j.result)).toEqual([6, 60]);

    // Another user's code mentioning the handle gets the unknown-handle answer, exactly like a made-up id.
    const foreign = await run(bob, `x = "${handle}"`);
    const unknown = await run(bob, 'x = "h_000000000000"');
    expect(foreign.success).toBe(false);
    expect(foreign.error).toBe(unknown.error?.toString().replace('h_000000000000', handle));
    expect(foreign.error).toMatch(/^Unknown handle 'h_[0-9a-f]{12}': no stashed object with this id exists for you/);
  });

  it('stash refuses objects over the size cap with a message that says what to do', async () => {
    const r = await run(alice, "h = stash(b'x' * (2 * 1024 * 1024))");
    expect(r.success).toBe(false);
    expect(r.stderr).toMatch(/over the 1048576-byte handle limit/);
  });
});
