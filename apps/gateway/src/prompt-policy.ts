import { type CompletionProvider, promptNotFound, type PromptProvider } from '@stoa/mcp';

/**
 * The upstream's prompts as the gateway serves them: only those whose name the tool policy would allow as a tool
 * name (the same allow/deny globs). A prompt is text the upstream's code writes for the agent, often to steer it
 * to tools; an operator's allow-list names everything the gateway exposes, so an unnamed prompt stays hidden and
 * a blocked glob hides prompts too (fail closed). A withheld prompt is answered exactly like an unknown one, on
 * prompts/get and on completion/complete of its arguments; resource-template completions pass (resources are
 * the caller's own and not under the tool policy).
 */
export function policedPrompts(
  upstream: { prompts: PromptProvider; completions: CompletionProvider },
  allowed: (name: string) => boolean,
): { prompts: PromptProvider; completions: CompletionProvider } {
  const { prompts, completions } = upstream;
  return {
    prompts: {
      available: () => prompts.available(),
      list: async (principal) => {
        const listed = await prompts.list(principal);
        return { ...listed, prompts: listed.prompts.filter((p) => allowed(p.name)) };
      },
      get: async (caller, params) => (allowed(params.name) ? prompts.get(caller, params) : undefined),
    },
    completions: {
      available: () => completions.available(),
      complete: async (caller, params) => {
        if (params.ref.type === 'ref/prompt' && !allowed(params.ref.name)) throw promptNotFound(params.ref.name);
        return completions.complete(caller, params);
      },
    },
  };
}
