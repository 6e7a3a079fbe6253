import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  ArtifactNotFoundError,
  artifactId,
  CATALOG_MIGRATIONS,
  CatalogModule,
  CatalogService,
  catalogTools,
  type CatalogSource,
} from '@stoa/catalog';
import { PersistenceModule } from '@stoa/persistence';
import { dbTarget, postgresAvailable } from '../../../test/support/databases';
import { callTool, openCatalogDb, settings, tree, writeFile } from './catalog-fixture';

const pg = postgresAvailable();
const targets = (['sqlite', 'postgres'] as const).filter((t) => t === 'sqlite' || pg);
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

function fixture(): { uri: (rel: string) => string; sources: CatalogSource[] } {
  const root = tree({
    'energy/solar_capacity.csv': 'country,mw\nDE,1\n',
    'energy/wind_offshore.parquet': 'PAR1',
    'energy/sub/grid_topology.json': '{}',
    'energy/sub/lines.csv': 'a\n',
    'energy/notes.stoa-unknown': 'unknown type',
    'energy/.hidden.csv': 'x',
    'energy/.git/config': 'x',
    'climate/irradiance.csv': 'h,w\n',
    'climate/temps.csv': 't\n',
    'single/prices 2024.csv': 'p\n',
  });
  const uri = (rel: string): string => join(root, rel);
  const sources: CatalogSource[] = [
    {
      type: 'local',
      path: uri('energy'),
      domain: 'energy',
      description: 'Energy datasets',
      files: {
        'solar_capacity.csv': {
          description: 'Installed solar PV capacity by country: solar statistics',
          domain: 'power',
        },
        'grid_topology.json': { description: 'Transmission grid topology' },
        'sub/lines.csv': { description: 'Power line register' },
        'wind_offshore.parquet': { description: 'Offshore wind farm output' },
      },
    },
    {
      type: 'local',
      path: uri('climate'),
      domain: 'climate',
      files: {
        'irradiance.csv': {
          description:
            'Hourly irradiance measurements used to estimate solar yield across many weather stations in the region',
        },
      },
    },
    {
      type: 'local',
      path: uri('single/prices 2024.csv'),
      domain: 'markets',
      description: 'Day-ahead electricity prices',
      files: {},
    },
    { type: 'local', path: uri('does-not-exist'), files: {} },
  ];
  return { uri, sources };
}

const ALL = [
  'grid_topology.json',
  'irradiance.csv',
  'lines.csv',
  'notes.stoa-unknown',
  'prices 2024.csv',
  'solar_capacity.csv',
  'temps.csv',
  'wind_offshore.parquet',
];

