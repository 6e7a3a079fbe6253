import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@stoa/config';
import { loadDispatcherSettings } from './dispatcher.config';

function yamlFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'stoa-disp-cfg-')), 'dispatcher.yaml');
  writeFileSync(file, text);
  return file;
}

describe('dispatcher config', () => {
  it('accepts hyphenated dispatcher and worker names (science-hub)', () => {
    const { config } = loadDispatcherSettings(
      yamlFile('name: science-hub\nworkers:\n  - { name: worker-1, url: http://127.0.0.1:8001 }\n'),
      {},
      {},
    );
    expect([config.name, config.workers[0]?.name]).toEqual(['science-hub', 'worker-1']);
  });

  it('names a misspelt worker key with the nearest valid name', () => {
    const load = () =>
      loadDispatcherSettings(
        yamlFile('name: pool\nworkers:\n  - { name: w1, url: http://127.0.0.1:8001, wieght: 2 }\n'),
        {},
        {},
      );
    expect(load).toThrow(ConfigError);
    expect(load).toThrow('workers.0.wieght: unknown key; did you mean weight?');
  });
});
