import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { connect, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { settlesWithin } from '@stoa/core';
import { KernelLauncher } from '../src/kernel-launcher';
import { driverPath, resolvePython } from '../src/python';
import type { LaunchSpec } from '../src/sandbox';
import { descendants } from '../../../test/support/processes';

const python = resolvePython(process.env.STOA_PYTHON ?? 'python3').executable;
const launcher = new KernelLauncher(python, join(dirname(driverPath()), 'stoa_launcher.py'));

/** A stand-in kernel: Python running `code` with the fds a kernel gets (3 commands, 4 replies, 5 control, 6 user). */
function spec(code: string, env: Record<string, string> = {}): LaunchSpec {
  return { file: python, args: ['-S', '-c', code], cwd: tmpdir(), env, wrapped: false };
}

function text(s: Socket): Promise<string> {
  return new Promise((resolve) => {
    let out = '';
    s.on('data', (c: Buffer) => (out += c.toString()));
    s.once('end', () => resolve(out));
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
  } catch {
    return false;
  }
}

function launcherPid(): number | undefined {
  return descendants(process.pid).find((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('stoa_launcher.py');
    } catch {
      return false;
    }
  });
}

describe('kernel launcher (a real Python launcher and real processes)', () => {
  afterAll(() => launcher.close());

  it('wires fds 1-6 as a kernel expects, passes only the given environment and reports the exit code', async () => {
    const k = await launcher.spawn(
      spec(
        [
          'import os',
          'line = os.read(3, 100) + os.read(5, 100) + os.read(6, 100)',
          'os.write(4, line)',
          "os.write(1, b'out')",
          "os.write(2, b' err')",
          'raise SystemExit(7)',
        ].join('\n'),
        { ONLY_THIS: '1' },
      ),
      5000,
    );
    expect(k.pid).toBeGreaterThan(1);
    const replies = text(k.replies);
    const output = text(k.output);
    k.commands.write('a');
    await new Promise((r) => setTimeout(r, 20)); // in order: each os.read takes what is there
    k.control.write('b');
    await new Promise((r) => setTimeout(r, 20));
    k.userCommands.write('c');
    expect(await k.exited).toEqual({ code: 7, signal: null });
    expect(await replies).toBe('abc');
    expect(await output).toBe('out err');
  });

  it("passes exactly the given environment: none of the host's or the launcher's", async () => {
    const k = await launcher.spawn({ ...spec(''), file: '/usr/bin/env', args: [], env: { ONLY_THIS: '1' } }, 5000);
    const output = text(k.output);
    expect(await k.exited).toEqual({ code: 0, signal: null });
    expect(await output).toBe('ONLY_THIS=1\n');
  });

  it("has written the bytecode of the kernel's modules before its first kernel ran (kernels cannot write it)", async () => {
    const k = await launcher.spawn(spec(''), 5000);
    expect(await k.exited).toEqual({ code: 0, signal: null });
    // What the import system checks before it loads a cached module instead of compiling it: the file exists for
    // this interpreter, with the source's mtime and size.
    const check = [
      'import importlib.util, os, sys',
      'sys.path.insert(0, sys.argv[1]); import stoa_launcher',
      'for name in stoa_launcher.KERNEL_MODULES:',
      '    src = os.path.join(sys.argv[1], name + ".py"); st = os.stat(src)',
      '    head = open(importlib.util.cache_from_source(src), "rb").read(16)',
      '    assert head[:4] == importlib.util.MAGIC_NUMBER, name',
      '    assert int.from_bytes(head[8:12], "little") == int(st.st_mtime) & 0xFFFFFFFF, name',
      '    assert int.from_bytes(head[12:16], "little") == st.st_size, name',
      'print("ok")',
    ].join('\n');
    const r = spawnSync(python, ['-I', '-B', '-c', check, dirname(driverPath())], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('ok\n');
  });

  it('gives the kernel one direction per descriptor: it cannot write to the host on fds 3, 5, 6 or read fd 4', async () => {
    const k = await launcher.spawn(
      spec(
        [
          'import os',
          'res = []',
          'for fd in (3, 5, 6):',
          '    try:',
          "        os.write(fd, b'forged')",
          "        res.append('wrote')",
          '    except OSError as e:',
          '        res.append(type(e).__name__)',
          'res.append(repr(os.read(4, 10)))',
          "os.write(4, ' '.join(res).encode())",
        ].join('\n'),
      ),
      5000,
    );
    const got: Buffer[] = [];
    for (const s of [k.commands, k.control, k.userCommands]) s.on('data', (c: Buffer) => got.push(c));
    const replies = text(k.replies);
    expect(await k.exited).toEqual({ code: 0, signal: null });
    expect(await replies).toBe("BrokenPipeError BrokenPipeError BrokenPipeError b''");
    expect(Buffer.concat(got).length).toBe(0);
  });

  it('reports a kernel killed by a signal, and its process group is its own', async () => {
    const k = await launcher.spawn(spec('import os, time\nos.write(4, b"%d" % os.getpgrp())\ntime.sleep(60)'), 5000);
    const pgid = await new Promise<string>((resolve) => k.replies.once('data', (c: Buffer) => resolve(c.toString())));
    expect(Number(pgid)).toBe(k.pid);
    process.kill(-k.pid, 'SIGKILL');
    expect(await k.exited).toEqual({ code: null, signal: 'SIGKILL' });
  });

  it('rejects a program that cannot start with the reason, and keeps serving', async () => {
    await expect(launcher.spawn({ ...spec(''), file: '/nonexistent/python' }, 5000)).rejects.toThrow(
      /Cannot start the kernel: spawn \/nonexistent\/python ENOENT/,
    );
    const k = await launcher.spawn(spec('pass'), 5000);
    expect(await k.exited).toEqual({ code: 0, signal: null });
  });

  it('hands over the exit of a kernel that died before all its descriptors were taken in', async () => {
    const marker = join(mkdtempSync(join(tmpdir(), 'stoa-launcher-')), 'exiting');
    const started = launcher.spawn(spec(`open(${JSON.stringify(marker)}, 'w').close()\nraise SystemExit(3)`), 5000);
    await new Promise((resolve) => setImmediate(resolve)); // the request is written (not answered yet)
    // The event loop stays busy until the kernel has exited and been reaped, so its pid, its exit and its five
    // connections all wait to be read together.
    const deadline = performance.now() + 10_000;
    while (!existsSync(marker) && performance.now() < deadline) {
      /* busy */
    }
    const until = performance.now() + 300;
    while (performance.now() < until) {
      /* busy */
    }
    const k = await started;
    expect(await settlesWithin(k.exited, 2000)).toBe(true);
    expect(await k.exited).toEqual({ code: 3, signal: null });
  });

  it('fails only the start of a request it cannot run (a NUL in an argument), and keeps serving', async () => {
    await expect(launcher.spawn({ ...spec(''), args: ['-c', 'pass\0'] }, 5000)).rejects.toThrow(
      /Cannot start the kernel: spawn .* failed: ValueError/,
    );
    const k = await launcher.spawn(spec('pass'), 5000);
    expect(await k.exited).toEqual({ code: 0, signal: null });
  });

  it('closes a connection to its socket that does not open with a pending token', async () => {
    await launcher.spawn(spec('pass'), 5000);
    const socketPath = readFileSync(`/proc/${launcherPid()}/cmdline`, 'utf8').split('\0')[4]!;
    expect(socketPath).toMatch(/stoa-launch-.*l\.sock$/);
    const forged = connect(socketPath);
    forged.on('error', () => undefined);
    forged.write(`${'x'.repeat(32)}r` + 'forged reply');
    await new Promise((resolve) => forged.once('close', resolve));
    expect(forged.bytesRead).toBe(0);
  });

  it('when the launcher dies, its kernels are reported killed (and are), and the next spawn starts a new one', async () => {
    const k = await launcher.spawn(spec('import time\ntime.sleep(60)'), 5000);
    const first = launcherPid();
    expect(first).toBeDefined();
    process.kill(first!, 'SIGKILL');
    expect(await k.exited).toEqual({ code: null, signal: 'SIGKILL' });
    await expect.poll(() => alive(k.pid)).toBe(false);
    const next = await launcher.spawn(spec('pass'), 5000);
    expect(await next.exited).toEqual({ code: 0, signal: null });
    expect(launcherPid()).not.toBe(first);
  });

  it('keeps its socket in a private directory named after the server, and removes those of servers that died', async () => {
    const dead = spawnSync('true').pid; // reaped: its pid names no process now
    const stale = join(tmpdir(), `stoa-launch-${dead}-stale`);
    const live = join(tmpdir(), 'stoa-launch-1-keep'); // pid 1 is alive
    for (const dir of [stale, live]) mkdirSync(dir, { recursive: true });
    const own = new KernelLauncher(python, join(dirname(driverPath()), 'stoa_launcher.py'));
    try {
      const k = await own.spawn(spec('pass'), 5000);
      await k.exited;
      expect(existsSync(stale)).toBe(false);
      expect(existsSync(live)).toBe(true);
      const mine = readdirSync(tmpdir()).filter((n) => n.startsWith(`stoa-launch-${process.pid}-`));
      expect(mine.length).toBeGreaterThanOrEqual(1);
      for (const n of mine) expect(statSync(join(tmpdir(), n)).mode & 0o777).toBe(0o700);
    } finally {
      await own.close();
      rmSync(live, { recursive: true, force: true });
    }
  });

  it('close() ends the launcher and kills the kernels it still has', async () => {
    const own = new KernelLauncher(python, join(dirname(driverPath()), 'stoa_launcher.py'));
    const k = await own.spawn(spec('import time\ntime.sleep(60)'), 5000);
    await own.close();
    await expect.poll(() => alive(k.pid)).toBe(false);
    expect(await k.exited).toEqual({ code: null, signal: 'SIGKILL' });
    await expect(own.spawn(spec('pass'), 5000)).rejects.toThrow(/the server is shutting down/);
  });
});
