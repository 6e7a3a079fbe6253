import { ProtocolError } from '@modelcontextprotocol/server';
import type { Principal } from '@stoa/core';
import type { CompletionProvider, PromptProvider } from '@stoa/mcp';
import { describe, expect, it } from 'vitest';
import { gatewayPolicySchema } from './gateway.config';
import { policedPrompts } from './prompt-policy';
import { ToolPolicy } from './tool-policy';

const alice: Principal = { id: 'alice@t', roles: [], scopes: [], source: 'noop' };
const caller = { principal: alice, clientCapabilities: {} };
const argument = { name: 'a', value: '' };

/** The upstream's prompts (two of them) and completions, recording which prompts were fetched. */
function upstream() {
  const fetched: string[] = [];
  const prompts: PromptProvider = {
    available: () => true,
    list: () =>
      Promise.resolve({
        prompts: [{ name: 'summarise_table' }, { name: 'send_report' }],
        cache: { ttlMs: 0, cacheScope: 'private' },
      }),
    get: (_c, p) => {
      fetched.push(p.name);
      return Promise.resolve({ messages: [] });
    },
  };
  const completions: CompletionProvider = {
    available: () => true,
    complete: () => Promise.resolve({ values: ['v'] }),
  };
  return { upstream: { prompts, completions }, fetched };
}

function policed(raw: Record<string, unknown>) {
  const policy = new ToolPolicy(gatewayPolicySchema.parse(raw));
  const { upstream: up, fetched } = upstream();
  return { ...policedPrompts(up, (name) => policy.decide(name, 'demo').allowed), fetched };
}

describe('policedPrompts', () => {
  it('serves every prompt when the policy names nothing', async () => {
    const { prompts } = policed({});
    expect((await prompts.list(alice)).prompts.map((p) => p.name)).toEqual(['summarise_table', 'send_report']);
  });

  it('hides a prompt a blocked glob matches, and answers its prompts/get like an unknown prompt without asking upstream', async () => {
    const { prompts, fetched } = policed({ blocked_tools: ['send_*'] });
    expect((await prompts.list(alice)).prompts.map((p) => p.name)).toEqual(['summarise_table']);
    expect(await prompts.get(caller, { name: 'send_report' })).toBeUndefined();
    expect(await prompts.get(caller, { name: 'summarise_table' })).toEqual({ messages: [] });
    expect(fetched).toEqual(['summarise_table']);
  });

  it('serves only the prompts an allow-list names (fail closed)', async () => {
    const { prompts } = policed({ allowed_tools: ['execute_*', 'summarise_*'] });
    expect((await prompts.list(alice)).prompts.map((p) => p.name)).toEqual(['summarise_table']);
  });

  it('refuses completion of a withheld prompt’s argument as an unknown prompt, and passes template completions', async () => {
    const { completions } = policed({ allowed_tools: ['execute_*'] });
    const refused = await completions
      .complete(caller, { ref: { type: 'ref/prompt', name: 'send_report' }, argument })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ProtocolError);
    expect(refused).toMatchObject({ code: -32602, message: expect.stringContaining('Prompt send_report not found') });
    const template = await completions.complete(caller, {
      ref: { type: 'ref/resource', uri: 'artifact://x' },
      argument,
    });
    expect(template).toEqual({ values: ['v'] });
  });
});
