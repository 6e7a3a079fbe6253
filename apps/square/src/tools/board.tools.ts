import { z } from 'zod';
import type { BoardService } from '@stoa/coordination';
import { integer, type ToolDefinition } from '@stoa/mcp';
import { agentTool, type ToolDeps } from './square-tool';

/** The board the reference designed: versioned keys, optimistic concurrency, JSON Schema. */
export function boardTools(deps: ToolDeps, board: BoardService): ToolDefinition[] {
  return [
    agentTool(deps, {
      name: 'board_put',
      description:
        'Write a JSON value under a key as a new version. expected_version (0 = must not exist) makes it conditional: a stale one is refused with the current version. schema (JSON Schema) applies to this and later versions.',
      shape: {
        key: z.string(),
        value: z.unknown(),
        expected_version: integer().optional(),
        schema: z.record(z.string(), z.unknown()).optional(),
      },
      run: (a, agent) => board.put(agent.id, a),
    }),
    agentTool(deps, {
      name: 'board_get',
      description:
        'The current (or a given) version of a key: {"entry": {key, version, value, schema, updated_by, updated_at} | null}.',
      readOnly: true,
      shape: { key: z.string(), version: integer().optional() },
      run: async (a) => ({ entry: await board.get(a.key, a.version) }),
    }),
    agentTool(deps, {
      name: 'board_list',
      description: 'Current keys starting with prefix (versions and authors, without values).',
      readOnly: true,
      shape: { prefix: z.string().default('') },
      run: async (a) => ({ entries: await board.list(a.prefix) }),
    }),
    agentTool(deps, {
      name: 'board_history',
      description: 'Versions of a key, newest first.',
      readOnly: true,
      shape: { key: z.string(), limit: integer().default(100) },
      run: async (a) => ({ key: a.key, versions: await board.history(a.key, Math.min(Math.max(a.limit, 1), 1000)) }),
    }),
  ];
}
