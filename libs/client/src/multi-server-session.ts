import { EventEmitter } from 'node:events';
import type { Tool } from '@modelcontextprotocol/client';
import { UnavailableError } from '@stoa/core';
import { UnknownServerError, UnknownToolError } from './multi-server.errors';
import type {
  CallToolOptions,
  CallToolResult,
  MultiServerSessionOptions,
  ServerSpec,
  ServerStatus,
  SessionEvents,
  SessionTool,
  ToolArguments,
} from './multi-server.types';
import { type ConnectionListener, ServerConnection } from './server-connection';
import { type ResolvedServer, resolveOptions, selectServers } from './session-options';
import { closeMatches, qualifyToolName, splitQualifiedName } from './tool-names';

/**
 * One client session over several MCP servers: a merged, namespaced tool catalog and call routing, with
 * per-server degradation. A server that fails (at connect or later) is marked unavailable and reconnected
 * in the background with exponential backoff; the others keep working and nothing needs restarting.
 * Health checks and retries run on timers until `close()`, which a process must call to exit.
 *
 * ```ts
 * const session = await MultiServerSession.connect([{ name: 'demo', url: 'http://127.0.0.1:8000' }]);
 * const result = await session.callTool('demo__execute_demo_code', { code: '1+1' });
 * await session.close();
 * ```
 */
export class MultiServerSession extends EventEmitter<SessionEvents> {
  private readonly connections = new Map<string, ServerConnection>();
  private closed = false;

  private constructor(servers: readonly ResolvedServer[], opts: ReturnType<typeof resolveOptions>) {
    super();
    const listener: ConnectionListener = {
      up: (server, tools) => this.emit('serverUp', { server, tools: qualify(server, tools) }),
      down: (server, error) => this.emit('serverDown', { server, error }),
      toolsChanged: (server, tools) => this.emit('toolsChanged', { server, tools: qualify(server, tools) }),
    };
    for (const server of servers) this.connections.set(server.name, new ServerConnection(server, opts, listener));
  }

  /**
   * Connects to every selected server concurrently and resolves once each first attempt settled, even
   * if some (or all) failed: check `status()` or listen for `serverUp`. Throws `InvalidInputError` for
   * bad specs or options, repeated names, or a `role` that no server serves.
   */
  static async connect(servers: readonly ServerSpec[], opts?: MultiServerSessionOptions): Promise<MultiServerSession> {
    const options = resolveOptions(opts);
    const session = new MultiServerSession(selectServers(servers, options.role), options);
    await Promise.all([...session.connections.values()].map((c) => c.start()));
    return session;
  }

  /** Tools of every connected server, in server order, named `${server}__${tool}`. */
  listTools(): SessionTool[] {
    return [...this.connections.values()]
      .filter((c) => c.isConnected())
      .flatMap((c) => qualify(c.name, c.listKnownTools()));
  }

  /** State, last error, connection time and tool names of each server, by server name. */
  status(): Record<string, ServerStatus> {
    return Object.fromEntries([...this.connections].map(([name, c]) => [name, c.status()]));
  }

  /**
   * Calls a tool by qualified name (`alpha__execute_alpha_code`) or by server and original name
   * (`'alpha', 'execute_alpha_code'`). Throws `ServerUnavailableError` when the server is down,
   * `UnknownToolError` (with close matches) or `UnknownServerError` when nothing matches. A tool-level
   * failure is a normal result with `isError: true`.
   */
  callTool(qualifiedName: string, args?: ToolArguments, options?: CallToolOptions): Promise<CallToolResult>;
  callTool(server: string, tool: string, args?: ToolArguments, options?: CallToolOptions): Promise<CallToolResult>;
  async callTool(
    target: string,
    toolOrArgs?: string | ToolArguments,
    argsOrOptions?: ToolArguments | CallToolOptions,
    maybeOptions?: CallToolOptions,
  ): Promise<CallToolResult> {
    if (this.closed)
      throw new UnavailableError(
        'This MultiServerSession is closed; open a new one with MultiServerSession.connect().',
      );
    const byServer = typeof toolOrArgs === 'string';
    const args = (byServer ? argsOrOptions : toolOrArgs) as ToolArguments | undefined;
    const options = (byServer ? maybeOptions : argsOrOptions) as CallToolOptions | undefined;
    const { connection, tool } = byServer
      ? { connection: this.getConnection(target), tool: toolOrArgs }
      : this.route(target);
    await this.requireTool(connection, tool);
    return connection.callTool(tool, args ?? {}, options ?? {});
  }

  /** Closes every server's client and stops all timers and retries. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.connections.values()].map((c) => c.close()));
    this.removeAllListeners();
  }

  private getConnection(server: string): ServerConnection {
    const connection = this.connections.get(server);
    if (!connection) throw new UnknownServerError(server, [...this.connections.keys()]);
    return connection;
  }

  private route(qualifiedName: string): { connection: ServerConnection; tool: string } {
    const split = splitQualifiedName(qualifiedName);
    const connection = split && this.connections.get(split.server);
    if (!split || !connection) throw this.unknownTool(qualifiedName);
    return { connection, tool: split.tool };
  }

  /** Throws `UnknownToolError` when a connected server does not list `tool`, even after listing again. */
  private async requireTool(connection: ServerConnection, tool: string): Promise<void> {
    if (!connection.isConnected() || hasTool(connection, tool)) return;
    // The cached catalog may be stale. If listing fails, let the call itself report why.
    if (!(await connection.refreshTools()) || hasTool(connection, tool)) return;
    throw this.unknownTool(qualifyToolName(connection.name, tool));
  }

  private unknownTool(name: string): UnknownToolError {
    // Unavailable servers' last-known tools count too: "did you mean" should still point at them.
    const known = [...this.connections.values()].flatMap((c) =>
      c.listKnownTools().map((t) => qualifyToolName(c.name, t.name)),
    );
    return new UnknownToolError(name, closeMatches(name, known), [...this.connections.keys()]);
  }
}

function hasTool(connection: ServerConnection, tool: string): boolean {
  return connection.listKnownTools().some((t) => t.name === tool);
}

function qualify(server: string, tools: readonly Tool[]): SessionTool[] {
  return tools.map((tool) => ({ ...tool, server, qualifiedName: qualifyToolName(server, tool.name) }));
}
