import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { boolish, checkConfig, ConfigError, loadConfig, positiveInt } from '@stoa/config';

const schema = z.strictObject({
  name: z.string(),
  server: z.strictObject({ port: positiveInt.default(8000), open: boolish.default(false) }).prefault({}),
});

function yamlFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'cfg-')), 'server.yaml');
  writeFileSync(file, text);
  return file;
}

describe('loadConfig', () => {
  it('applies defaults, then the file, then env, then overrides', () => {
    const file = yamlFile('name: demo\nserver:\n  port: 9000\n');
    const { config } = loadConfig({
      schema,
      file,
      env: { PORT: '9100', OPEN: 'yes' },
      envMap: { PORT: 'server.port', OPEN: 'server.open' },
      overrides: { 'server.port': '9200' },
    });
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

  it('lists an unknown key with its path and the nearest valid name, beside the other problems', () => {
    const file = yamlFile('name: demo\nserver:\n  prot: 9000\n  open: maybe\n');
    expect(() => loadConfig({ schema, file })).toThrow(/server\.prot: unknown key; did you mean port\?/);
    expect(() => loadConfig({ schema, file })).toThrow(/server\.open: /);
  });
});

describe('checkConfig', () => {
  const entry = z.union([
    z.string(),
    z.strictObject({ url: z.string(), auth: z.strictObject({ mode: z.enum(['none', 'obo']) }).optional() }),
  ]);

  it('reports the problems of the one union option the value has the type of, with full paths', () => {
    const result = checkConfig(z.strictObject({ peers: z.record(z.string(), entry) }), {
      peers: { gis: { url: 'http://gis', auth: { mdoe: 'none' } } },
    });
    expect(!result.success && result.problems).toEqual([
      expect.stringMatching(/^peers\.gis\.auth\.mode: /),
      'peers.gis.auth.mdoe: unknown key; did you mean mode?',
    ]);
  });

  it('returns the parsed value when the document is valid', () => {
    expect(checkConfig(entry, 'http://gis')).toEqual({ success: true, data: 'http://gis' });
  });
});
