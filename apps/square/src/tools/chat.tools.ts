import { z } from 'zod';
import type { ChatService } from '@stoa/coordination';
import type { ToolDefinition } from '@stoa/mcp';
import { agentTool, type ToolDeps } from './square-tool';

/** The reference's chat plugin tools (prefix `chat_`). */
export function chatTools(deps: ToolDeps, chat: ChatService): ToolDefinition[] {
  return [
    agentTool(deps, {
      name: 'chat_post_message',
      description:
        'Post to a channel (created on first post; messages are append-only). Returns message_id and created_at.',
      shape: {
        channel: z.string().describe("e.g. '#general'"),
        content: z.string(),
        parent_id: z.string().optional().describe('The message this replies to'),
        reply_to: z.string().optional().describe('Same as parent_id'),
      },
      run: async (a, agent) => {
        const posted = await chat.post(agent.id, {
          channel: a.channel,
          content: a.content,
          parent_id: a.parent_id ?? a.reply_to,
        });
        return { message_id: posted.message_id, channel: posted.channel, created_at: posted.created_at };
      },
    }),
    agentTool(deps, {
      name: 'chat_read_messages',
      description:
        'Messages of a channel: newest first by default (order "asc" for oldest first); since is an inclusive ISO time; unknown channels are empty.',
      readOnly: true,
      shape: {
        channel: z.string(),
        since: z.string().optional().describe('ISO-8601; messages at or after it'),
        limit: z.number().default(3).describe('0–1000'),
        order: z.enum(['desc', 'asc']).default('desc'),
      },
      run: async (a) => ({ messages: await chat.read(a) }),
    }),
    agentTool(deps, {
      name: 'chat_list_channels',
      description: 'Channels by name with topic, message_count and last_activity_at.',
      readOnly: true,
      shape: { prefix: z.string().optional() },
      run: async (a) => ({ channels: await chat.listChannels(a.prefix) }),
    }),
    agentTool(deps, {
      name: 'chat_summarize_channel',
      description: 'Statistics of a channel (message_count, participants, time_span_hours) and a summary.',
      readOnly: true,
      shape: { channel: z.string(), since: z.string().optional() },
      run: (a) => chat.summarize(a.channel, a.since),
    }),
    agentTool(deps, {
      name: 'chat_await_update',
      description:
        'Wait (instead of polling) until nmsg messages NEWER than this call arrive in a channel, or timeout seconds pass. With since, messages at or after it count too. Returns {messages, waited, timed_out}.',
      readOnly: true,
      shape: {
        channel: z.string(),
        nmsg: z.number().default(1),
        timeout: z.number().default(120).describe('seconds'),
        since: z.string().optional(),
      },
      run: (a, _agent, ctx) => chat.awaitUpdate(a, ctx.signal),
    }),
  ];
}
