import { z } from 'zod';
import { headerable } from './compact-schema';
import type { ToolDefinition } from './mcp.types';

/** A tool as `tools/list` shows it, for `GET /catalog` (`mcp_tools`): connectors learn schemas without a session. */
export interface ListedTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations?: ToolDefinition['annotations'];
}

const cache = new WeakMap<ToolDefinition, ListedTool>();

export function listedTools(tools: readonly ToolDefinition[]): ListedTool[] {
  return tools.map((t) => {
    let hit = cache.get(t);
    if (!hit) {
      const schema: Record<string, unknown> = {
        ...(t.inputJsonSchema ?? headerable(z.toJSONSchema(t.input, { io: 'input' }))),
      };
      delete schema.$schema;
      hit = {
        name: t.name,
        description: t.description,
        inputSchema: schema,
        ...(t.annotations ? { annotations: t.annotations } : {}),
      };
      cache.set(t, hit);
    }
    return hit;
  });
}
