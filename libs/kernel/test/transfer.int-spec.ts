import { copyFile, mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  giveToKernel,
  KernelService,
  stashDir,
  type KernelDirs,
  type KernelProcess,
  type LoadResult,
  type Serializer,
} from '@stoa/kernel';
import { testKernelSandbox } from '../../../test/support/kernel-sandbox';

const HANDLE_LIMIT = 100_000;
let service: KernelService;

interface Kernel {
  kernel: KernelProcess;
  dirs: KernelDirs;
}

async function startKernel(): Promise<Kernel> {
  const dirs = service.allocateDirs();
  return { kernel: await service.start(dirs), dirs };
}

async function run(k: Kernel, code: string, rewrite?: Parameters<KernelProcess['execute']>[1]['rewrite']) {
  return k.kernel.execute(code, {
    timeoutMs: 20_000,
    graceMs: 2000,
    captureChars: 100_000,
    ...(rewrite ? { rewrite } : {}),
  });
}

/** What the host does for a transfer: the sender dumps into its transfer dir, the file is handed to the receiver. */
async function send(
  from: Kernel,
  name: string,
  to: Kernel,
  toName = name,
  loadTimeoutMs = 20_000,
): Promise<{ serializer: Serializer; load: LoadResult }> {
  const out = join(from.dirs.transferDir, `${name}.pkl`);
  const dumped = await from.kernel.dump(name, out, 20_000);
  expect(dumped.error).toBeUndefined();
  const serializer = dumped.serializer!;
  const target = join(to.dirs.transferDir, `in-${name}.pkl`);
  await copyFile(out, target);
  await giveToKernel(target, to.dirs);
  return { serializer, load: await to.kernel.load(toName, target, serializer, loadTimeoutMs) };
}

beforeAll(async () => {
  service = new KernelService({
    python: 'python3',
    env: {},
    passthroughEnv: [],
    startTimeoutMs: 20_000,
    ...testKernelSandbox(),
    dataDir: await mkdtemp(join(tmpdir(), 'stoa-transfer-')),
    handleMaxBytes: HANDLE_LIMIT,
  });
});
afterAll(async () => {
  await service.onApplicationShutdown();
});

