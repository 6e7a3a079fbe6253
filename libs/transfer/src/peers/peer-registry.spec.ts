import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { checkConfig } from '@stoa/config';
import { loadPeerRegistry, peersConfigSchema, peerSpecSchema, type PeerSpec } from './peer-registry';

const dir = mkdtempSync(join(tmpdir(), 'stoa-peers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let warnings: string[] = [];
const warn = (m: string) => warnings.push(m);
beforeEach(() => {
  warnings = [];
});

const config: Record<string, PeerSpec> = {
  gis: { url: 'http://gis-server:8000' },
  chem: { url: 'http://chemistry-server:8000' },
};

function load(envValue: string | undefined, own = 'alpha'): Record<string, PeerSpec> {
  return Object.fromEntries(loadPeerRegistry(config, envValue, own, warn));
}

describe('peerSpecSchema', () => {
  it('accepts the reference string form as a peer without auth', () => {
    expect(peerSpecSchema.parse('http://gis-server:8000')).toEqual({ url: 'http://gis-server:8000' });
  });

  it('keeps an object form without auth free of an auth block', () => {
    expect(peerSpecSchema.parse({ url: 'https://gis.example.com' })).toEqual({ url: 'https://gis.example.com' });
  });

  it('parses auth exactly like an upstream auth block', () => {
    expect(
      peerSpecSchema.parse({ url: 'https://gis.example.com', auth: { mode: 'passthrough', audience: 'api://stoa' } }),
    ).toEqual({
      url: 'https://gis.example.com',
      auth: { mode: 'passthrough', audience: 'api://stoa' },
    });
    expect(peerSpecSchema.parse({ url: 'https://gis.example.com', auth: { mode: 'none' } })).toEqual({
      url: 'https://gis.example.com',
      auth: { mode: 'none' },
    });
  });

  it('reports auth problems under the auth key', () => {
    const result = checkConfig(peerSpecSchema, {
      url: 'https://gis.example.com',
      auth: { mode: 'passthrough', audience: '' },
    });
    expect(result.success).toBe(false);
    expect(!result.success && result.problems).toEqual([expect.stringMatching(/^auth\.audience: /)]);
  });

  it('names an unknown key inside a peer auth block with the nearest valid name', () => {
    const result = checkConfig(peerSpecSchema, {
      url: 'https://gis.example.com',
      auth: { mode: 'passthrough', audiance: 'api://gis' },
    });
    expect(!result.success && result.problems).toContain('auth.audiance: unknown key; did you mean audience?');
  });

  it('refuses URLs that are not http(s) and unknown keys', () => {
    expect(peerSpecSchema.safeParse('ftp://gis-server').success).toBe(false);
    expect(peerSpecSchema.safeParse('gis-server:8000').success).toBe(false);
    expect(peerSpecSchema.safeParse({ url: 'http://gis-server:8000', token: 'x' }).success).toBe(false);
  });
});

describe('peersConfigSchema', () => {
  it('defaults to no peers and parses both forms', () => {
    expect(peersConfigSchema.parse(undefined)).toEqual({});
    expect(
      peersConfigSchema.parse({ gis: 'http://gis-server:8000', chem: { url: 'https://chem.example.com' } }),
    ).toEqual({
      gis: { url: 'http://gis-server:8000' },
      chem: { url: 'https://chem.example.com' },
    });
  });

  it('names the bad peer in its issues', () => {
    const result = peersConfigSchema.safeParse({ gis: 'not a url' });
    expect(result.error?.issues[0]?.path).toEqual(['gis', 'url']);
  });
});

describe('loadPeerRegistry', () => {
  it('returns the config peers when the env value is unset or blank', () => {
    expect(load(undefined)).toEqual(config);
    expect(load('   ')).toEqual(config);
    expect(warnings).toEqual([]);
  });

  it('overlays inline JSON from the env on the config peers', () => {
    expect(
      load(
        ' {"gis": "https://gis.example.com", "earth": {"url": "http://earth-server:8000", "auth": {"mode": "none"}}} ',
      ),
    ).toEqual({
      gis: { url: 'https://gis.example.com' },
      chem: { url: 'http://chemistry-server:8000' },
      earth: { url: 'http://earth-server:8000', auth: { mode: 'none' } },
    });
  });

  it('reads a JSON file when the env value does not start with {', () => {
    const file = join(dir, 'peers.json');
    writeFileSync(file, JSON.stringify({ earth: 'http://earth-server:8000' }));
    expect(load(file).earth).toEqual({ url: 'http://earth-server:8000' });
  });

  it('removes the server itself', () => {
    expect(Object.keys(load('{"alpha": "http://alpha-server:8000"}', 'alpha'))).toEqual(['gis', 'chem']);
    expect(Object.keys(load(undefined, 'gis'))).toEqual(['chem']);
  });

  it('ignores invalid inline JSON with a warning that does not echo the value', () => {
    expect(load('{"gis": "http://x", "secret": ')).toEqual(config);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^Failed to load AGORA_PEER_REGISTRY \(inline JSON\): /);
    expect(warnings[0]).not.toContain('secret');
  });

  it('ignores an unreadable file with a warning naming the path', () => {
    const missing = join(dir, 'missing.json');
    expect(load(missing)).toEqual(config);
    expect(warnings[0]).toContain(`Failed to load AGORA_PEER_REGISTRY (${missing}): `);
  });

  it('ignores a file holding invalid JSON', () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, 'gis: http://gis');
    expect(load(file)).toEqual(config);
    expect(warnings[0]).toContain('Failed to load AGORA_PEER_REGISTRY');
  });

  it('ignores JSON that is not an object', () => {
    const file = join(dir, 'list.json');
    writeFileSync(file, '["http://gis-server:8000"]');
    expect(load(file)).toEqual(config);
    expect(warnings).toEqual([`AGORA_PEER_REGISTRY (${file}) is not a JSON object; ignoring`]);
  });

  it('ignores only the entries that are not valid peers', () => {
    expect(load('{"earth": "http://earth-server:8000", "bad": 42, "ftp": "ftp://x"}')).toEqual({
      ...config,
      earth: { url: 'http://earth-server:8000' },
    });
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/^AGORA_PEER_REGISTRY entry 'bad' ignored: /);
    expect(warnings[1]).toMatch(/^AGORA_PEER_REGISTRY entry 'ftp' ignored: url: must be an http\(s\) URL/);
  });
});
