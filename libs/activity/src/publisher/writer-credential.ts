import type { LoggerService } from '@nestjs/common';
import type { AccessToken, TokenCredential } from '@azure/identity';
import type { ActivityPublisherConfig } from './publisher.config';

/** The `Authorization` header of the next POST, or undefined to send none. */
export type WriterCredential = () => Promise<string | undefined>;

/** Renew a token this long before it expires. */
const RENEW_MS = 5 * 60_000;

/**
 * How a publisher proves it may write: an Entra token for `{audience}/.default` from the default Azure credential
 * (a failure sends the POST without one, as the reference does), else the shared secret, else nothing.
 */
export function writerCredential(
  config: Pick<ActivityPublisherConfig, 'audience' | 'secret'>,
  logger: LoggerService,
  credential?: TokenCredential,
): WriterCredential {
  const { audience, secret } = config;
  if (!audience) return () => Promise.resolve(secret && `Bearer ${secret}`);
  const scope = `${audience.replace(/\/+$/, '')}/.default`;
  let cached: AccessToken | undefined;
  let source: Promise<TokenCredential> | undefined;
  return async () => {
    if (cached && cached.expiresOnTimestamp - RENEW_MS > Date.now()) return `Bearer ${cached.token}`;
    try {
      // Loaded on first use: apps without an audience never pay for the Azure SDK.
      source ??= credential
        ? Promise.resolve(credential)
        : import('@azure/identity').then((m) => new m.DefaultAzureCredential());
      cached = (await (await source).getToken(scope)) ?? undefined;
      return cached ? `Bearer ${cached.token}` : undefined;
    } catch (err) {
      logger.debug?.({ err: (err as Error).message, scope }, 'no token for the activity app; sending without one');
      return undefined;
    }
  };
}