describe('object transfer between kernels (real Python)', () => {
  let a: Kernel;
  let b: Kernel;

  beforeAll(async () => {
    [a, b] = await Promise.all([startKernel(), startKernel()]);
  });

  it('moves a numpy array from one kernel to another', async () => {
    await run(a, 'import numpy as np\narr = np.arange(12, dtype="float32").reshape(3, 4)');
    const { load } = await send(a, 'arr', b);
    expect(load).toEqual({ ok: true });
    expect((await run(b, 'print(type(arr).__name__, arr.dtype, arr.shape, float(arr.sum()))')).stdout.text()).toBe(
      'ndarray float32 (3, 4) 66.0\n',
    );
  });

  it('moves a dict under another variable name and reports serializer and size', async () => {
    await run(a, "cfg = {'a': [1, 2], 'b': {'c': 'é'}}");
    const out = join(a.dirs.transferDir, 'cfg.pkl');
    const dumped = await a.kernel.dump('cfg', out, 10_000);
    expect(dumped).toEqual({
      found: true,
      serializer: expect.stringMatching(/^(pickle|cloudpickle|dill)$/),
      sizeBytes: (await stat(out)).size,
    });
    const { load } = await send(a, 'cfg', b, 'received');
    expect(load).toEqual({ ok: true });
    expect((await run(b, 'print(received)')).stdout.text()).toBe("{'a': [1, 2], 'b': {'c': 'é'}}\n");
  });

  it('reports a missing variable as not found', async () => {
    expect(await a.kernel.dump('no_such_variable', join(a.dirs.transferDir, 'x.pkl'), 10_000)).toEqual({
      found: false,
    });
  });

  it('reports a value that cannot be serialised with its type', async () => {
    await run(a, 'import threading\nlock = threading.Lock()');
    const r = await a.kernel.dump('lock', join(a.dirs.transferDir, 'lock.pkl'), 10_000);
    expect(r.found).toBe(true);
    expect(r.error).toMatch(/^TypeError: .*lock/);
  });

  it('moves an instance of a class defined in a cell by value with the best serializer (cloudpickle or dill)', async () => {
    await run(
      a,
      'class Point:\n    def __init__(self, x, y): self.x, self.y = x, y\n    def norm2(self): return self.x ** 2 + self.y ** 2\np = Point(3, 4)',
    );
    const { serializer, load } = await send(a, 'p', b);
    expect(serializer).not.toBe('pickle'); // this interpreter has cloudpickle
    expect(load).toEqual({ ok: true });
    expect((await run(b, 'print(p.norm2())')).stdout.text()).toBe('25\n');
  });

  it('with plain pickle, an instance needs its class defined in the receiving kernel, and says so', async () => {
    const [sender, receiver] = await Promise.all([startKernel(), startKernel()]);
    await run(
      sender,
      "import sys\nsys.modules['dill'] = sys.modules['cloudpickle'] = None  # as in an environment without them\nclass Point:\n    def __init__(self, x): self.x = x\np = Point(5)",
    );
    const { serializer, load } = await send(sender, 'p', receiver);
    expect(serializer).toBe('pickle');
    expect(load.ok).toBe(false);
    const error = load.ok ? '' : load.error;
    expect(error).toContain("AttributeError: Can't get attribute 'Point' on <module '__main__'");
    expect(error).toContain('run the same definition in this kernel first');
    expect(error).toContain('The sender used plain pickle');
    expect(error).not.toContain('stoa_transfer.py');
    await run(receiver, 'class Point:\n    def __init__(self, x): self.x = x');
    expect(await receiver.kernel.load('p', join(receiver.dirs.transferDir, 'in-p.pkl'), 'pickle', 10_000)).toEqual({
      ok: true,
    });
    expect((await run(receiver, 'print(p.x)')).stdout.text()).toBe('5\n');
  });

  it('names the serializer to install when the receiver lacks it', async () => {
    await run(a, 'class Tagged:\n    pass\ntagged = Tagged()');
    const out = join(a.dirs.transferDir, 'tagged.pkl');
    const dumped = await a.kernel.dump('tagged', out, 10_000);
    expect(dumped.serializer).toBe('cloudpickle');
    const receiver = await startKernel();
    await run(receiver, "import sys\nsys.modules['cloudpickle'] = None");
    const target = join(receiver.dirs.transferDir, 'tagged.pkl');
    await copyFile(out, target);
    await giveToKernel(target, receiver.dirs);
    const r = await receiver.kernel.load('tagged', target, 'cloudpickle', 10_000);
    expect(r.ok).toBe(false);
    expect(r.ok ? '' : r.error).toMatch(
      /ModuleNotFoundError: The sending kernel serialised this object with cloudpickle, .*Install cloudpickle in this kernel's environment/,
    );
  });

  it('interrupts a slow __setstate__ on timeout and keeps the receiving kernel', async () => {
    await run(
      a,
      'import time\nclass Slow:\n    def __setstate__(self, state):\n        while True: time.sleep(0.05)\nslow = Slow()\nslow.state = 1',
    );
    await run(b, 'kept = 11');
    const { load } = await send(a, 'slow', b, 'slow', 500);
    expect(load).toEqual({
      ok: false,
      error: "Loading 'slow' did not finish within 0.5s and was interrupted; the kernel and its variables are kept.",
    });
    expect(b.kernel.alive).toBe(true);
    expect((await run(b, "print(kept, 'slow' in globals())")).stdout.text()).toBe('11 False\n');
  });
});

