import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { checkConfig } from '@stoa/config';
import { upstreamAuthSchema, type UpstreamAuthConfig } from '@stoa/connectors';

/**
 * One peer server: its root URL (not `/mcp`) and, optionally, how to authenticate to it.
 * No `auth` = the reference behaviour: the caller's bearer token is forwarded.
 */
export interface PeerSpec {
  url: string;
  auth?: UpstreamAuthConfig;
}

const peerObjectSchema = z
  .strictObject({
    /** The peer's base URL; http(s) rules are checked per send (reference §6.4), not here. */
    url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL, e.g. http://gis-server:8000' }),
    /** Same block as an upstream's `auth:` (passthrough | obo | client_credentials | none). Absent must stay
     * absent (upstreamAuthSchema alone would fill in its default), hence the `undefined` branch first. */
    auth: z.union([z.undefined(), upstreamAuthSchema]),
  })
  .transform((peer): PeerSpec => (peer.auth === undefined ? { url: peer.url } : { url: peer.url, auth: peer.auth }));

/** One peer entry: the reference's `name: url` string, or `{ url, auth? }`. */
export const peerSpecSchema = z.preprocess(
  (value) => (typeof value === 'string' ? { url: value } : value),
  peerObjectSchema,
);

/** `peers:` in server.yaml — name → peer (reference ServerConfig.peer_registry). */
export const peersConfigSchema = z.record(z.string().trim().min(1), peerSpecSchema).default({});
export type PeersConfig = z.output<typeof peersConfigSchema>;

/**
 * The peer registry (reference §6.2): config `peers:` overlaid by AGORA_PEER_REGISTRY (inline JSON object
 * when the trimmed value starts with `{`, else a path to a JSON file). An unreadable, invalid or non-object
 * value is ignored with a warning, as is each entry that is not a valid peer. This server's own name is removed.
 */
export function loadPeerRegistry(
  configPeers: Record<string, PeerSpec>,
  envValue: string | undefined,
  ownName: string,
  warn: (m: string) => void,
): Map<string, PeerSpec> {
  const registry = new Map(Object.entries(configPeers));
  const raw = envValue?.trim();
  if (raw) {
    for (const [key, value] of Object.entries(readEnvRegistry(raw, warn))) {
      const name = key.trim();
      if (!name) {
        warn('AGORA_PEER_REGISTRY entry with an empty name ignored');
        continue;
      }
      const peer = checkConfig(peerSpecSchema, value);
      if (peer.success) registry.set(name, peer.data);
      else warn(`AGORA_PEER_REGISTRY entry '${name}' ignored: ${peer.problems.join('; ')}`);
    }
  }
  registry.delete(ownName);
  return registry;
}

function readEnvRegistry(raw: string, warn: (m: string) => void): Record<string, unknown> {
  const inline = raw.startsWith('{');
  // Never echo inline JSON: its auth blocks may hold client secrets.
  const source = inline ? 'inline JSON' : raw;
  let parsed: unknown;
  try {
    parsed = JSON.parse(inline ? raw : readFileSync(raw, 'utf8'));
  } catch (err) {
    warn(`Failed to load AGORA_PEER_REGISTRY (${source}): ${err instanceof Error ? err.message : String(err)}`);
    return {};
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    warn(`AGORA_PEER_REGISTRY (${source}) is not a JSON object; ignoring`);
    return {};
  }
  return parsed as Record<string, unknown>;
}
