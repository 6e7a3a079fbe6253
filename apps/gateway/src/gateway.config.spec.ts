import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@stoa/config';
import { loadGatewaySettings } from './gateway.config';

function yamlFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'stoa-gw-cfg-')), 'gateway.yaml');
  writeFileSync(file, text);
  return file;
}

describe('gateway config', () => {
  it('accepts hyphenated gateway and upstream names (science-hub)', () => {
    const { config } = loadGatewaySettings(
      yamlFile('name: science-hub\nupstream: { name: geo-stats, url: http://127.0.0.1:8001 }\n'),
      {},
      {},
    );
    expect([config.name, config.upstream.name]).toEqual(['science-hub', 'geo-stats']);
  });

  it('names a misspelt policy key with the nearest valid name', () => {
    const load = () =>
      loadGatewaySettings(
        yamlFile('name: gw\nupstream: { name: demo, url: http://127.0.0.1:8000 }\npolicy: { blocked_tool: [send] }\n'),
        {},
        {},
      );
    expect(load).toThrow(ConfigError);
    expect(load).toThrow('policy.blocked_tool: unknown key; did you mean blocked_tools?');
  });
});
