import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { cancelSleepThenRead, v2Client, type TestClient } from '../../../test/support/ts-clients';

describe('kernel behaviour through MCP', () => {
  let ex: RunningExecutor;
  let c: TestClient;
  const exec = async (code: string, extra: Record<string, unknown> = {}) =>
    (await c.call('execute_demo_code', { code, ...extra })).json;

  beforeAll(async () => {
    ex = await startExecutor({
      config: { execution: { interrupt_grace_seconds: 1, output_truncation_threshold: 1000 } },
      env: {
        DATABASE_URL_FAKE_SECRET: 'x',
        MY_API_TOKEN: 'tok',
        SERVICE_PASSWORD: 'pw',
        UPSTREAM_REDIS_URL: 'redis://secret@h',
      },
    });
    c = await v2Client(ex.mcpUrl, 'auto');
  });
  afterAll(async () => {
    await c.close();
    await ex.stop();
  });

  it('a timeout interrupts the code and keeps the namespace', async () => {
    const s = await exec('before = 5');
    const r = await exec('import time\nwhile True: time.sleep(0.01)', {
      timeout: 1,
      execution_session_id: s.session_id,
    });
    expect(r).toMatchObject({ success: false, error: 'Kernel execution failed' });
    expect(r.stderr).toMatch(/^Execution timeout after 1s/);
    expect((await exec('before', { execution_session_id: s.session_id })).stdout).toBe('5\n');
  });

  it('code that ignores SIGINT is killed, reported, and the session continues in a fresh kernel', async () => {
    const s = await exec('gone = 1');
    const r = await exec(
      'import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: time.sleep(0.01)',
      { timeout: 1, execution_session_id: s.session_id },
    );
    expect(r.kernel_restarted).toBe(true);
    expect(r.stderr).toContain('all session state (variables, imports) was lost');
    const next = await exec("print('gone' in globals())", { execution_session_id: s.session_id });
    expect(next).toMatchObject({ success: true, stdout: 'False\n' });
  });

  it.each(['legacy', 'auto'] as const)(
    'a %s client cancelling a long execute interrupts the kernel and keeps the variables',
    async (mode) => {
      const client = await v2Client(ex.mcpUrl, mode);
      try {
        const s = await client.call('execute_demo_code', { code: 'kept_before_cancel = 3' });
        const after = await cancelSleepThenRead(client, s.json.session_id, 'kept_before_cancel', 400);
        expect(after.stdout).toBe('3\n');
        expect(after.elapsedMs).toBeLessThan(10_000);
      } finally {
        await client.close();
      }
    },
  );

  it('os._exit is reported at once and the next call gets a new kernel', async () => {
    const s = await exec('v = 1');
    const started = Date.now();
    const r = await exec("print('last words')\nimport os; os._exit(7)", { execution_session_id: s.session_id });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(r.stdout).toBe('last words\n');
    expect(r.stderr).toContain('The kernel process died while running this code (exit code 7)');
    expect((await exec('1 + 1', { execution_session_id: s.session_id })).stdout).toBe('2\n');
  });

  it('a segfault is reported with its signal and the session recovers', async () => {
    const s = await exec('v = 1');
    const r = await exec('import ctypes; ctypes.string_at(0)', { execution_session_id: s.session_id });
    expect(r.stderr).toContain('signal SIGSEGV');
    expect(r.kernel_restarted).toBe(true);
    expect((await exec('2 + 2', { execution_session_id: s.session_id })).stdout).toBe('4\n');
  });

  it('captures output written at the file-descriptor level, in order', async () => {
    const r = await exec(
      "import os, subprocess, sys\nprint('py')\nos.write(1, b'fd\\n')\nsubprocess.run(['sh', '-c', 'echo child; echo child-err >&2'])\n_ = sys.stderr.write('err\\n')",
    );
    expect(r.stdout).toBe('py\nfd\nchild\n');
    expect(r.stderr).toBe('child-err\nerr\n');
  });

  it('truncates stdout to the head and stderr to head and tail with the reference markers', async () => {
    const out = await exec("print('a' * 3000)");
    expect(
      (out.stdout as string).startsWith(
        'a'.repeat(1000) + '\n[OUTPUT TRUNCATED: 3,001 characters exceeded the 1,000 character limit.',
      ),
    ).toBe(true);
    const err = await exec("import sys\nsys.stderr.write('b' * 1500 + 'END')");
    const stderr = err.stderr as string;
    expect(
      stderr.startsWith('b'.repeat(500) + '\n[STDERR TRUNCATED: 1,503 characters exceeded the 1,000 character limit.'),
    ).toBe(true);
    expect(stderr.endsWith('b'.repeat(497) + 'END')).toBe(true);
  });

  it('keeps server secrets out of the kernel environment', async () => {
    const r = await exec('import os, json\nprint(json.dumps(sorted(os.environ)))');
    const names = JSON.parse(r.stdout as string) as string[];
    expect(names).toContain('AGORA_OUTPUT_DIR');
    for (const secret of ['MY_API_TOKEN', 'SERVICE_PASSWORD', 'UPSTREAM_REDIS_URL', 'DATABASE_URL_FAKE_SECRET'])
      expect(names).not.toContain(secret);
  });

  it('gives agora_output a per-session output directory', async () => {
    const r = await exec(
      "import os\nprint(os.environ['AGORA_OUTPUT_DIR'].endswith('/outputs'), os.getcwd().endswith('/work'))",
    );
    expect(r.stdout).toBe('True True\n');
  });

  it('lists the files a run writes to AGORA_OUTPUT_DIR as artifacts, with a note (reference §2.7)', async () => {
    const code = [
      'import os',
      "open(agora_output('table.csv'), 'w').write('a,b\\n1,2\\n')",
      "os.makedirs(agora_output('plots'), exist_ok=True)",
      "open(agora_output('plots/fig.png'), 'wb').write(b'png')",
      "open(agora_output('.hidden'), 'w').write('x')",
    ].join('\n');
    const r = await exec(code);
    expect(r.artifacts).toEqual([
      { name: 'plots/fig.png', size_bytes: 3, mime_type: 'image/png' },
      { name: 'table.csv', size_bytes: 8, mime_type: 'text/csv' },
    ]);
    expect(r.note).toContain('2 file(s) saved to AGORA_OUTPUT_DIR: plots/fig.png, table.csv');
    expect(r.note).toContain('demo_send(data_ref="plots/fig.png", to="user")');
    const again = await exec('1 + 1', { execution_session_id: r.session_id });
    expect(again.artifacts).toEqual([]);
    expect(again.note).toBeUndefined();
    const changed = await exec("open(agora_output('table.csv'), 'a').write('3,4\\n')", {
      execution_session_id: r.session_id,
    });
    expect(changed.artifacts).toEqual([{ name: 'table.csv', size_bytes: 12, mime_type: 'text/csv' }]);
    const timedOut = await exec("open(agora_output('late.txt'), 'w').write('x')\nimport time\ntime.sleep(5)", {
      execution_session_id: r.session_id,
      timeout: 1,
    });
    expect(timedOut.artifacts).toEqual([]);
  });

  it('runs two sessions concurrently: two 1 s sleeps finish in under 1.8 s', async () => {
    const [a, b] = await Promise.all([exec('pass'), exec('pass')]);
    const started = Date.now();
    const results = await Promise.all([
      exec('import time; time.sleep(1)', { execution_session_id: a.session_id }),
      exec('import time; time.sleep(1)', { execution_session_id: b.session_id }),
    ]);
    expect(results.every((r) => r.success === true)).toBe(true);
    expect(Date.now() - started).toBeLessThan(1800);
  });

  it('serialises executions within one session', async () => {
    const s = await exec('log = []');
    const id = s.session_id;
    await Promise.all([
      exec("import time\nlog.append('a1'); time.sleep(0.3); log.append('a2')", { execution_session_id: id }),
      exec("log.append('b')", { execution_session_id: id }),
    ]);
    expect((await exec('log', { execution_session_id: id })).stdout).toBe("['a1', 'a2', 'b']\n");
  });

  it('returns the reference 429 payload when the session cap is reached', async () => {
    const small = await startExecutor({ config: { sessions: { max_sessions: 2 } } });
    const client = await v2Client(small.mcpUrl, 'auto');
    try {
      for (let i = 0; i < 2; i++) await client.call('execute_demo_code', { code: 'pass' });
      const r = await client.call('execute_demo_code', { code: 'pass' });
      expect(r.json).toEqual({
        success: false,
        error_type: 'max_sessions_reached',
        error: 'Maximum number of sessions (2) reached. Please close an existing session before creating a new one.',
        status_code: 429,
      });
    } finally {
      await client.close();
      await small.stop();
    }
  });

  it('refuses 3 MB of code before it reaches the kernel, and the session keeps its variables', async () => {
    const s = await exec('kept_big = 7');
    const code = 'x = 1\n'.repeat(500_000); // under server.max_body_mb (4 MiB) even JSON-escaped
    const r = await exec(code, { execution_session_id: s.session_id });
    expect(r).toMatchObject({ success: false, session_id: s.session_id });
    expect(r.error).toBe(
      'Code is 3,000,000 bytes; the limit is 1,048,576 bytes (execution.max_code_bytes). Nothing ran and the session is unchanged. ' +
        'Split the work into smaller cells, or write large data to a file and load it from the code.',
    );
    expect((await exec('kept_big', { execution_session_id: s.session_id })).stdout).toBe('7\n');
  });

  it('a cell too deeply nested for the parser fails with a clear message and the kernel keeps its variables', async () => {
    const s = await exec('kept_deep = 8');
    const r = await exec('-'.repeat(100_000) + '1', { execution_session_id: s.session_id });
    expect(r.success).toBe(false);
    expect(r.stderr).toBe(
      "MemoryError: This cell is too large or too deeply nested for Python's parser. Nothing ran and the session is unchanged; split the code into smaller cells, or load large data from a file.\n",
    );
    expect((await exec('kept_deep', { execution_session_id: s.session_id })).stdout).toBe('8\n');
  });

  it.each([
    ['a NUL byte', 'x = 1\u0000', 'SyntaxError: source code string cannot contain null bytes\n'],
    [
      'a lone surrogate',
      "s = '\ud800'",
      "UnicodeEncodeError: 'utf-8' codec can't encode character '\\ud800' in position 5: surrogates not allowed\n",
    ],
  ])('code with %s fails with the error line only: no internal path or driver frame', async (_what, code, stderr) => {
    const r = await exec(code);
    expect(r.success).toBe(false);
    expect(r.stderr).toBe(stderr);
  });

  it("a traceback shows the user's cell frames and no driver or interpreter path", async () => {
    const r = await exec("import json\ndef f():\n    return json.loads('{')\nf()");
    expect(r.stderr).toMatch(
      /^Traceback \(most recent call last\):\n {2}File "<cell-\d+>", line 4, in <module>\n {2}File "<cell-\d+>", line 3, in f\n/,
    );
    expect(r.stderr).toMatch(/json\.decoder\.JSONDecodeError: Expecting property name enclosed in double quotes/);
    expect(r.stderr).not.toMatch(/stoa_(driver|supervisor|transfer)/);
  });

  it('rejects a non-positive timeout and empty code with clear messages', async () => {
    expect((await exec('1', { timeout: 0 })).error).toBe('Timeout must be greater than 0 seconds.');
    expect((await exec('   ')).error).toBe('Code cannot be empty');
  });
});
