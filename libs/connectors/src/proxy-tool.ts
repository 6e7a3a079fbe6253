import { z } from 'zod';
import type { ToolContext, ToolDefinition } from '@stoa/mcp';
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

/** The caller's progress, for an upstream call that relays it (a notification that fails never fails the call). */
export function relayProgress(
  ctx: ToolContext,
): ((progress: number, message?: string, total?: number) => void) | undefined {
  const progress = ctx.progress;
  return progress ? (p, m, t) => void progress(p, m, t).catch(() => undefined) : undefined;
}
