import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@stoa/config';
import { loadRouterSettings } from './router.config';

const EXAMPLE = resolve(__dirname, '../../../examples/routers/lab/router.yaml');

function yamlFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'stoa-router-cfg-')), 'router.yaml');
  writeFileSync(file, text);
  return file;
}

function problemsOf(file: string): readonly string[] {
  try {
    loadRouterSettings(file, {}, {});
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('the config loaded without problems');
}

describe('router config', () => {
  it('loads the shipped example router.yaml', () => {
    expect(loadRouterSettings(EXAMPLE, {}, {}).config.upstreams.map((u) => u.name)).toEqual(['demo', 'science']);
  });

  it("accepts the seed docs' router name science-hub and hyphenated upstream names", () => {
    const { config } = loadRouterSettings(
      yamlFile('name: science-hub\nupstreams:\n  - { name: geo-stats, url: http://127.0.0.1:8001 }\n'),
      {},
      {},
    );
    expect([config.name, config.upstreams[0]?.name]).toEqual(['science-hub', 'geo-stats']);
  });

  it('names misspelt keys inside an upstream and its auth block with the nearest valid names', () => {
    const problems = problemsOf(
      yamlFile(
        'name: lab\nupstreams:\n  - name: demo\n    url: http://127.0.0.1:8000\n    expose_tool: null\n    auth: { mode: passthrough, audiense: dev }\nconnectors: { health_interval: 5 }\n',
      ),
    );
    expect(problems).toEqual([
      'upstreams.0.auth.audiense: unknown key; did you mean audience?',
      'upstreams.0.expose_tool: unknown key; did you mean expose_tools?',
      'connectors.health_interval: unknown key; did you mean health_interval_seconds?',
    ]);
  });
});
