import type { ChatConfig } from '../coordination.config';
import type { MessageView } from '../coordination.types';

/**
 * A summary from an OpenAI-compatible chat-completions endpoint (`llm_api_url`, the full URL or its base) over
 * the channel's recent messages. Rejects on any failure; the caller falls back to statistics.
 */
export async function llmSummary(c: ChatConfig, messages: MessageView[]): Promise<string> {
  const base = c.llm_api_url as string;
  const url = /\/chat\/completions\/?$/.test(base) ? base : `${base.replace(/\/+$/, '')}/chat/completions`;
  const transcript = messages.map((m) => `[${m.created_at}] ${m.agent_id}: ${m.content}`).join('\n');
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(c.llm_api_key ? { authorization: `Bearer ${c.llm_api_key}` } : {}),
    },
    body: JSON.stringify({
      model: c.llm_model,
      max_tokens: c.llm_max_tokens,
      messages: [
        { role: 'system', content: c.llm_system_prompt },
        { role: 'user', content: transcript },
      ],
    }),
    signal: AbortSignal.timeout(c.llm_timeout_seconds * 1000),
  }).catch((err: Error) => {
    if (err.name === 'TimeoutError')
      throw new Error(`the LLM endpoint did not answer within ${c.llm_timeout_seconds} s`);
    throw new Error(
      `the LLM endpoint could not be reached (${(err.cause as Error | undefined)?.message ?? err.message})`,
    );
  });
  if (!res.ok) throw new Error(`the LLM endpoint answered HTTP ${res.status}`);
  const body = (await res.json()) as { choices?: { message?: { content?: unknown } }[] };
  const text = body.choices?.[0]?.message?.content;
  if (typeof text !== 'string' || !text.trim()) throw new Error('the LLM endpoint returned no summary text');
  return text.trim();
}
