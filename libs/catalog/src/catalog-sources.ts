import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { ConfigError, parseConfig } from '@stoa/config';
import {
  type BlobAccessConfig,
  type CatalogConfig,
  type CatalogSourceConfig,
  catalogFileSchema,
} from './catalog.config';
import type { CatalogSettings, CatalogSource } from './catalog.types';

/** The storage account `catalog.blob` points at: its name and blob endpoint (no trailing slash). */
export interface BlobEndpoint {
  account: string;
  url: string;
}

/**
 * Resolves `catalog:` into sources ready to index, or undefined when the catalog is off (no `file`, no
 * `sources`). `baseDir` is server.yaml's directory; paths in catalog.yaml resolve against that file's own directory.
 * Throws one ConfigError listing every problem.
 */
export function resolveCatalogConfig(config: CatalogConfig, baseDir: string): CatalogSettings | undefined {
  if (config.file === undefined && config.sources === undefined) return undefined;
  const endpoint = config.blob ? blobEndpoint(config.blob) : undefined;
  const problems: string[] = [];
  const sources: CatalogSource[] = [];
  const add = (list: CatalogSourceConfig[], dir: string, label: string): void =>
    list.forEach((s, i) => {
      const where = classifySource(s.path, dir, endpoint);
      if (typeof where === 'string') problems.push(`${label}[${i}].path: ${where}`);
      else sources.push({ ...where, domain: s.domain, description: s.description, files: s.files });
    });
  if (config.file !== undefined) {
    const file = resolve(baseDir, config.file);
    add(readCatalogFile(file), dirname(file), `${file}: sources`);
  }
  add(config.sources ?? [], baseDir, 'catalog.sources');
  if (problems.length) throw new ConfigError('catalog', problems);
  return {
    sources,
    blob: config.blob,
    indexOnStart: config.index_on_start,
    queryTimeoutMs: Math.round(config.query_timeout_seconds * 1000),
    queryRole: config.query_role,
  };
}

/** Reads and validates catalog.yaml (reference §4.9); an empty file has no sources. */
function readCatalogFile(file: string): CatalogSourceConfig[] {
  if (!existsSync(file))
    throw new ConfigError('catalog', [
      `catalog.file: catalog file not found: ${file} (paths are relative to server.yaml's directory)`,
    ]);
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(file, 'utf8')) ?? {};
  } catch (err) {
    throw new ConfigError(file, [`not valid YAML: ${(err as Error).message}`]);
  }
  return parseConfig(catalogFileSchema, doc, file).sources;
}

const AZ_URI = /^az:\/\/([^/]+)\/([^/]+)(?:\/(.*))?$/;
const AZURE_BLOB_URL = /^https:\/\/([a-z0-9]+)\.blob\.core\.windows\.net\/([^/?#]+)(?:\/([^?#]*))?$/i;
const ANY_URL = /^[a-z][a-z0-9+.-]*:\/\//i;

/**
 * Where a source path points: `az://account/container[/prefix]`, `https://{account}.blob.core.windows.net/…`, a
 * URL under the configured blob endpoint (e.g. Azurite's `http://127.0.0.1:10000/devstoreaccount1/…`), or a local
 * path resolved against `dir`. Returns a message for anything else.
 */
export function classifySource(
  path: string,
  dir: string,
  endpoint?: BlobEndpoint,
): { type: 'local'; path: string } | { type: 'blob'; account: string; container: string; prefix: string } | string {
  const az = AZ_URI.exec(path);
  if (az) return blob(az[1], az[2], az[3]);
  if (path.startsWith('az://')) return `'${path}' is not az://{account}/{container}[/{prefix}]`;
  const https = AZURE_BLOB_URL.exec(path);
  if (https) return blob(https[1]?.toLowerCase(), decode(https[2]), decode(https[3]));
  if (endpoint && path.startsWith(`${endpoint.url}/`)) {
    const [container, ...rest] = path
      .slice(endpoint.url.length + 1)
      .split(/[?#]/)[0]!
      .split('/');
    if (container) return blob(endpoint.account, decode(container), decode(rest.join('/')));
  }
  if (path.startsWith('file://')) return { type: 'local', path: fileURLToPath(path) };
  if (ANY_URL.test(path)) {
    const known = endpoint
      ? ` or under catalog.blob's endpoint ${endpoint.url}`
      : ' (set catalog.blob to reach another endpoint)';
    return `'${path}' is neither a local path nor a blob location: use az://{account}/{container}[/{prefix}], https://{account}.blob.core.windows.net/{container}[/{prefix}]${known}`;
  }
  return { type: 'local', path: resolve(dir, path) };
}

function blob(account: string | undefined, container: string | undefined, prefix: string | undefined) {
  return {
    type: 'blob' as const,
    account: account ?? '',
    container: container ?? '',
    prefix: (prefix ?? '').replace(/^\/+|\/+$/g, ''),
  };
}

function decode(s: string | undefined): string | undefined {
  try {
    return s === undefined ? undefined : decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The account and blob endpoint of `catalog.blob` (connection string wins over account_url). */
export function blobEndpoint(access: BlobAccessConfig): BlobEndpoint | undefined {
  if (access.connection_string) {
    const kv = parseConnectionString(access.connection_string);
    if (kv.get('usedevelopmentstorage')?.toLowerCase() === 'true') {
      return { account: 'devstoreaccount1', url: 'http://127.0.0.1:10000/devstoreaccount1' };
    }
    const name = kv.get('accountname');
    const suffix = kv.get('endpointsuffix') ?? 'core.windows.net';
    const url =
      kv.get('blobendpoint') ??
      (name ? `${kv.get('defaultendpointsprotocol') ?? 'https'}://${name}.blob.${suffix}` : undefined);
    if (!url) return undefined;
    return { account: name ?? accountFromUrl(url), url: url.replace(/\/+$/, '') };
  }
  if (access.account_url)
    return { account: accountFromUrl(access.account_url), url: access.account_url.replace(/\/+$/, '') };
  return undefined;
}

function parseConnectionString(cs: string): Map<string, string> {
  const kv = new Map<string, string>();
  for (const part of cs.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) kv.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).trim());
  }
  return kv;
}

/** `{account}.blob.…` hosts name the account first; IP-style endpoints (Azurite) in the first path segment. */
function accountFromUrl(url: string): string {
  if (!URL.canParse(url)) return '';
  const u = new URL(url);
  const seg = u.pathname.split('/').find(Boolean);
  if (/^[\d.]+$|^localhost$|^\[/.test(u.hostname) && seg) return seg;
  return u.hostname.split('.')[0] ?? '';
}
