import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@stoa/config';
import { loadExecutorSettings } from './executor.config';

const EXAMPLES = resolve(__dirname, '../../../examples/servers');
const noWarn = () => undefined;

function yamlFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'stoa-exec-cfg-')), 'server.yaml');
  writeFileSync(file, text);
  return file;
}

function problemsOf(file: string, env: NodeJS.ProcessEnv = {}): readonly string[] {
  try {
    loadExecutorSettings(file, {}, env, noWarn);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('the config loaded without problems');
}

describe('executor config', () => {
  it.each(readdirSync(EXAMPLES))('loads the shipped example %s/server.yaml', (example) => {
    const settings = loadExecutorSettings(join(EXAMPLES, example, 'server.yaml'), {}, {}, noWarn);
    expect(settings.config.name).toBe(example);
  });

  it('refuses a body limit too small for the largest cell, saying what to raise', () => {
    expect(problemsOf(yamlFile('name: demo\nserver: {max_body_mb: 1}\n'))).toEqual([
      'server.max_body_mb: 1 MiB leaves no room for a cell of execution.max_code_bytes (1048576 bytes, which JSON escaping can double): raise server.max_body_mb to at least 2 or lower execution.max_code_bytes',
    ]);
    expect(loadExecutorSettings(yamlFile('name: demo\n'), {}, {}, noWarn).config.server.max_body_mb).toBe(4);
  });

  it('accepts a name with a hyphen, as in the seed docs (science-hub)', () => {
    expect(loadExecutorSettings(yamlFile('name: science-hub\n'), {}, {}, noWarn).config.name).toBe('science-hub');
  });

  it('refuses a name that cannot be part of an MCP tool name, saying which characters work', () => {
    expect(problemsOf(yamlFile('name: science hub\n'))).toEqual([
      expect.stringMatching(/^name: use 1-47 letters, digits, _ and -/),
    ]);
  });

  it('names a misspelt key with its path and the nearest valid name', () => {
    expect(problemsOf(yamlFile('name: demo\nsessions:\n  max_sesions: 5\n'))).toEqual([
      'sessions.max_sesions: unknown key; did you mean max_sessions?',
    ]);
  });

  it('lists unknown keys at every depth together with the other problems', () => {
    const problems = problemsOf(
      yamlFile(
        'name: demo\nsandbox:\n  limits:\n    memory: 10\nexecution:\n  default_timeout: -1\ntransfer:\n  handles: { ttl_hour: 1 }\nfrobnicate: true\n',
      ),
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        'sandbox.limits.memory: unknown key; did you mean memory_mb?',
        'transfer.handles.ttl_hour: unknown key; did you mean ttl_hours?',
        expect.stringMatching(
          /^frobnicate: unknown key \(valid keys here: .*sessions.*\); fix its spelling or remove it$/,
        ),
        expect.stringMatching(/^execution\.default_timeout: /),
      ]),
    );
    expect(problems).toHaveLength(4);
  });

  it('accepts every environment override the executor documents (each maps to a real key)', () => {
    const env = {
      STOA_MAX_SESSIONS: '3',
      STOA_WARM_POOL: '0',
      STOA_PYTHON: 'python3',
      STOA_SANDBOX_NETWORK: 'inherit',
      STOA_EXECUTION_MODE: 'adaptive',
      REDIS_URL: 'redis://127.0.0.1:6379',
      MCP_BLOB_CHUNK_SIZE: '1024',
      AGORA_LOCAL_PUBLISH_DIR: '/tmp/x',
      DATABASE_URL: 'postgres://127.0.0.1/test',
      PUBLIC_BASE_URL: 'https://stoa.example.com',
    };
    expect(loadExecutorSettings(yamlFile('name: demo\n'), {}, env, noWarn).config.sessions.max_sessions).toBe(3);
  });
});
