import { describe, expect, it } from 'vitest';
import { combinedResources, type ResourceProvider } from './resources';

const provider = (uri: string, scope: 'public' | 'private', ttlMs: number): ResourceProvider => ({
  cache: { list: { ttlMs, cacheScope: scope }, templates: { ttlMs, cacheScope: scope } },
  list: () => Promise.resolve([{ uri, name: uri }]),
  templates: () => Promise.resolve([]),
  read: (_p, u) =>
    Promise.resolve(u === uri ? { contents: [{ uri, text: uri }], cache: { ttlMs, cacheScope: scope } } : undefined),
});
const principal = { id: 'p', scopes: [] } as never;

describe('combinedResources', () => {
  it('lists every provider in order and reads a URI from the provider that has it', async () => {
    const both = combinedResources([provider('a://1', 'public', 60_000), provider('b://2', 'private', 0)]);
    expect((await both.list(principal)).map((r) => r.uri)).toEqual(['a://1', 'b://2']);
    expect((await both.read(principal, 'b://2'))?.contents).toEqual([{ uri: 'b://2', text: 'b://2' }]);
    expect(await both.read(principal, 'c://3')).toBeUndefined();
  });

  it('gives a joined listing the stricter hint: private over public, the shorter lifetime', () => {
    const both = combinedResources([provider('a://1', 'public', 60_000), provider('b://2', 'private', 5_000)]);
    expect(both.cache.list).toEqual({ ttlMs: 5_000, cacheScope: 'private' });
  });
});
