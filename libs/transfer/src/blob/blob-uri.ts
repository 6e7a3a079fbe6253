import { InvalidInputError } from '@stoa/core';

/** The blob locator forms the store accepts (for messages). */
export const URI_FORMS =
  'Expected az://account/container/path, abfss://container@account.dfs.core.windows.net/path, ' +
  'https://account.blob.core.windows.net/container/path (or .dfs.core.windows.net), or a URL under the configured account URL.';

/** A blob location: account name, container, blob path (decoded). */
export interface BlobUri {
  account: string;
  container: string;
  path: string;
}

/**
 * Parses a blob locator. Returns undefined when `uri` is not a blob URI at all; throws InvalidInputError
 * when it looks like one but is malformed. A query string (e.g. a SAS) is ignored: the store uses its own credentials.
 */
export function parseBlobUri(uri: string, accountUrl?: string): BlobUri | undefined {
  let u: URL;
  try {
    u = new URL(uri.trim());
  } catch {
    return undefined;
  }
  const scheme = u.protocol.slice(0, -1);
  if (scheme === 'az') return splitPath(u.hostname.toLowerCase(), u.pathname, uri);
  if (scheme === 'abfss') {
    const account = /^([a-z0-9]+)\.dfs\.core\.windows\.net$/.exec(u.hostname.toLowerCase())?.[1];
    if (!account || !u.username) throw malformed(uri);
    return splitPath(account, `/${u.username}${u.pathname}`, uri);
  }
  if (scheme !== 'http' && scheme !== 'https') return undefined;
  if (accountUrl) {
    const base = new URL(accountUrl);
    const basePath = base.pathname.replace(/\/+$/, '');
    if (u.origin === base.origin && u.pathname.startsWith(`${basePath}/`)) {
      return splitPath(accountNameOf(base), u.pathname.slice(basePath.length), uri);
    }
  }
  const account = /^([a-z0-9]+)\.(?:blob|dfs)\.core\.windows\.net$/.exec(u.hostname)?.[1];
  return scheme === 'https' && account ? splitPath(account, u.pathname, uri) : undefined;
}

function splitPath(account: string, pathname: string, uri: string): BlobUri {
  const rest = pathname.replace(/^\/+/, '');
  const slash = rest.indexOf('/');
  if (!account || slash <= 0 || slash === rest.length - 1) throw malformed(uri);
  try {
    return {
      account,
      container: decodeURIComponent(rest.slice(0, slash)),
      path: decodeURIComponent(rest.slice(slash + 1)),
    };
  } catch {
    throw malformed(uri);
  }
}

/** The SDK's rule: `{account}.blob.…` hosts, else the first path segment of IP-style (emulator) URLs. */
function accountNameOf(url: URL): string {
  const [first, second] = url.hostname.split('.');
  if (second === 'blob' || second === 'dfs') return first ?? '';
  const ipStyle = /^(localhost|host\.docker\.internal|\[.*\]|\d{1,3}(\.\d{1,3}){3})$/.test(url.hostname);
  // A custom domain names no account: the host stands for it (BlobStore.account does the same).
  return (ipStyle ? url.pathname.split('/')[1] : undefined) || url.host;
}

function malformed(uri: string): InvalidInputError {
  return new InvalidInputError(`Malformed blob URI '${sanitize(uri)}'. ${URI_FORMS}`);
}

/** Drops the query (a SAS token is a credential) and fragment for messages and logs. */
export function sanitize(uri: string): string {
  return uri.trim().split(/[?#]/, 1)[0] ?? '';
}
