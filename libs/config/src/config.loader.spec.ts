import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { boolish, ConfigError, loadConfig, positiveInt } from '@stoa/config';

const schema = z.object({
  name: z.string(),
  server: z.object({ port: positiveInt.default(8000), open: boolish.default(false) }).prefault({}),
});

function yamlFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'cfg-')), 'server.yaml');
  writeFileSync(file, text);
  return file;
}

describe('loadConfig', () => {
  it('applies defaults, then the file, then env, then overrides', () => {
    const file = yamlFile('name: demo\nserver:\n  port: 9000\n');
    const { config } = loadConfig({ schema, file, env: { PORT: '9100', OPEN: 'yes' }, envMap: { PORT: 'server.port', OPEN: 'server.open' }, overrides: { 'server.port': '9200' } });
    expect(config).toEqual({ name: 'demo', server: { port: 9200, open: true } });
  });

  it('lists every bad key in one error, naming the env variable a bad value came from', () => {
    const file = yamlFile('server:\n  port: -5\n');
    let err: unknown;
    try {
      loadConfig({ schema, file, env: { OPEN: 'maybe' }, envMap: { OPEN: 'server.open' } });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as ConfigError).message;
    expect(message).toContain('name:');
    expect(message).toContain('server.port:');
    expect(message).toContain('server.open (from OPEN):');
  });

  it('explains unreadable and non-mapping files', () => {
    expect(() => loadConfig({ schema, file: '/nonexistent/server.yaml' })).toThrow(/cannot read the file/);
    expect(() => loadConfig({ schema, file: yamlFile('- a\n- b\n') })).toThrow(/YAML mapping at the top level/);
    expect(() => loadConfig({ schema, file: yamlFile('a: [\n') })).toThrow(/not valid YAML/);
  });
});
