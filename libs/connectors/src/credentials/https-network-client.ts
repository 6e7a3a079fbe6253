import type { IncomingHttpHeaders } from 'node:http';
import { request } from 'node:https';
import { AuthError, type INetworkModule, type NetworkRequestOptions, type NetworkResponse } from '@azure/msal-node';

export interface HttpsNetworkClientOptions {
  /** PEM CA certificate(s) to trust in addition to Node's bundled roots (a private or test identity provider). */
  ca: string | Buffer | Array<string | Buffer>;
  /** Per-request limit; MSAL sets none on token requests. Default 30 s. */
  timeoutMs?: number;
}

/**
 * An MSAL network client on node:https that trusts extra CAs. MSAL's default client (global fetch) only
 * trusts NODE_EXTRA_CA_CERTS, which Node reads once at start; use this when the CA is known later.
 */
export function httpsNetworkClient(options: HttpsNetworkClientOptions): INetworkModule {
  const { ca, timeoutMs = 30_000 } = options;
  const send = <T>(method: 'GET' | 'POST', url: string, opts?: NetworkRequestOptions, timeout?: number) =>
    new Promise<NetworkResponse<T>>((resolve, reject) => {
      const body = method === 'POST' ? (opts?.body ?? '') : undefined;
      const headers = {
        ...opts?.headers,
        ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}),
      };
      const req = request(url, { method, headers, ca, timeout: timeout ?? timeoutMs }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (err) => reject(networkError(url, err)));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          try {
            resolve({
              status,
              headers: flatten(res.headers),
              body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as T,
            });
          } catch {
            reject(
              new AuthError(
                'token_parsing_error',
                '',
                `${new URL(url).origin} answered HTTP ${status} with a body that is not JSON`,
              ),
            );
          }
        });
      });
      req.on('timeout', () => req.destroy(new Error(`no response within ${timeout ?? timeoutMs} ms`)));
      req.on('error', (err) => reject(networkError(url, err)));
      req.end(body);
    });
  return {
    sendGetRequestAsync: (url, opts, timeout) => send('GET', url, opts, timeout),
    sendPostRequestAsync: (url, opts) => send('POST', url, opts),
  };
}

// An AuthError passes through MSAL unchanged; any other error would lose its message.
function networkError(url: string, err: Error): AuthError {
  return new AuthError('network_error', '', `Network request to ${new URL(url).origin} failed: ${err.message}`);
}

function flatten(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}
