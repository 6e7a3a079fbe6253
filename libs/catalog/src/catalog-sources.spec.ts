import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@stoa/config';
import { catalogConfigSchema, type CatalogConfig } from './catalog.config';
import { blobEndpoint, classifySource, resolveCatalogConfig } from './catalog-sources';

const AZURITE =
  'DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;BlobEndpoint=http://127.0.0.1:10123/devstoreaccount1;';

function config(raw: unknown): CatalogConfig {
  return catalogConfigSchema.parse(raw);
}

/** server.yaml's directory with a catalog.yaml (under conf/) holding `yaml`. */
function serverDir(yaml: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'stoa-catalog-cfg-'));
  mkdirSync(join(dir, 'conf'));
  writeFileSync(join(dir, 'conf', 'catalog.yaml'), yaml);
  return dir;
}

function problems(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return [...err.problems];
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('catalogConfigSchema', () => {
  it('defaults to an empty, disabled catalog that indexes on start and times queries out after 10 s', () => {
    const c = config(undefined);
    expect(c).toEqual({ index_on_start: true, query_timeout_seconds: 10 });
    expect(resolveCatalogConfig(c, '/srv')).toBeUndefined();
  });

  it('reads index_on_start from env-style text and rejects unknown keys', () => {
    expect(config({ sources: [], index_on_start: 'false' }).index_on_start).toBe(false);
    expect(catalogConfigSchema.safeParse({ fil: 'catalog.yaml' }).success).toBe(false);
    expect(catalogConfigSchema.safeParse({ sources: [{ path: 'x', descripton: 'typo' }] }).success).toBe(false);
  });

  it('needs a connection string or an account URL when blob is set', () => {
    expect(catalogConfigSchema.safeParse({ blob: {} }).error?.issues.map((i) => i.message)).toEqual([
      'set connection_string, or account_url (reached with DefaultAzureCredential)',
    ]);
    expect(catalogConfigSchema.safeParse({ blob: { account_url: 'not a url' } }).success).toBe(false);
  });

  it('refuses a query_role that is not a plain role name', () => {
    expect(config({ query_role: 'stoa_catalog_reader' }).query_role).toBe('stoa_catalog_reader');
    expect(catalogConfigSchema.safeParse({ query_role: 'x"; DROP ROLE y; --' }).success).toBe(false);
  });
});

describe('resolveCatalogConfig', () => {
  it('enables the catalog with inline sources alone, resolving relative paths against server.yaml', () => {
    const s = resolveCatalogConfig(
      config({ sources: [{ path: 'data', domain: 'energy' }], index_on_start: false }),
      '/srv/app',
    );
    expect(s).toEqual({
      sources: [{ type: 'local', path: '/srv/app/data', domain: 'energy', description: undefined, files: {} }],
      blob: undefined,
      indexOnStart: false,
      queryTimeoutMs: 10_000,
      queryRole: undefined,
    });
  });

  it("reads catalog.yaml relative to server.yaml, with paths in it relative to the file's own directory, then inline sources", () => {
    const dir = serverDir(`
sources:
  - path: ../datasets
    domain: energy
    description: Energy datasets
    files:
      capacity.csv: { description: Installed capacity, domain: power }
      notes.md:
  - path: az://acct/container/some/prefix/
search: { embedding_model: bm25, hybrid_alpha: 0.3 }
`);
    const s = resolveCatalogConfig(config({ file: 'conf/catalog.yaml', sources: [{ path: '/abs/extra.csv' }] }), dir);
    expect(s?.sources).toEqual([
      {
        type: 'local',
        path: join(dir, 'datasets'),
        domain: 'energy',
        description: 'Energy datasets',
        files: { 'capacity.csv': { description: 'Installed capacity', domain: 'power' }, 'notes.md': {} },
      },
      {
        type: 'blob',
        account: 'acct',
        container: 'container',
        prefix: 'some/prefix',
        domain: undefined,
        description: undefined,
        files: {},
      },
      { type: 'local', path: '/abs/extra.csv', domain: undefined, description: undefined, files: {} },
    ]);
  });

  it('treats an empty catalog.yaml as a catalog without sources', () => {
    expect(resolveCatalogConfig(config({ file: 'conf/catalog.yaml' }), serverDir(''))?.sources).toEqual([]);
  });

  it('names the missing catalog file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'stoa-catalog-cfg-'));
    expect(problems(() => resolveCatalogConfig(config({ file: 'nope/catalog.yaml' }), dir))).toEqual([
      `catalog.file: catalog file not found: ${join(dir, 'nope/catalog.yaml')} (paths are relative to server.yaml's directory)`,
    ]);
  });

  it('refuses azure-openai embeddings, saying full-text search is used', () => {
    const dir = serverDir('sources: []\nsearch: { embedding_model: azure-openai }\n');
    expect(problems(() => resolveCatalogConfig(config({ file: 'conf/catalog.yaml' }), dir))).toEqual([
      'search.embedding_model: azure-openai embeddings are not supported by this server; full-text search is used. Set embedding_model: none (or remove it).',
    ]);
  });

  it('accepts every spelling of "no embeddings" and checks hybrid_alpha bounds', () => {
    for (const model of ['none', 'bm25', 'keyword', '', 'NONE']) {
      expect(
        resolveCatalogConfig(
          config({ file: 'conf/catalog.yaml' }),
          serverDir(`search: { embedding_model: "${model}" }`),
        )?.sources,
        model,
      ).toEqual([]);
    }
    expect(
      problems(() =>
        resolveCatalogConfig(config({ file: 'conf/catalog.yaml' }), serverDir('search: { hybrid_alpha: 1.5 }')),
      )[0],
    ).toMatch(/^search\.hybrid_alpha: /);
  });

  it('reports every bad source at once: invalid YAML shapes, missing paths and unreachable URLs', () => {
    const dir = serverDir('sources:\n  - domain: x\n  - path: 3\n');
    expect(problems(() => resolveCatalogConfig(config({ file: 'conf/catalog.yaml' }), dir))).toEqual([
      'sources.0.path: Invalid input: expected string, received undefined',
      'sources.1.path: Invalid input: expected string, received number',
    ]);
    const bad = problems(() =>
      resolveCatalogConfig(
        config({ sources: [{ path: 'https://example.com/c' }, { path: 'az://only-account' }] }),
        '/srv',
      ),
    );
    expect(bad).toHaveLength(2);
    expect(bad[0]).toMatch(
      /^catalog\.sources\[0]\.path: 'https:\/\/example\.com\/c' is neither a local path nor a blob location/,
    );
    expect(bad[1]).toBe("catalog.sources[1].path: 'az://only-account' is not az://{account}/{container}[/{prefix}]");
  });
});

