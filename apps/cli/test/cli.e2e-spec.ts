import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { type AppProcess, shutDown, spawnApp } from '../../../test/support/app-process';
import { EXECUTOR_MAIN, ROOT, STOA_BIN } from '../../../test/support/paths';
import { freePort } from '../../../test/support/ports';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `npx stoa …` (the bin) as a user would; resolves with the exit code and both streams. */
async function stoa(args: string[], cwd: string): Promise<Run> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [STOA_BIN, ...args], {
      cwd,
      timeout: 120_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('stoa init server → start → stoa call', () => {
  const work = mkdtempSync(join(tmpdir(), 'stoa-cli-'));
  let server: AppProcess | undefined;
  let init: Run;

  beforeAll(async () => {
    init = await stoa(['init', 'server', 'lab'], work);
    server = await spawnApp({
      what: 'scaffolded executor',
      main: EXECUTOR_MAIN,
      configFile: join(work, 'lab', 'server.yaml'),
      port: await freePort(),
      env: { STOA_DATA_DIR: join(work, 'data') },
    });
  });
  afterAll(() => shutDown(server));

  it('scaffolds server.yaml, tools.yaml, a tools package and a skill', () => {
    expect(init.code).toBe(0);
    for (const file of ['server.yaml', 'tools.yaml', 'skills/getting-started.md', 'lab_tools/greet.py'])
      expect(init.stdout).toContain(join(work, 'lab', file));
  });

  it('lists the scaffolded server tools', async () => {
    const listed = await stoa(['tools', server!.url], work);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^execute_lab_code\s+lab code-execution server$/m);
    expect(listed.stdout).toMatch(/^load_lab_skill\s/m);
  });

  it('runs code that calls the scaffolded tool and prints the JSON result', async () => {
    const called = await stoa(['call', server!.mcpUrl, 'execute_lab_code', 'code=greet("Ada", excited=True)'], work);
    expect(called.code).toBe(0);
    const result = JSON.parse(called.stdout) as {
      success: boolean;
      stdout: string;
      tool_calls: { tool_name: string }[];
    };
    expect(result.success).toBe(true);
    expect(result.stdout).toContain("'Hello, Ada!'");
    expect(result.tool_calls.map((c) => c.tool_name)).toEqual(['greet']);
  });

  it('exits 1 with the tool error JSON when the tool fails', async () => {
    const called = await stoa(['call', server!.url, 'lab_close_session', 'session_id=s-unknown'], work);
    expect(called.code).toBe(1);
    expect(JSON.parse(called.stdout)).toMatchObject({ success: false });
  });

  it('warms the scaffolded server with progress lines and exits 0', async () => {
    const warmed = await stoa(['warm', join('lab', 'server.yaml')], work);
    expect(warmed.code).toBe(0);
    expect(warmed.stderr).toMatch(/^… Warming lab\/server.yaml$/m);
    expect(warmed.stderr).toMatch(/^✓ Warming lab\/server.yaml \(\d+\.\d s\)$/m);
  });
});

