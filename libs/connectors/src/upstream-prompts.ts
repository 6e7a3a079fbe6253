import { LRUCache } from 'lru-cache';
import type { Principal } from '@stoa/core';
import type {
  CacheHint,
  CompletionProvider,
  McpPrompt,
  McpResourceTemplate,
  PromptCaller,
  PromptGetParams,
  PromptProvider,
} from '@stoa/mcp';
import type { Upstream } from './upstream';
import type { UpstreamPool } from './upstream-pool';
import { isNotFound, type Listing, listEach, strictest, uniqueBy } from './upstream-listing';
import { upstreamRequest } from './upstream-requests';

const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
type Where = LRUCache<string, string[]>;

/**
 * The prompts of every healthy upstream that declares them, and `completion/complete` of those that declare
 * completions, for the caller, served by a connector. Names pass through unprefixed; the listing is the
 * upstreams' listings joined (each name once: identical workers list the same prompts), with the strictest of
 * their cache hints. A prompt (and a completion of its arguments) goes to the upstreams that listed it, a
 * completion of a resource template's variable to those that listed the template, each asked in turn with the
 * caller's own identity and declared capabilities (a 2026-07-28 `input_required` answer passes back unchanged, and
 * its retry goes to the same upstream). A name no upstream lists for the caller is answered as unknown.
 */
export class UpstreamPrompts implements PromptProvider {
  /** Where prompt names and template URIs were last listed (upstream names); a miss lists again. */
  private readonly promptsAt: Where = new LRUCache({ max: 10_000 });
  private readonly templatesAt: Where = new LRUCache({ max: 10_000 });

  constructor(private readonly pool: UpstreamPool) {}

  available(): boolean {
    return this.declaring('prompts').length > 0;
  }

  async list(principal: Principal): Promise<{ prompts: McpPrompt[]; cache: CacheHint }> {
    const lists = await this.listPrompts(principal);
    return {
      prompts: uniqueBy(
        lists.flatMap((l) => l.items),
        (p) => p.name,
      ),
      cache: strictest(lists.map((l) => l.cache)),
    };
  }

  async get(caller: PromptCaller, params: PromptGetParams): Promise<Record<string, unknown> | undefined> {
    const retry = {
      ...(caller.inputResponses ? { inputResponses: caller.inputResponses } : {}),
      ...(caller.requestState !== undefined ? { requestState: caller.requestState } : {}),
    };
    const r = await this.route(
      params.name,
      this.promptsAt,
      () => this.listPrompts(caller.principal),
      'prompts',
      (u) => this.ask(u, caller, 'prompts/get', { ...params, ...retry }, params.name),
    );
    return r && promptResult(r);
  }

  /** `completion/complete`: a prompt's argument where the prompt is, a template's variable where the template is. */
  readonly completions: CompletionProvider = {
    available: () => this.declaring('completions').length > 0,
    complete: async (caller, params) => {
      const { ref } = params;
      const ask = (u: Upstream) => this.ask(u, caller, 'completion/complete', { ...params });
      const r =
        ref.type === 'ref/prompt'
          ? await this.route(ref.name, this.promptsAt, () => this.listPrompts(caller.principal), 'completions', ask)
          : await this.route(ref.uri, this.templatesAt, () => this.listTemplates(caller.principal), 'completions', ask);
      return r && ((r.completion as Record<string, unknown> | undefined) ?? { values: [] });
    },
  };

  /**
   * `ask` of each upstream (declaring `capability`) that listed `key`, until one has it. Where nothing is known
   * the listing runs first; where every known upstream answered "not found" it runs again (the key moved).
   */
  private async route(
    key: string,
    at: Where,
    relist: () => Promise<unknown>,
    capability: string,
    ask: (u: Upstream) => Promise<Record<string, unknown>>,
  ): Promise<Record<string, unknown> | undefined> {
    const tried = new Set<string>();
    const known = at.has(key);
    for (const round of known ? ['cached', 'relisted'] : ['relisted']) {
      if (round === 'relisted') await relist();
      const names = at.get(key) ?? [];
      for (const upstream of this.declaring(capability).filter((u) => names.includes(u.name) && !tried.has(u.name))) {
        tried.add(upstream.name);
        try {
          return await ask(upstream);
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      }
    }
    return undefined;
  }

  private ask(
    upstream: Upstream,
    caller: PromptCaller,
    method: string,
    params: Record<string, unknown>,
    name?: string,
  ): Promise<Record<string, unknown>> {
    return upstreamRequest(this.pool, upstream, caller.principal, method, params, name, caller.clientCapabilities);
  }

  private async listPrompts(principal: Principal): Promise<Listing<McpPrompt>[]> {
    const lists = await listEach(this.pool, this.declaring('prompts'), 'prompts/list', principal, (r) =>
      (r.prompts as McpPrompt[] | undefined)?.filter((p) => typeof p?.name === 'string'),
    );
    remember(this.promptsAt, lists, (p) => p.name);
    return lists;
  }

  private async listTemplates(principal: Principal): Promise<void> {
    const lists = await listEach(
      this.pool,
      this.declaring('completions'),
      'resources/templates/list',
      principal,
      (r) => r.resourceTemplates as McpResourceTemplate[] | undefined,
    );
    remember(this.templatesAt, lists, (t) => t.uriTemplate);
  }

  /** Healthy upstreams that declared `capability`, in pool order (a retry reaches the same worker). */
  private declaring(capability: string): Upstream[] {
    return this.pool.upstreams().filter((u) => u.healthy && u.declares(capability));
  }
}

/** Records which upstreams listed each key in this round of listings. */
function remember<T>(at: Where, lists: Listing<T>[], key: (item: T) => string): void {
  const round = new Map<string, string[]>();
  for (const { upstream, items } of lists)
    for (const item of items) round.set(key(item), [...(round.get(key(item)) ?? []), upstream.name]);
  for (const [k, names] of round) at.set(k, names);
}

/**
 * An upstream's prompts/get answer as this connector gives it: an `input_required` result as it came (the client
 * answers it and retries here), otherwise the prompt without the upstream's envelope fields (this server stamps
 * its own).
 */
export function promptResult(r: Record<string, unknown>): Record<string, unknown> {
  if (r.resultType === 'input_required') {
    const { resultType, inputRequests, requestState } = r;
    return { resultType, ...(inputRequests ? { inputRequests } : {}), ...(requestState ? { requestState } : {}) };
  }
  const prompt = { ...r };
  delete prompt.resultType;
  const meta = { ...(r._meta as Record<string, unknown> | undefined) };
  delete meta[SERVER_INFO];
  if (Object.keys(meta).length) prompt._meta = meta;
  else delete prompt._meta;
  return prompt;
}
