import { McpServer } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { type CompletionProvider, type PromptProvider, registerPromptMethods } from './prompts';

const principal = { id: 'p', scopes: [] } as never;
const prompts = (available: boolean): PromptProvider => ({
  available: () => available,
  list: () => Promise.resolve({ prompts: [], cache: { ttlMs: 0, cacheScope: 'private' } }),
  get: () => Promise.resolve(undefined),
});
const completions = (available: boolean): CompletionProvider => ({
  available: () => available,
  complete: () => Promise.resolve(undefined),
});

function capabilitiesWith(providers: { prompts?: PromptProvider; completions?: CompletionProvider }) {
  const server = new McpServer({ name: 't', version: '1' }, { capabilities: { tools: {} } });
  registerPromptMethods(server, 'modern', providers, () => principal);
  return server.server.getCapabilities();
}

describe('registerPromptMethods', () => {
  it('declares prompts and completions while their providers are available', () => {
    const caps = capabilitiesWith({ prompts: prompts(true), completions: completions(true) });
    expect(caps.prompts).toEqual({});
    expect(caps.completions).toEqual({});
  });

  it('declares neither while no upstream offers them (a connector whose upstreams have no prompts)', () => {
    const caps = capabilitiesWith({ prompts: prompts(false), completions: completions(false) });
    expect(caps.prompts).toBeUndefined();
    expect(caps.completions).toBeUndefined();
  });
});
