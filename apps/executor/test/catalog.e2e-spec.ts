import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BlobServiceClient } from '@azure/storage-blob';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAzurite, type Azurite } from '../../../test/support/azurite';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { devToken, v2Client, type TestClient } from '../../../test/support/ts-clients';
import { ADMIN } from '../../../test/support/admin';

/** A server with a data catalog over a local directory and an Azurite container, used through MCP. */
describe('data catalog tools and their load_path tags', () => {
  let azurite: Azurite;
  let ex: RunningExecutor;
  let c: TestClient;
  const data = mkdtempSync(join(tmpdir(), 'stoa-catalog-'));

  beforeAll(async () => {
    azurite = await startAzurite();
    const container = BlobServiceClient.fromConnectionString(azurite.connectionString).getContainerClient('energy');
    await container.create();
    await container.getBlockBlobClient('grid/load.csv').upload('hour,mw\n1,410\n2,395\n', 22);
    mkdirSync(join(data, 'solar'));
    writeFileSync(join(data, 'solar', 'pv_output.csv'), 'day,kwh\n1,12.5\n');
    writeFileSync(join(data, 'notes.txt'), 'irradiance notes');
    const cfg = mkdtempSync(join(tmpdir(), 'stoa-catalog-cfg-'));
    writeFileSync(
      join(cfg, 'catalog.yaml'),
      [
        'sources:',
        `  - path: ${data}`,
        '    domain: solar',
        '    description: Solar measurements',
        '    files:',
        '      solar/pv_output.csv: { description: Daily photovoltaic output per site }',
        '  - path: az://devstoreaccount1/energy/grid',
        '    domain: grid',
        '    description: Hourly grid load in megawatts',
        '',
      ].join('\n'),
    );
    ex = await startExecutor({
      config: { catalog: { file: join(cfg, 'catalog.yaml'), blob: { connection_string: azurite.connectionString } } },
    });
    c = await v2Client(ex.mcpUrl, 'auto', devToken('alice'));
  });
  afterAll(async () => {
    await c?.close();
    await ex?.stop();
    await azurite?.stop();
  });

  it('lists the catalog tools and answers search_data, get_artifact and list_domains', async () => {
    expect(await c.listTools()).toEqual(
      expect.arrayContaining(['search_data', 'get_artifact', 'list_domains', 'query_catalog']),
    );
    expect((await c.call('list_domains', {})).json).toEqual(['grid', 'solar']);
    const pv = (await c.call('search_data', { query: 'photovoltaic output' })).json as unknown as Record<
      string,
      unknown
    >[];
    expect(pv[0]).toMatchObject({
      name: 'pv_output.csv',
      domain: 'solar',
      source_type: 'local',
      score: 1,
      load_path: `<local>${join(data, 'solar', 'pv_output.csv')}</local>`,
    });
    const grid = (await c.call('search_data', { query: 'grid load', source_type: 'blob' })).json as unknown as Record<
      string,
      unknown
    >[];
    expect(grid[0]).toMatchObject({
      name: 'load.csv',
      storage_uri: 'az://devstoreaccount1/energy/grid/load.csv',
      load_path: `<blob>${grid[0]?.id as string}</blob>`,
    });
    expect((await c.call('get_artifact', { artifact_id: grid[0]?.id })).json).toMatchObject({
      id: grid[0]?.id,
      domain: 'grid',
    });
    expect(((await c.call('get_artifact', { artifact_id: 'nope' })).json as { error: string }).error).toMatch(
      /^Artifact not found: nope\./,
    );
  });

  it('query_catalog runs read-only SQL with max_rows and refuses writes', async () => {
    const rows = (
      await c.call('query_catalog', { sql: 'SELECT name, domain FROM catalog_artifacts ORDER BY name', max_rows: 2 })
    ).json as unknown as unknown[];
    expect(rows).toEqual([
      { name: 'load.csv', domain: 'grid' },
      { name: 'notes.txt', domain: 'solar' },
    ]);
    expect((await c.call('query_catalog', { sql: 'delete from catalog_artifacts' })).json).toEqual({
      error: 'Write operations are not permitted. Query starts with: DELETE',
    });
    expect(
      ((await c.call('query_catalog', { sql: 'SELECT * FROM sessions' })).json as { error: string }).error,
    ).toBeTruthy();
  });

  it('POST /admin/v1/catalog/reindex picks up new files without a restart', async () => {
    writeFileSync(join(data, 'solar', 'inverters.csv'), 'id\n1\n');
    const res = await fetch(`${ex.url}/admin/v1/catalog/reindex`, { method: 'POST', headers: ADMIN });
    expect(await res.json()).toEqual({ success: true, indexed: 1 });
    const hits = (await c.call('search_data', { query: 'inverters' })).json as unknown as { name: string }[];
    expect(hits[0]?.name).toBe('inverters.csv');
  });

  it('load_path tags from the catalog load in code: local files and blobs', async () => {
    const pv = ((await c.call('search_data', { query: 'photovoltaic' })).json as unknown as { load_path: string }[])[0]
      ?.load_path as string;
    const grid = ((await c.call('search_data', { query: 'grid load' })).json as unknown as { load_path: string }[])[0]
      ?.load_path as string;
    const r = (
      await c.call('execute_demo_code', {
        code: `pv = open("${pv}").read()\ngrid = open("${grid}").read()\nprint(pv.split()[1], grid.split()[1])`,
      })
    ).json;
    expect(r.stderr).toBe('');
    expect(r).toMatchObject({ success: true, stdout: '1,12.5 1,410\n' });
  });
});
