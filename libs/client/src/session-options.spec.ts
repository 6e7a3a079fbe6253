import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '@stoa/core';
import { mcpEndpoint, resolveOptions, selectServers } from './session-options';

describe('session options', () => {
  it('resolves the MCP endpoint with or without /mcp and trailing slashes', () => {
    const urls = ['http://h:8000', 'http://h:8000/', 'http://h:8000/mcp', 'http://h:8000/mcp/'];
    expect(urls.map(mcpEndpoint)).toEqual(Array(4).fill('http://h:8000/mcp'));
    expect(mcpEndpoint('https://h/team/a/mcp')).toBe('https://h/team/a/mcp');
  });

  it('applies defaults', () => {
    expect(resolveOptions()).toEqual({
      reconnectBaseMs: 1000,
      healthIntervalMs: 15_000,
      connectTimeoutMs: 10_000,
      era: 'auto',
    });
  });

  it('lists every bad key in one error', () => {
    const act = () => selectServers([{ name: 'a__b', url: 'ftp://x' }], undefined);
    expect(act).toThrow(InvalidInputError);
    expect(act).toThrow(/0\.name: .*0\.url: must be an http\(s\) URL/);
  });

  it('rejects repeated server names', () => {
    const spec = { name: 'alpha', url: 'http://h:1' };
    expect(() => selectServers([spec, spec], undefined)).toThrow('Two servers are named "alpha"');
  });

  it('keeps servers with the role and servers without roles', () => {
    const servers = [
      { name: 'a', url: 'http://h:1', roles: ['compute'] },
      { name: 'b', url: 'http://h:2', roles: ['analytics'] },
      { name: 'c', url: 'http://h:3' },
    ];
    expect(selectServers(servers, 'compute').map((s) => s.name)).toEqual(['a', 'c']);
    expect(selectServers(servers, undefined).map((s) => s.name)).toEqual(['a', 'b', 'c']);
  });
});