describe('asset tags and handle ids in code (real Python)', () => {
  let k: Kernel;
  const tag = '<local>/data/in.csv</local>';
  const handle = 'h_0123456789ab';

  beforeAll(async () => {
    k = await startKernel();
  });

  it('lists the literals the kernel would replace', async () => {
    const code = `x = "${tag}"\n"${tag}"\ny = f("${handle}", "<local>/other")\nif "<local>/no":\n    pass`;
    expect(await k.kernel.literals(code, 5000)).toEqual([tag, handle, '<local>/other']);
    expect(await k.kernel.literals('x = (', 5000)).toEqual([]);
  });

  it('replaces an asset tag by a pathlib.Path, keeping the line numbers of the user code', async () => {
    const r = await run(k, `p = "${tag}"\nprint(type(p).__name__, p)\n1/0`, {
      [tag]: { kind: 'path', path: '/cache/in.csv' },
    });
    expect(r.stdout.text()).toBe('PosixPath /cache/in.csv\n');
    expect(r.stderr.text()).toMatch(/File "<cell-\d+>", line 3, in <module>/);
  });

  it('replaces a handle id by the object loaded from its file', async () => {
    const src = await startKernel();
    await run(src, "import numpy as np\nobj = {'rows': np.ones(3)}");
    const out = join(src.dirs.transferDir, 'obj.pkl');
    const dumped = await src.kernel.dump('obj', out, 10_000);
    const target = join(k.dirs.transferDir, 'h.pkl');
    await copyFile(out, target);
    await giveToKernel(target, k.dirs);
    const r = await run(k, `df = "${handle}"\nprint(float(df['rows'].sum()))`, {
      [handle]: { kind: 'object', path: target, serializer: dumped.serializer! },
    });
    expect(r.raised).toBe(false);
    expect(r.stdout.text()).toBe('3.0\n');
  });

  it('refuses a bad rewrite mapping with a clear message and runs nothing', async () => {
    const r = await run(k, `ran = "${handle}"`, {
      [handle]: { kind: 'object', path: '/x.pkl', serializer: 'marshal' as Serializer },
    });
    expect(r.raised).toBe(true);
    expect(r.error).toMatch(
      /^Could not substitute the asset tags and handle ids in this code \(ValueError: rewrite: object 'h_0123456789ab' has serializer 'marshal'.*Nothing ran\./,
    );
    expect((await run(k, "print('ran' in globals())")).stdout.text()).toBe('False\n');
  });

  it('screens the original code, not the substituted paths', async () => {
    const r = await k.kernel.execute(`p = "${tag}"\nprint(p)`, {
      timeoutMs: 10_000,
      graceMs: 1000,
      captureChars: 10_000,
      screen: { allowed_prefixes: ['/tmp'] },
      rewrite: { [tag]: { kind: 'path', path: '/etc/hosts' } },
    });
    expect(r.rejected).toBeUndefined();
    expect(r.stdout.text()).toBe('/etc/hosts\n');
  });
});

describe('stash(obj) handles (real Python)', () => {
  let k: Kernel;

  beforeAll(async () => {
    k = await startKernel();
  });

  it('saves the object under a new handle id, reports it in the result and writes a sidecar', async () => {
    const r = await run(k, "h = stash({'a': 1})\nprint(h)");
    const id = r.stdout.text().trim();
    expect(id).toMatch(/^h_[0-9a-f]{12}$/);
    expect(r.stashed).toEqual([id]);
    const meta = JSON.parse(await readFile(join(stashDir(k.dirs), `${id}.json`), 'utf8')) as {
      serializer: string;
      size: number;
      type: string;
    };
    expect(meta).toEqual({
      serializer: expect.stringMatching(/^(pickle|cloudpickle|dill)$/),
      size: (await stat(join(stashDir(k.dirs), `${id}.pkl`))).size,
      type: 'dict',
    });
    expect((await run(k, 'x = 1')).stashed).toEqual([]);
  });

  it('refuses an object over the handle limit with what to do instead', async () => {
    const r = await run(k, `stash(b'x' * ${HANDLE_LIMIT * 2})`);
    expect(r.raised).toBe(true);
    expect(r.stderr.text()).toMatch(
      new RegExp(
        `ValueError: stash: object serialises to \\d+ bytes, over the ${HANDLE_LIMIT}-byte handle limit\\. Stash a smaller object \\(e\\.g\\. a summary or a subset\\) or write a file to AGORA_OUTPUT_DIR instead\\.`,
      ),
    );
    expect(r.stashed).toEqual([]);
  });

  it('is hidden from inspect like the other helpers', async () => {
    const names = await k.kernel.inspect(5000);
    expect(names).toBeDefined();
    expect(Object.keys(names ?? {})).not.toContain('stash');
  });
});
