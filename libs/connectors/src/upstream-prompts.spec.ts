import { ProtocolError } from '@modelcontextprotocol/server';
import type { Principal } from '@stoa/core';
import { describe, expect, it } from 'vitest';
import type { Upstream } from './upstream';
import type { UpstreamPool } from './upstream-pool';
import { promptResult, UpstreamPrompts } from './upstream-prompts';

const alice: Principal = { id: 'alice@t', roles: [], scopes: [], source: 'noop' };
type Answer = (params: Record<string, unknown>) => Record<string, unknown>;

/** A stand-in for one upstream: its declared capabilities and an answer per method; it records what it was asked. */
function fakeUpstream(name: string, capabilities: string[], answers: Record<string, Answer>) {
  const asked: { method: string; params: Record<string, unknown>; opts: Record<string, unknown> }[] = [];
  const upstream = {
    name,
    healthy: true,
    era: 'modern',
    declares: (c: string) => capabilities.includes(c),
    http: {
      rpc: (method: string, params: Record<string, unknown>, opts: Record<string, unknown>) => {
        asked.push({ method, params, opts });
        const answer = answers[method];
        if (!answer) return Promise.resolve({ error: { code: -32601, message: 'Method not found' } });
        try {
          return Promise.resolve({ result: answer(params) });
        } catch (err) {
          const e = err as ProtocolError;
          return Promise.resolve({ error: { code: e.code, message: e.message } });
        }
      },
    },
  };
  return { upstream: upstream as unknown as Upstream, asked };
}

function promptsOf(...upstreams: Upstream[]): UpstreamPrompts {
  const pool = {
    upstreams: () => upstreams,
    authorization: (u: Upstream, p: Principal) => Promise.resolve(`Bearer ${p.id}-for-${u.name}`),
  };
  return new UpstreamPrompts(pool as unknown as UpstreamPool);
}

const listing =
  (names: string[], hint: Record<string, unknown> = {}): Answer =>
  () => ({ prompts: names.map((name) => ({ name, description: `${name} prompt` })), ...hint });
const getting =
  (names: string[], who: string): Answer =>
  (p) => {
    if (!names.includes(String(p.name))) throw new ProtocolError(-32602, `Prompt ${String(p.name)} not found`);
    return { resultType: 'complete', messages: [{ role: 'user', content: { type: 'text', text: `${who}` } }] };
  };
const caller = { principal: alice, clientCapabilities: { elicitation: {} } };