describe.each(targets)('data catalog on %s', (kind) => {
  const db = dbTarget(kind);
  const { uri, sources } = fixture();
  let ds: DataSource;
  let catalog: CatalogService;
  const warnings: unknown[][] = [];
  let added: number;

  beforeAll(async () => {
    ds = await openCatalogDb(db);
    catalog = new CatalogService(settings(sources), ds);
    const warned = vi
      .spyOn(Logger.prototype, 'warn')
      .mockImplementation((...args: unknown[]) => void warnings.push(args));
    try {
      added = await catalog.index();
    } finally {
      warned.mockRestore();
    }
  });
  afterAll(async () => {
    await ds?.destroy();
    await db.cleanup();
  });

  const names = async (query: string, opts = {}): Promise<string[]> =>
    (await catalog.search(query, opts)).map((h) => h.name);

  it('indexes local files, skipping dot-files and dot-directories, and returns how many were added', async () => {
    expect(added).toBe(8);
    expect(await names('', { top: 100 })).toEqual(ALL);
  });

  it('stores absolute paths, sha256-derived ids, sizes, content types and per-file overrides by relative path or bare name', async () => {
    const solar = uri('energy/solar_capacity.csv');
    expect(artifactId(solar)).toMatch(/^[0-9a-f]{16}$/);
    expect(await catalog.get(artifactId(solar))).toEqual({
      id: artifactId(solar),
      name: 'solar_capacity.csv',
      storage_uri: solar,
      description: 'Installed solar PV capacity by country: solar statistics',
      domain: 'power',
      source_type: 'local',
      content_type: 'text/csv',
      size_bytes: 16,
      indexed_at: expect.stringMatching(ISO),
    });
    const get = (rel: string) => catalog.get(artifactId(uri(rel)));
    expect(await get('energy/sub/grid_topology.json')).toMatchObject({
      description: 'Transmission grid topology',
      domain: 'energy',
      content_type: 'application/json',
    });
    expect(await get('energy/sub/lines.csv')).toMatchObject({ description: 'Power line register' });
    expect(await get('energy/notes.stoa-unknown')).toMatchObject({
      description: 'Energy datasets',
      content_type: null,
      size_bytes: 12,
    });
    expect(await get('climate/temps.csv')).toMatchObject({ description: null, domain: 'climate' });
    expect(await get('single/prices 2024.csv')).toMatchObject({
      description: 'Day-ahead electricity prices',
      domain: 'markets',
    });
  });

  it('warns about artifacts without a description and about missing sources', () => {
    expect(warnings).toContainEqual([
      { count: 1, examples: [uri('climate/temps.csv')] },
      expect.stringContaining('without a description'),
    ]);
    expect(warnings).toContainEqual([{ path: uri('does-not-exist') }, 'catalog source not found; skipped']);
  });

  it('ranks the better match first and normalises scores so the best is 1', async () => {
    const hits = await catalog.search('solar');
    expect(hits.map((h) => h.name)).toEqual(['solar_capacity.csv', 'irradiance.csv']);
    expect(hits[0]?.score).toBe(1);
    expect(hits[1]?.score).toBeGreaterThan(0);
    expect(hits[1]?.score).toBeLessThan(1);
  });

  it('understands phrases, or, exclusions and punctuated file names the same way on both databases', async () => {
    expect(await names('solar -capacity')).toEqual(['irradiance.csv']);
    expect((await names('solar or offshore')).sort()).toEqual([
      'irradiance.csv',
      'solar_capacity.csv',
      'wind_offshore.parquet',
    ]);
    expect(await names('wind_offshore.parquet')).toEqual(['wind_offshore.parquet']);
    expect(await names('"grid topology"')).toEqual(['grid_topology.json']);
    expect(await names('"topology grid"')).toEqual(ALL);
    expect(await names('DAY-AHEAD prices')).toEqual(['prices 2024.csv']);
  });

  it('never raises on search syntax characters', async () => {
    for (const q of [
      '"',
      'solar"',
      'a AND',
      'NEAR(',
      '*',
      'col:val',
      '(((',
      "o'brien",
      '-',
      '\\',
      '%_',
      'solar AND OR NOT',
      '^',
      '{}',
      'ünïcödé',
      '-"',
      'or',
      '\u0000',
      'solar\u0000x',
    ]) {
      await expect(catalog.search(q), JSON.stringify(q)).resolves.toBeInstanceOf(Array);
    }
    expect(await names('solar* capacity:')).toEqual(['solar_capacity.csv']);
  });

  it('filters by domain and source type, and caps the result at top', async () => {
    expect(await names('solar', { domain: 'climate' })).toEqual(['irradiance.csv']);
    expect(await names('solar', { source_type: 'blob' })).toEqual([]);
    expect(await names('solar', { source_type: 'local', top: 1 })).toEqual(['solar_capacity.csv']);
    expect(await names('', { domain: 'energy' })).toEqual([
      'grid_topology.json',
      'lines.csv',
      'notes.stoa-unknown',
      'wind_offshore.parquet',
    ]);
    expect(await names('', { top: 2 })).toEqual(['grid_topology.json', 'irradiance.csv']);
    await expect(catalog.search('x', { top: 0 })).rejects.toThrow('top must be a whole number from 1 to 1000.');
  });

  it('falls back to the filtered catalog by name, without scores, when nothing matches', async () => {
    const hits = await catalog.search('zzzunmatched');
    expect(hits.map((h) => h.name)).toEqual(ALL);
    expect(hits.every((h) => h.score === null)).toBe(true);
    expect(await names('zzzunmatched', { domain: 'markets' })).toEqual(['prices 2024.csv']);
  });

  it('get throws a not-found error that tells the agent where ids come from', async () => {
    const err = await catalog.get('0123456789abcdef').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ArtifactNotFoundError);
    expect((err as Error).message).toBe(
      "Artifact not found: 0123456789abcdef. Discover data with search_data (or list_domains to see which domains exist) and use the 'id' from a search_data hit.",
    );
    expect(await catalog.find('0123456789abcdef')).toBeUndefined();
  });

  it('lists distinct domains sorted, and the local roots `<local>` tags may read', async () => {
    expect(await catalog.listDomains()).toEqual(['climate', 'energy', 'markets', 'power']);
    expect(catalog.localRoots()).toEqual([
      uri('energy'),
      uri('climate'),
      uri('single/prices 2024.csv'),
      uri('does-not-exist'),
    ]);
    expect(catalog.blobAccess()).toBeUndefined();
  });

  it('serves the tools with null fields left out and a load_path on every artifact', async () => {
    const tools = catalogTools(catalog);
    // On PostgreSQL query_catalog needs catalog.query_role, which this suite does not set.
    expect(tools.map((t) => t.name)).toEqual([
      'search_data',
      'get_artifact',
      'list_domains',
      ...(kind === 'sqlite' ? ['query_catalog'] : []),
    ]);
    const call = callTool(tools);
    const [top] = (await call('search_data', { query: 'solar' })) as Record<string, unknown>[];
    expect(top).toEqual({
      ...(await catalog.get(artifactId(uri('energy/solar_capacity.csv')))),
      score: 1,
      load_path: `<local>${uri('energy/solar_capacity.csv')}</local>`,
    });
    const listed = (await call('search_data', { query: 'zzz', domain: 'climate' })) as Record<string, unknown>[];
    expect(listed.map((a) => [a.name, 'score' in a, 'description' in a])).toEqual([
      ['irradiance.csv', false, true],
      ['temps.csv', false, false],
    ]);
    const notes = (await call('get_artifact', { artifact_id: artifactId(uri('energy/notes.stoa-unknown')) })) as Record<
      string,
      unknown
    >;
    // Null fields are left out (an unknown extension has no content_type) and load_path comes last.
    expect(Object.keys(notes).join(' ')).toBe(
      'id name storage_uri description domain source_type size_bytes indexed_at load_path',
    );
    expect(await call('get_artifact', { artifact_id: 'nope' })).toEqual({
      error: expect.stringMatching(/^Artifact not found: nope\. /),
      tool_failure: true,
    });
    expect(await call('list_domains')).toEqual(['climate', 'energy', 'markets', 'power']);
    expect(() => tools[0]?.input.parse({ query: 'x', source_type: 'ftp' })).toThrow();
  });

  it('re-indexing removes vanished files, adds new ones and leaves known rows untouched', async () => {
    const solarBefore = await catalog.get(artifactId(uri('energy/solar_capacity.csv')));
    writeFile(uri('energy/new_storage.csv'), 'battery storage\n');
    rmSync(uri('climate/temps.csv'));
    expect(await catalog.index()).toBe(1);
    await expect(catalog.get(artifactId(uri('climate/temps.csv')))).rejects.toBeInstanceOf(ArtifactNotFoundError);
    expect(await catalog.get(artifactId(uri('energy/new_storage.csv')))).toMatchObject({
      name: 'new_storage.csv',
      domain: 'energy',
    });
    expect(await catalog.get(artifactId(uri('energy/solar_capacity.csv')))).toEqual(solarBefore);
    // the full-text index followed the table
    expect(await names('new_storage')).toEqual(['new_storage.csv']);
    expect(await names('temps')).not.toContain('temps.csv');
    expect(await catalog.index()).toBe(0);
  });
});

describe.each(targets)('CatalogModule on %s', (kind) => {
  const db = dbTarget(kind);
  afterAll(() => db.cleanup());

  it('indexes at start when index_on_start is set and serves the service by injection', async () => {
    const dir = tree({ 'a/solar.csv': 'x' });
    const mod = await Test.createTestingModule({
      imports: [
        PersistenceModule.forRoot({
          database: db.database,
          defaultSqlitePath: db.defaultSqlitePath,
          migrations: [...CATALOG_MIGRATIONS],
        }),
        CatalogModule.forRoot(
          settings([{ type: 'local', path: join(dir, 'a'), description: 'Solar data', files: {} }], {
            indexOnStart: true,
          }),
        ),
      ],
    }).compile();
    await mod.init();
    try {
      expect((await mod.get(CatalogService).search('solar')).map((h) => [h.name, h.score])).toEqual([['solar.csv', 1]]);
    } finally {
      await mod.close();
    }
  });
});
