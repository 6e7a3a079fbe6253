import { z } from 'zod';
import { positiveInt } from '@stoa/config';

/** `chat:` — the chat plugin's limits (the reference's names and defaults) and the optional LLM summary. */
export const chatConfigSchema = z
  .strictObject({
    max_message_length: positiveInt.default(100_000).meta({ env: 'SQUARE_MAX_MESSAGE_LENGTH' }),
    max_channels: positiveInt.default(1_000).meta({ env: 'SQUARE_MAX_CHANNELS' }),
    /** Posts per agent per minute (shared by every replica when Redis is configured). */
    max_messages_per_minute: positiveInt.default(1_200).meta({ env: 'SQUARE_MAX_MESSAGES_PER_MINUTE' }),
    /** Concurrent chat_await_update calls per channel on one replica. */
    max_waiters_per_channel: positiveInt.default(100),
    /** Longest chat_await_update / signal_wait / lock wait, in seconds. */
    max_wait_seconds: positiveInt.default(600),
    /** OpenAI-compatible chat-completions endpoint for chat_summarize_channel; unset → statistics only. */
    llm_api_url: z
      .url({ protocol: /^https?$/ })
      .optional()
      .meta({ env: 'SQUARE_LLM_API_URL' }),
    llm_api_key: z.string().optional().meta({ env: 'SQUARE_LLM_API_KEY' }),
    llm_model: z.string().default('gpt-4o-mini').meta({ env: 'SQUARE_LLM_MODEL' }),
    llm_system_prompt: z
      .string()
      .default('Summarize this multi-agent chat channel in a few sentences: decisions, open questions, who does what.'),
    llm_max_tokens: positiveInt.default(500),
    llm_timeout_seconds: positiveInt.default(30),
  })
  .prefault({});
export type ChatConfig = z.output<typeof chatConfigSchema>;

/** `presence:` — every call is a heartbeat; silence makes an agent offline. */
export const presenceConfigSchema = z
  .strictObject({
    /** An agent not heard from for this long is offline (its locks are released, its departure announced). */
    offline_after_seconds: positiveInt.default(300).meta({ env: 'SQUARE_OFFLINE_AFTER_SECONDS' }),
    /** How often each replica looks for silent agents. */
    sweep_interval_seconds: positiveInt.default(5),
  })
  .prefault({});
export type PresenceConfig = z.output<typeof presenceConfigSchema>;

/** `board:` and `locks:` bounds. */
export const boardConfigSchema = z
  .strictObject({
    /** Largest value (JSON text) in bytes. */
    max_value_bytes: positiveInt.default(1_000_000),
    /** Versions kept per key (older ones are deleted). */
    max_versions: positiveInt.default(100),
  })
  .prefault({});
export type BoardConfig = z.output<typeof boardConfigSchema>;

export const lockConfigSchema = z
  .strictObject({
    /** Longest lease a caller may ask for. */
    max_ttl_seconds: positiveInt.default(3_600),
  })
  .prefault({});
export type LockConfig = z.output<typeof lockConfigSchema>;

/** Everything the coordination lib reads. */
export interface CoordinationOptions {
  /** Square name (prefix of Redis keys). */
  name: string;
  /** This process (events it published itself are not delivered twice). */
  replica: string;
  /** Redis for the event bus and rate limits shared by replicas; unset → in-process. */
  redisUrl?: string;
  chat: ChatConfig;
  presence: PresenceConfig;
  board: BoardConfig;
  locks: LockConfig;
}