describe('stoa tools import', () => {
  const work = mkdtempSync(join(tmpdir(), 'stoa-import-'));
  writeFileSync(
    join(work, 'geo.py'),
    [
      'import datetime',
      'from typing import Optional',
      '',
      'def distance(lat1: float, lon1: float, unit: str = "km") -> float:',
      '    """Great-circle distance to the origin.',
      '',
      '    Args:',
      '        lat1: Latitude in degrees.',
      '        lon1 (float): Longitude in degrees.',
      '        unit: "km" or "mi".',
      '',
      '    Returns:',
      '        float: The distance in the unit asked for.',
      '    """',
      '    return 0.0',
      '',
      'def nearest(points: list[tuple[float, float]], k: Optional[int] = None, since: datetime.date = datetime.date(2020, 1, 1)) -> dict:',
      '    """Nearest points first.',
      '',
      '    Parameters',
      '    ----------',
      '    points : list',
      '        Candidate (lat, lon) pairs.',
      '    k : int, optional',
      '        How many to return.',
      '    """',
      '    return {}',
      '',
      'def _helper():',
      '    pass',
      '',
    ].join('\n'),
  );
  writeFileSync(join(work, 'tools.yaml'), 'package: old\ntools:\n  - {name: kept, description: An older tool.}\n');
  let run: Run;
  beforeAll(async () => {
    run = await stoa(['tools', 'import', 'geo', '--out', 'tools.yaml'], work);
  });

  it('writes each public function with its type hints, defaults and docstring descriptions', () => {
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('wrote 2 tool(s) to tools.yaml: distance, nearest');
    const manifest = parseYaml(readFileSync(join(work, 'tools.yaml'), 'utf8')) as { tools: unknown[] };
    expect(manifest.tools).toEqual([
      { name: 'kept', description: 'An older tool.' },
      {
        name: 'distance',
        description: 'Great-circle distance to the origin.',
        parameters: [
          { name: 'lat1', type: 'float', description: 'Latitude in degrees.' },
          { name: 'lon1', type: 'float', description: 'Longitude in degrees.' },
          { name: 'unit', type: 'str', description: '"km" or "mi".', default: 'km' },
        ],
        module: 'geo',
        returns: { name: 'result', type: 'float', description: 'The distance in the unit asked for.' },
      },
      {
        name: 'nearest',
        description: 'Nearest points first.',
        parameters: [
          { name: 'points', type: 'list', description: 'Candidate (lat, lon) pairs.' },
          { name: 'k', type: 'int', description: 'How many to return.', default: null },
          { name: 'since', type: 'datetime.date', description: '', required: false },
        ],
        module: 'geo',
        returns: { name: 'result', type: 'dict', description: '' },
      },
    ]);
  });

  it('warns about what it could not carry over', () => {
    expect(run.stderr).toContain('warning: nearest: the default of since has no JSON form; it is listed as optional');
  });

  it('names the module and the fix when the import fails', async () => {
    const failed = await stoa(['tools', 'import', 'no_such_module'], work);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain(
      "Importing no_such_module with python3 failed: ModuleNotFoundError: No module named 'no_such_module'",
    );
  });
});

describe('stoa check', () => {
  const work = mkdtempSync(join(tmpdir(), 'stoa-check-'));

  it('accepts every example config, each judged by its own app', async () => {
    const examples: [string, string][] = [
      ['examples/servers/demo/server.yaml', 'executor'],
      ['examples/servers/science/server.yaml', 'executor'],
      ['examples/routers/lab/router.yaml', 'router'],
      ['examples/activity/activity.yaml', 'activity'],
      ['examples/square/square.yaml', 'square'],
    ];
    for (const [file, app] of examples) {
      const checked = await stoa(['check', file], ROOT);
      expect(checked.stdout.trim(), file).toBe(`✓ ${file} is a valid ${app} config`);
    }
  });

  it('names every problem of a bad server.yaml at once and exits 1', async () => {
    const file = join(work, 'server.yaml');
    writeFileSync(file, 'name: lab\nsrver: {port: 1}\nsessions: {max_sessions: -1}\nexecution: {mode: bogus}\n');
    const checked = await stoa(['check', file], work);
    expect(checked.code).toBe(1);
    expect(checked.stdout.split('\n')).toEqual([
      `✗ ${file} (executor config): 3 problem(s)`,
      '  - execution.mode: Invalid option: expected one of "sync"|"async_only"|"adaptive"',
      '  - sessions.max_sessions: Too small: expected number to be >0',
      '  - srver: unknown key; did you mean server?',
      '',
    ]);
  });

  it('judges a router file by the router schema and a missing tool manifest by the executor loader', async () => {
    const router = join(work, 'router.yaml');
    writeFileSync(router, 'name: r\nupstreams: [{name: a}]\nbridges: 3\n');
    const bad = await stoa(['check', router], work);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain('  - upstreams.0.url: Invalid input: expected string, received undefined');
    expect(bad.stdout).toContain('  - bridges: Invalid input: expected array, received number');
    const server = join(work, 'missing-tools.yaml');
    writeFileSync(server, 'name: lab\ntools: {manifest: nowhere.yaml}\n');
    const missing = await stoa(['check', server], work);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toContain(`tools.manifest: file not found: ${join(work, 'nowhere.yaml')}`);
  });
});
