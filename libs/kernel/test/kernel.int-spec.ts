import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecutionOutcome, KernelService, type KernelProcess } from '@stoa/kernel';
import { testKernelSettings } from '../../../test/support/kernel-sandbox';

const service = new KernelService(testKernelSettings());
const run = (k: KernelProcess, code: string, timeoutMs = 10_000, graceMs = 2_000) =>
  k.execute(code, { timeoutMs, graceMs, captureChars: 100_000 });

describe('KernelProcess (real Python)', () => {
  let kernel: KernelProcess;

  beforeAll(async () => {
    kernel = await service.start(service.allocateDirs());
  });
  afterAll(async () => {
    await service.onApplicationShutdown();
  });

  it('keeps the namespace across executions and shows a trailing expression', async () => {
    await run(kernel, 'x = 41');
    const r = await run(kernel, 'x + 1');
    expect(r.outcome).toBe(ExecutionOutcome.completed);
    expect(r.stdout.text()).toBe('42\n');
    expect(r.raised).toBe(false);
  });

  it('captures fd-level writes of os.write and child processes in order', async () => {
    const r = await run(
      kernel,
      "import os, subprocess\nprint('a')\nos.write(1, b'b\\n')\nsubprocess.run(['echo', 'c'])\nprint('d')",
    );
    expect(r.stdout.text()).toBe('a\nb\nc\nd\n');
  });

  it('reports a traceback without ANSI codes in stderr', async () => {
    const r = await run(kernel, '1/0');
    expect(r.raised).toBe(true);
    expect(r.stderr.text()).toContain('ZeroDivisionError: division by zero');
    expect(r.stderr.text()).not.toContain('\u001b[');
    expect(r.stderr.text()).not.toContain('stoa_driver.py');
  });

  it("gives user code none of the host's pipes: writing to fds 3, 4 and 5 fails with EBADF", async () => {
    const r = await run(
      kernel,
      "import os\nout = []\nfor fd in (3, 4, 5):\n    try:\n        os.write(fd, b'x\\n'); out.append('wrote')\n    except OSError as e:\n        out.append(e.errno)\nprint(out)",
    );
    expect(r.stdout.text()).toBe('[9, 9, 9]\n');
    expect((await run(kernel, '1 + 1')).stdout.text()).toBe('2\n');
  });

  it('reads a variable in the same round trip as the cell: JSON, else its repr; nothing when it raised', async () => {
    const capture = (code: string, name: string) =>
      kernel.execute(code, { timeoutMs: 10_000, graceMs: 2_000, captureChars: 1000, capture: name });
    expect((await capture('r = {"a": [1, 2.5]}', 'r')).captured).toEqual({ kind: 'json', value: { a: [1, 2.5] } });
    expect((await capture('r = {1, 2}', 'r')).captured).toEqual({ kind: 'repr', value: '{1, 2}' });
    expect((await capture('pass', 'nowhere')).captured).toBeUndefined();
    const raised = await capture('r = 5\n1/0', 'r');
    expect(raised.raised).toBe(true);
    expect(raised.captured).toBeUndefined();
  });

  it('keeps the result of a cell whose captured variable is over the reply limit, without the capture', async () => {
    const r = await kernel.execute("big = 'x' * (17 << 20)\nprint('done')", {
      timeoutMs: 20_000,
      graceMs: 2_000,
      captureChars: 1000,
      capture: 'big',
    });
    expect(r.raised).toBe(false);
    expect(r.stdout.text()).toBe('done\n');
    expect(r.captured).toBeUndefined();
  });

  it('leaves nothing in the namespace after a warm-up, and the next cell is numbered as the first', async () => {
    const fresh = await service.start(service.allocateDirs());
    try {
      expect(await fresh.warm(10_000)).toBeUndefined();
      const r = await run(fresh, 'print(sorted(k for k in globals() if not k.startswith("__")))\n1/0');
      expect(r.stderr.text()).toContain('File "<cell-1>", line 2');
      expect(r.stdout.text()).toMatch(/^\[.*'display'.*\]\n$/);
      expect(r.stdout.text()).not.toContain("'_'");
    } finally {
      await fresh.close();
    }
  });

  it('warms up and answers a cell on 45 new kernels in a row, each within 5 s', async () => {
    // Soak test of a new kernel's first commands: the announcement of the first batch and the first answers reach the
    // supervisor in the same wake-ups (it once blocked reading an announcement it had already taken, ~1 kernel in 30).
    for (let round = 0; round < 15; round++) {
      const fresh = await Promise.all([0, 1, 2].map(() => service.start(service.allocateDirs())));
      try {
        const runs = await Promise.all(
          fresh.map(async (k) => [await k.warm(5_000), await run(k, 'n = 1\nn + 1', 5_000)] as const),
        );
        expect(runs.map(([warm, r]) => [warm, r.outcome, r.stdout.text()])).toEqual(
          Array(3).fill([undefined, 'completed', '2\n']),
        );
      } finally {
        await Promise.all(fresh.map((k) => k.close()));
      }
    }
  }, 60_000);

  it('interrupts on timeout and keeps the namespace', async () => {
    await run(kernel, 'kept = 7');
    const r = await run(kernel, 'import time\nwhile True: time.sleep(0.05)', 500);
    expect(r.outcome).toBe(ExecutionOutcome.interrupted);
    expect(r.stderr.text()).toContain('KeyboardInterrupt');
    expect((await run(kernel, 'kept')).stdout.text()).toBe('7\n');
  });

  it('kills a kernel that ignores SIGINT', async () => {
    const k = await service.start(service.allocateDirs());
    const r = await run(
      k,
      'import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: time.sleep(0.05)',
      300,
      300,
    );
    expect(r.outcome).toBe(ExecutionOutcome.killed);
    expect(k.alive).toBe(false);
  });

  it('detects os._exit and a segfault at once', async () => {
    const k1 = await service.start(service.allocateDirs());
    const r1 = await run(k1, "print('bye')\nimport os; os._exit(3)");
    expect(r1.outcome).toBe(ExecutionOutcome.died);
    expect(r1.exit).toEqual({ code: 3, signal: null });
    expect(r1.stdout.text()).toBe('bye\n');
    const k2 = await service.start(service.allocateDirs());
    const r2 = await run(k2, 'import ctypes; ctypes.string_at(0)');
    expect(r2.outcome).toBe(ExecutionOutcome.died);
    expect(r2.exit?.signal).toBe('SIGSEGV');
    expect(r2.durationMs).toBeLessThan(3000);
  });

  it('captures PNG and SVG displays (never HTML) without printing them to stdout', async () => {
    const r = await run(
      kernel,
      [
        'class Pic:',
        "    def _repr_png_(self): return b'\\x89PNG-fake'",
        'class Vec:',
        "    def _repr_svg_(self): return '<svg/>'",
        "    def _repr_html_(self): return '<script>x</script>'",
        'display(Pic())',
        'Vec()',
      ].join('\n'),
    );
    expect(r.displays.map((d) => d.mime_type)).toEqual(['image/png', 'image/svg+xml']);
    expect(Buffer.from(r.displays[0]?.data ?? '', 'base64').toString('latin1')).toBe('\x89PNG-fake');
    expect(r.displays[1]?.data).toBe('<svg/>');
    expect(JSON.stringify(r.displays)).not.toContain('<script>');
  });

  it('defines AGORA_OUTPUT_DIR and agora_output(name) in the namespace', async () => {
    const r = await run(
      kernel,
      "print(AGORA_OUTPUT_DIR == os.environ['AGORA_OUTPUT_DIR'], agora_output('a.csv') == os.path.join(AGORA_OUTPUT_DIR, 'a.csv'))",
    );
    expect(r.stdout.text()).toBe('True True\n');
  });
});
