import { appError, ErrorKind, isAppError, type Principal } from '@stoa/core';
import type { ToolDefinition } from '@stoa/mcp';
import type { SessionRuntime, SessionService } from '@stoa/sessions';
import { type AssetResolver, parseTag } from './asset-resolver';

/** A tag in a tool argument could not be resolved (reference §2.8.3 message). */
export class AssetArgumentError extends appError('ASSET_UNRESOLVED', ErrorKind.invalid) {}

/** Arguments never resolved: code (tags inside it are found by the kernel's ast) and the send tool's names. */
export const defaultAssetExempt = (tool: string, param: string): boolean => param === 'code' || /_send$/.test(tool);

/**
 * Reference §2.8.3: a top-level string argument of any tool that is a `<local>`/`<blob>` tag is replaced by the
 * path of its copy in the caller's session cache (the session named by `execution_session_id`, the MCP
 * connection's, or a new one — created only when there is a tag to resolve).
 */
export function withAssetArguments(
  tools: ToolDefinition[],
  assets: AssetResolver,
  sessions: SessionService,
  exempt = defaultAssetExempt,
): ToolDefinition[] {
  return tools.map((tool) => ({
    ...tool,
    handler: async (args, ctx) => {
      const tagged = Object.entries(args).filter(
        (e): e is [string, string] =>
          typeof e[1] === 'string' && !exempt(tool.name, e[0]) && /^(local|blob)$/.test(parseTag(e[1])?.type ?? ''),
      );
      if (!tagged.length) return tool.handler(args, ctx);
      const runtime = await sessionFor(sessions, ctx.principal, args, ctx.transportSessionId, tool.name);
      const resolved = await Promise.all(
        tagged.map(async ([param, tag]) => {
          try {
            return [param, await assets.resolve(tag, runtime.dirs)] as const;
          } catch (err) {
            if (!isAppError(err)) throw err;
            throw new AssetArgumentError(
              `Failed to resolve DataLake asset '${tag}' for parameter '${param}': ${err.message}`,
            );
          }
        }),
      );
      return tool.handler({ ...(args as object), ...Object.fromEntries(resolved) }, ctx);
    },
  }));
}

async function sessionFor(
  sessions: SessionService,
  principal: Principal,
  args: Record<string, unknown>,
  transport: string | undefined,
  tool: string,
): Promise<SessionRuntime> {
  const explicit = args.execution_session_id;
  if (typeof explicit === 'string' && explicit) return sessions.get(principal, explicit);
  const viaTransport = transport ? sessions.find(principal, transport) : undefined;
  if (viaTransport) return viaTransport;
  if (transport && !sessions.isLive(transport))
    return sessions.create(principal, { type: 'mcp_connection' }, transport);
  return sessions.create(principal, { type: 'auto_created', tool });
}
