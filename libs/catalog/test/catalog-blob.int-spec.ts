import { Logger } from '@nestjs/common';
import { BlobServiceClient } from '@azure/storage-blob';
import type { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  artifactId,
  catalogConfigSchema,
  CatalogService,
  catalogTools,
  resolveCatalogConfig,
  type CatalogSettings,
} from '@stoa/catalog';
import { startAzurite, type Azurite } from '../../../test/support/azurite';
import { dbTarget, postgresAvailable } from '../../../test/support/databases';
import { callTool, openCatalogDb } from './catalog-fixture';

const pg = postgresAvailable();
const targets = (['sqlite', 'postgres'] as const).filter((t) => t === 'sqlite' || pg);

let azurite: Azurite;
let service: BlobServiceClient;
beforeAll(async () => {
  azurite = await startAzurite();
  service = BlobServiceClient.fromConnectionString(azurite.connectionString);
});
afterAll(async () => {
  await azurite?.stop();
});

async function upload(container: string, blobs: Record<string, { body: string; type?: string }>): Promise<void> {
  const c = service.getContainerClient(container);
  await c.createIfNotExists();
  for (const [name, { body, type }] of Object.entries(blobs)) {
    await c
      .getBlockBlobClient(name)
      .upload(body, Buffer.byteLength(body), type ? { blobHTTPHeaders: { blobContentType: type } } : {});
  }
}

describe.each(targets)('blob sources on %s', (kind) => {
  const db = dbTarget(kind);
  const data = `${kind}-data`;
  const gone = `${kind}-gone`;
  const uri = (container: string, name: string): string => `az://devstoreaccount1/${container}/${name}`;
  let ds: DataSource;
  let catalog: CatalogService;
  let settings: CatalogSettings;
  let added: number;

  beforeAll(async () => {
    await upload(data, {
      'data/wind/turbines.csv': { body: 'id,mw\n1,3\n', type: 'application/octet-stream' },
      'data/readme': { body: '# read me', type: 'text/markdown' },
      'data/.hidden.csv': { body: 'x' },
      'data/.cache/x.csv': { body: 'x' },
      'data/folder/': { body: '' },
      'database.csv': { body: 'd\n' },
    });
    await upload(gone, { 'g.csv': { body: 'g' } });
    const resolved = resolveCatalogConfig(
      catalogConfigSchema.parse({
        sources: [
          // Azurite's path-style URL, recognised because it is under catalog.blob's endpoint
          {
            path: `${azurite.accountUrl}/${data}/data`,
            domain: 'wind',
            files: {
              'wind/turbines.csv': { description: 'Turbine registry' },
              readme: { domain: 'docs', description: 'Read me' },
            },
          },
          { path: `az://devstoreaccount1/${data}/database.csv`, description: 'One blob named exactly' },
          { path: `az://devstoreaccount1/${gone}`, description: 'A container that will disappear' },
        ],
        blob: { connection_string: azurite.connectionString },
        index_on_start: false,
      }),
      '/nowhere',
    );
    if (!resolved) throw new Error('catalog unexpectedly off');
    settings = resolved;
    ds = await openCatalogDb(db);
    catalog = new CatalogService(settings, ds);
    added = await catalog.index();
  });
  afterAll(async () => {
    await ds?.destroy();
    await db.cleanup();
  });

  it('lists blobs under the prefix, skipping folder markers, dot-files and siblings that only share the prefix', async () => {
    expect(added).toBe(4);
    expect((await catalog.search('', { source_type: 'blob' })).map((a) => a.storage_uri)).toEqual([
      uri(data, 'database.csv'),
      uri(gone, 'g.csv'),
      uri(data, 'data/readme'),
      uri(data, 'data/wind/turbines.csv'),
    ]);
  });

  it("records az:// URIs, ids, sizes, overrides and content types (by extension, else the blob's own)", async () => {
    const turbines = uri(data, 'data/wind/turbines.csv');
    expect(await catalog.get(artifactId(turbines))).toEqual({
      id: artifactId(turbines),
      name: 'turbines.csv',
      storage_uri: turbines,
      description: 'Turbine registry',
      domain: 'wind',
      source_type: 'blob',
      content_type: 'text/csv',
      size_bytes: 10,
      indexed_at: expect.any(String),
    });
    expect(await catalog.get(artifactId(uri(data, 'data/readme')))).toMatchObject({
      content_type: 'text/markdown',
      domain: 'docs',
      description: 'Read me',
    });
    expect(await catalog.get(artifactId(uri(data, 'database.csv')))).toMatchObject({
      name: 'database.csv',
      description: 'One blob named exactly',
      domain: null,
    });
  });

  it('gives blob artifacts a <blob>id</blob> load_path, resolvable through the catalog', async () => {
    const [hit] = (await callTool(catalogTools(catalog))('search_data', { query: 'turbine registry' })) as Record<
      string,
      unknown
    >[];
    const id = artifactId(uri(data, 'data/wind/turbines.csv'));
    expect(hit).toMatchObject({ id, source_type: 'blob', score: 1, load_path: `<blob>${id}</blob>` });
    expect((await catalog.find(id))?.storage_uri).toBe(uri(data, 'data/wind/turbines.csv'));
    expect(catalog.blobAccess()).toEqual({ connection_string: azurite.connectionString });
    expect(catalog.localRoots()).toEqual([]);
  });

  it('re-indexing drops deleted blobs but keeps the rows of a source that cannot be listed', async () => {
    await service.getContainerClient(data).getBlockBlobClient('data/readme').delete();
    await service.getContainerClient(gone).delete();
    const errors: unknown[][] = [];
    const spy = vi.spyOn(Logger.prototype, 'error').mockImplementation((...args: unknown[]) => void errors.push(args));
    try {
      expect(await catalog.index()).toBe(0);
    } finally {
      spy.mockRestore();
    }
    expect(errors).toEqual([
      [
        expect.objectContaining({ source: `az://devstoreaccount1/${gone}/` }),
        'catalog blob source could not be listed; its artifacts are kept as they were',
      ],
    ]);
    expect(await catalog.find(artifactId(uri(data, 'data/readme')))).toBeUndefined();
    expect(await catalog.find(artifactId(uri(gone, 'g.csv')))).toMatchObject({ name: 'g.csv' });
  });
});
