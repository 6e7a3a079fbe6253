import { chmodSync, mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KernelService, type KernelProcess } from '@stoa/kernel';
import { buildCatalog, kernelToolSpecs } from '@stoa/tools';
import { testKernelSandbox } from '../../../test/support/kernel-sandbox';

const root = mkdtempSync(join(tmpdir(), 'stoa-tools-'));
chmodSync(root, 0o755); // kernels run as their own uid when tests run as root
mkdirSync(join(root, 'toypkg'));
writeFileSync(join(root, 'toypkg', '__init__.py'), '');
writeFileSync(
  join(root, 'toypkg', 'ops.py'),
  [
    'import time',
    'class Thing:',
    '    pass',
    'def add(a, b=1):',
    '    return a + b',
    'def make_thing(label):',
    '    return Thing()',
    'def same(x):',
    '    return x',
    'def boom(reason):',
    '    raise ValueError(reason)',
    'def slow(tag):',
    '    time.sleep(0.2)',
    '    return tag',
  ].join('\n'),
);

const { tools } = buildCatalog(
  {
    tools: [
      {
        name: 'add',
        description: 'Add two numbers.',
        module: 'toypkg.ops',
        parameters: [
          { name: 'a', type: 'int', description: 'first' },
          { name: 'b', type: 'int', default: 1, description: 'second' },
        ],
        returns: { name: 'sum', type: 'int', description: 'the sum' },
      },
      {
        name: 'make_thing',
        description: 'Make a thing.',
        module: 'toypkg.ops',
        parameters: [{ name: 'label', type: 'str' }],
        returns: { name: 'thing', type: 'toypkg.ops.Thing' },
      },
      { name: 'same', description: 'Identity.', module: 'toypkg.ops', parameters: [{ name: 'x', type: 'object' }] },
      {
        name: 'boom',
        description: 'Always fails.',
        module: 'toypkg.ops',
        parameters: [{ name: 'reason', type: 'str' }],
      },
      { name: 'slow', description: 'Sleeps.', module: 'toypkg.ops', parameters: [{ name: 'tag', type: 'str' }] },
      { name: 'ghost', description: 'Not implemented anywhere.', module: 'toypkg.missing', parameters: [] },
    ],
  },
  'test',
);
const specs = kernelToolSpecs({ serverName: 't', tools, states: [], skills: [] });

const service = new KernelService({
  python: 'python3',
  env: { PYTHONPATH: root },
  passthroughEnv: [],
  startTimeoutMs: 20_000,
  ...testKernelSandbox(),
  dataDir: mkdtempSync(join(tmpdir(), 'stoa-kernels-')),
  bootstrap: (k) => k.installTools(specs, 20_000),
});
const run = (k: KernelProcess, code: string, policy?: { allowed?: string[]; blocked?: string[] }) =>
  k.execute(code, { timeoutMs: 10_000, graceMs: 1000, captureChars: 100_000, policy });

describe('tool proxies in a real kernel', () => {
  let k: KernelProcess;
  beforeAll(async () => {
    k = await service.start(service.allocateDirs());
  });
  afterAll(async () => {
    await service.onApplicationShutdown();
  });

  it('carries the manifest signature and docstring', async () => {
    const r = await run(k, 'import inspect\nprint(inspect.signature(add))\nprint(add.__doc__)');
    expect(r.stdout.text()).toBe(
      '(a: int, b: int = 1) -> int\nAdd two numbers.\n\nArgs:\n    a (int): first\n    b (int): second\n\nReturns:\n    int: the sum\n',
    );
  });

  it('traces calls of this execution only, with args, result and timing', async () => {
    await run(k, 'add(1)');
    const r = await run(k, 'add(2, b=5)');
    expect(r.stdout.text()).toBe('7\n');
    expect(r.toolCalls).toHaveLength(1);
    expect(r.toolCalls[0]).toMatchObject({
      tool_name: 'add',
      args: { a: 2, b: 5 },
      result: 7,
      success: true,
      error: null,
    });
    expect(r.toolCalls[0]?.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it('names non-JSON values by stable identity references', async () => {
    const r = await run(k, "t = make_thing('x')\nsame(t)\nsame(t)\nsame(object())");
    expect(r.toolCalls.map((c) => c.result)).toEqual(['<Thing@1>', '<Thing@1>', '<Thing@1>', '<object@2>']);
    expect(r.toolCalls[1]?.args).toEqual({ x: '<Thing@1>' });
  });

  it('records failures and re-raises them to the caller', async () => {
    const r = await run(k, "boom('bad input')");
    expect(r.raised).toBe(true);
    expect(r.stderr.text()).toContain('ValueError: bad input');
    expect(r.toolCalls[0]).toMatchObject({
      tool_name: 'boom',
      success: false,
      error: 'ValueError: bad input',
      result: {},
    });
  });

  it('explains a missing implementation with the reference ImportError', async () => {
    const r = await run(k, 'ghost()');
    expect(r.stderr.text()).toContain(
      "ImportError: Could not import tool 'ghost' from 'toypkg.missing'. Expected: function 'ghost' in module 'toypkg/missing.py'. Hint: set module or module_override",
    );
  });

  it('prints every tool with list_tools()', async () => {
    const r = await run(k, 'list_tools()');
    expect(r.stdout.text()).toContain('Available tools:\n  add(a: int, b: int = 1) -> int\n      Add two numbers.\n');
    expect(r.stdout.text()).toContain('  make_thing(label: str) -> toypkg.ops.Thing');
  });

  it('enforces a domain-function policy inside the proxy, leaving the rest of the cell working', async () => {
    const r = await run(k, "print(add(1, 1))\ntry:\n    boom('x')\nexcept PermissionError as e:\n    print(e)", {
      blocked: ['bo*'],
    });
    expect(r.stdout.text()).toBe("2\nTool function 'boom' is blocked by this server's policy (blocked_functions).\n");
  });

  it('keeps traces apart when two kernels call tools concurrently', async () => {
    const other = await service.start(service.allocateDirs());
    const [a, b] = await Promise.all([run(k, "slow('a'); add(10)"), run(other, "slow('b'); add(20)")]);
    expect(a.toolCalls.map((c) => c.args)).toEqual([{ tag: 'a' }, { a: 10 }]);
    expect(b.toolCalls.map((c) => c.args)).toEqual([{ tag: 'b' }, { a: 20 }]);
  });

  it('hides injected helpers from inspect but shows user variables', async () => {
    await run(k, 'mine = 3');
    const ns = await k.inspect(5000);
    expect(ns).toHaveProperty('mine');
    expect(ns).not.toHaveProperty('add');
    expect(ns).not.toHaveProperty('list_tools');
  });

  it('keeps the first 100 call records and counts the rest per tool', async () => {
    const r = await run(k, 'for i in range(150): add(i)\nsame(1)');
    expect(r.toolCalls).toHaveLength(100);
    expect(r.toolCalls[99]).toMatchObject({ tool_name: 'add', args: { a: 99 } });
    expect(r.toolCallsDropped).toEqual({ add: 50, same: 1 });
  });
});
