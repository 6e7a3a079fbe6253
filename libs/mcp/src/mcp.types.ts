import type { Principal } from '@stoa/core';
import type { z } from 'zod';

/** What a tool handler knows about its call. */
export interface ToolContext {
  principal: Principal;
  /** `Mcp-Session-Id` of a 2025-era sessionful client; undefined for stateless 2026-07-28 clients. */
  transportSessionId?: string;
  /** Aborted when the client cancels or disconnects. */
  signal: AbortSignal;
  /** Present when the caller asked for progress. */
  progress?: (progress: number, message?: string, total?: number) => Promise<void>;
}

/** One MCP tool: name, description, zod input schema and handler. Handlers return JSON-able values or text. */
export interface ToolDefinition<S extends z.ZodObject = z.ZodObject> {
  name: string;
  description: string;
  input: S;
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean; title?: string };
  handler: (args: z.output<S>, ctx: ToolContext) => Promise<unknown>;
}

/** Typed helper to declare a tool (keeps the handler's args typed by its schema). */
export function defineTool<S extends z.ZodObject>(def: ToolDefinition<S>): ToolDefinition {
  return def;
}

/** What an app serving MCP provides: server identity and its tools (evaluated per request). */
export interface McpServerSpec {
  name: string;
  version: string;
  instructions?: string;
  tools: () => readonly ToolDefinition[];
}