describe('classifySource', () => {
  it('recognises az:// URIs and Azure blob URLs as blob sources, with or without a prefix', () => {
    expect(classifySource('az://acct/data', '/d')).toEqual({
      type: 'blob',
      account: 'acct',
      container: 'data',
      prefix: '',
    });
    expect(classifySource('az://acct/data/a/b', '/d')).toEqual({
      type: 'blob',
      account: 'acct',
      container: 'data',
      prefix: 'a/b',
    });
    expect(classifySource('https://Acct.blob.core.windows.net/data/x%20y/', '/d')).toEqual({
      type: 'blob',
      account: 'acct',
      container: 'data',
      prefix: 'x y',
    });
  });

  it('treats relative, absolute and file:// paths as local', () => {
    expect(classifySource('rel/dir', '/base')).toEqual({ type: 'local', path: '/base/rel/dir' });
    expect(classifySource('/abs/file.csv', '/base')).toEqual({ type: 'local', path: '/abs/file.csv' });
    expect(classifySource('file:///abs/dir', '/base')).toEqual({ type: 'local', path: '/abs/dir' });
  });

  it('accepts an Azurite-style URL only under the configured blob endpoint', () => {
    const endpoint = blobEndpoint({ connection_string: AZURITE });
    expect(classifySource('http://127.0.0.1:10123/devstoreaccount1/c1/pre', '/d', endpoint)).toEqual({
      type: 'blob',
      account: 'devstoreaccount1',
      container: 'c1',
      prefix: 'pre',
    });
    expect(classifySource('http://127.0.0.1:10124/devstoreaccount1/c1', '/d', endpoint)).toMatch(
      /is neither a local path nor a blob location/,
    );
    expect(classifySource('http://127.0.0.1:10123/devstoreaccount1/c1', '/d')).toMatch(/set catalog\.blob/);
  });
});

describe('blobEndpoint', () => {
  it('takes the account and endpoint from a connection string, which wins over account_url', () => {
    expect(blobEndpoint({ connection_string: AZURITE, account_url: 'https://other.blob.core.windows.net' })).toEqual({
      account: 'devstoreaccount1',
      url: 'http://127.0.0.1:10123/devstoreaccount1',
    });
    expect(
      blobEndpoint({
        connection_string:
          'DefaultEndpointsProtocol=https;AccountName=prod;AccountKey=k==;EndpointSuffix=core.windows.net',
      }),
    ).toEqual({
      account: 'prod',
      url: 'https://prod.blob.core.windows.net',
    });
    expect(blobEndpoint({ connection_string: 'UseDevelopmentStorage=true' })).toEqual({
      account: 'devstoreaccount1',
      url: 'http://127.0.0.1:10000/devstoreaccount1',
    });
  });

  it('derives the account from account_url: the host for Azure, the first path segment for an IP endpoint', () => {
    expect(blobEndpoint({ account_url: 'https://prod.blob.core.windows.net/' })).toEqual({
      account: 'prod',
      url: 'https://prod.blob.core.windows.net',
    });
    expect(blobEndpoint({ account_url: 'http://127.0.0.1:10000/devstoreaccount1' })).toEqual({
      account: 'devstoreaccount1',
      url: 'http://127.0.0.1:10000/devstoreaccount1',
    });
  });
});