describe('UpstreamPrompts', () => {
  it('lists every prompt once under its own name, with the strictest of the upstreams’ cache hints', async () => {
    const a = fakeUpstream('w1', ['prompts'], {
      'prompts/list': listing(['p1', 'p2'], { ttlMs: 60_000, cacheScope: 'public' }),
    });
    const b = fakeUpstream('w2', ['prompts'], {
      'prompts/list': listing(['p2', 'p3'], { ttlMs: 5_000, cacheScope: 'public' }),
    });
    const listed = await promptsOf(a.upstream, b.upstream).list(alice);
    expect(listed.prompts.map((p) => p.name)).toEqual(['p1', 'p2', 'p3']);
    expect(listed.cache).toEqual({ ttlMs: 5_000, cacheScope: 'public' });
  });

  it('asks only upstreams that declare prompts, and is unavailable when none does', async () => {
    const plain = fakeUpstream('plain', [], { 'prompts/list': listing(['hidden']) });
    const prompts = promptsOf(plain.upstream);
    expect(prompts.available()).toBe(false);
    expect((await prompts.list(alice)).prompts).toEqual([]);
    expect(plain.asked).toEqual([]);
  });

  it('sends prompts/get to the upstream that lists the prompt, with the caller’s credential, capabilities and retry fields', async () => {
    const a = fakeUpstream('a', ['prompts'], { 'prompts/list': listing(['pa']), 'prompts/get': getting(['pa'], 'a') });
    const b = fakeUpstream('b', ['prompts'], { 'prompts/list': listing(['pb']), 'prompts/get': getting(['pb'], 'b') });
    const got = await promptsOf(a.upstream, b.upstream).get(
      { ...caller, inputResponses: { ctx: { action: 'accept' } }, requestState: 'st' },
      { name: 'pb', arguments: { x: '1' } },
    );
    expect(got).toEqual({ messages: [{ role: 'user', content: { type: 'text', text: 'b' } }] });
    expect(a.asked.map((r) => r.method)).toEqual(['prompts/list']);
    const get = b.asked.find((r) => r.method === 'prompts/get')!;
    expect(get.params).toEqual({
      name: 'pb',
      arguments: { x: '1' },
      inputResponses: { ctx: { action: 'accept' } },
      requestState: 'st',
    });
    expect(get.opts).toMatchObject({ authorization: 'Bearer alice@t-for-b', clientCapabilities: { elicitation: {} } });
  });

  it('answers undefined for a prompt no upstream lists for the caller, after listing once', async () => {
    const a = fakeUpstream('a', ['prompts'], { 'prompts/list': listing(['pa']), 'prompts/get': getting(['pa'], 'a') });
    expect(await promptsOf(a.upstream).get(caller, { name: 'nope' })).toBeUndefined();
    expect(a.asked.map((r) => r.method)).toEqual(['prompts/list']);
  });

  it('lists again when the upstream that listed a prompt no longer has it, and finds where it went', async () => {
    let aHas = ['moving'];
    const a = fakeUpstream('a', ['prompts'], {
      'prompts/list': () => listing(aHas)({}),
      'prompts/get': (p) => getting(aHas, 'a')(p),
    });
    const b = fakeUpstream('b', ['prompts'], {
      'prompts/list': () => listing(aHas.length ? [] : ['moving'])({}),
      'prompts/get': getting(['moving'], 'b'),
    });
    const prompts = promptsOf(a.upstream, b.upstream);
    await prompts.list(alice);
    aHas = [];
    const got = await prompts.get(caller, { name: 'moving' });
    expect(got?.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'b' } }]);
  });

  it('completes a prompt argument where the prompt is and a template variable where the template is', async () => {
    const complete =
      (who: string): Answer =>
      () => ({ completion: { values: [who], total: 1, hasMore: false } });
    const a = fakeUpstream('a', ['prompts', 'completions'], {
      'prompts/list': listing(['pa']),
      'resources/templates/list': () => ({ resourceTemplates: [] }),
      'completion/complete': complete('a'),
    });
    const b = fakeUpstream('b', ['completions'], {
      'resources/templates/list': () => ({ resourceTemplates: [{ uriTemplate: 'b://{id}', name: 't' }] }),
      'completion/complete': complete('b'),
    });
    const { completions } = promptsOf(a.upstream, b.upstream);
    const argument = { name: 'id', value: 'x' };
    const prompt = await completions.complete(caller, { ref: { type: 'ref/prompt', name: 'pa' }, argument });
    const template = await completions.complete(caller, { ref: { type: 'ref/resource', uri: 'b://{id}' }, argument });
    const unknown = await completions.complete(caller, { ref: { type: 'ref/resource', uri: 'c://{id}' }, argument });
    expect([prompt, template, unknown]).toEqual([
      { values: ['a'], total: 1, hasMore: false },
      { values: ['b'], total: 1, hasMore: false },
      undefined,
    ]);
  });
});

describe('promptResult', () => {
  it('passes an input_required answer back as it came', () => {
    const r = {
      resultType: 'input_required',
      inputRequests: { k: { method: 'elicitation/create' } },
      requestState: 's',
    };
    expect(promptResult(r)).toEqual(r);
  });

  it('drops the upstream’s resultType and server identity from a prompt, keeping its other _meta', () => {
    const r = {
      resultType: 'complete',
      description: 'd',
      messages: [],
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'up' }, keep: 1 },
    };
    expect(promptResult(r)).toEqual({ description: 'd', messages: [], _meta: { keep: 1 } });
  });
});
