import { z } from 'zod';
import type { LogLevel, ToolContext, ToolDefinition } from '@stoa/mcp';
import type { McpToolInfo } from './catalog';

/** An upstream tool served by a connector: listed with the upstream's schema verbatim (the upstream validates arguments). */
export function proxyTool(tool: McpToolInfo, handler: ToolDefinition['handler']): ToolDefinition {
  return {
    name: tool.name,
    description: tool.description ?? '',
    input: z.object({}),
    inputJsonSchema: tool.inputSchema,
    annotations: tool.annotations,
    handler,
  };
}

/** Where an upstream call's `notifications/message` go, and the level the upstream is asked to log from. */
export interface LogRelay {
  level: LogLevel;
  send: (level: LogLevel, data: unknown, logger?: string) => void;
}

/** The caller's log messages, for an upstream call that relays them (undefined when the caller gets none). */
export function relayLog(ctx: ToolContext): LogRelay | undefined {
  const level = ctx.logLevel;
  return level ? { level, send: (l, d, n) => void ctx.log(l, d, n) } : undefined;
}

/** The caller's progress, for an upstream call that relays it (a notification that fails never fails the call). */
export function relayProgress(
  ctx: ToolContext,
): ((progress: number, message?: string, total?: number) => void) | undefined {
  const progress = ctx.progress;
  return progress ? (p, m, t) => void progress(p, m, t).catch(() => undefined) : undefined;
}
