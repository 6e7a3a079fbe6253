import type { ServerResponse } from 'node:http';
import { Logger } from '@nestjs/common';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import {
  createMcpHandler,
  isInitializeRequest,
  isLegacyRequest,
  type CallToolResult,
  McpServer,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { callerContext, failSpan, inSpan, SpanKind, withHeaderContext } from '@stoa/activity';
import { clip, type Principal } from '@stoa/core';
import type { McpServerSpec, ToolContext, ToolDefinition } from './mcp.types';
import { compactJsonSchema } from './compact-schema';
import { chainTasks, extendServer, principalOf, registerTaskMethods, TASKS_EXTENSION } from './tasks';
import { LocalTasks } from './local-tasks';
import { taskListenOf, TaskListens } from './task-listen';
import { errorToToolResult, toToolResult, withResourceLinks } from './tool-result';
import { registerResourceMethods } from './resources';
import { registerPromptMethods } from './prompts';
import { registerSkillMethods, skillsCapability } from './skills-extension';
import { envelopeRefusal, removedMethodRefusal, transportRefusal } from './request-guard';
import { withReadableErrors } from './readable-errors';
import { toParsedBodyHandler, webHeaders } from './node-bridge';
import { type DirectCall, directAnswer, directCallOf } from './direct-call';
import {
  type FixedCaller,
  functionPolicyOf,
  type McpRequest,
  proxiedSchema,
  refuse,
  toolContext,
} from './endpoint-parts';

export type { FixedCaller, McpRequest } from './endpoint-parts';

export interface McpEndpointOptions {
  /** Mints `Mcp-Session-Id`s for 2025-era clients (we use execution session ids, so both are one id). */
  mintSessionId: () => string;
  /**
   * 2025-era MCP sessions (transports) idle longer than this are dropped. Only the transport ends: execution
   * sessions (kernels) have their own lifetime and outlive the MCP connection that made them.
   */
  legacyIdleMs: number;
  /** Told of every answered tool call (metrics): its tool, whether the result is an error, and how long it took. */
  onToolCall?: (tool: string, isError: boolean, seconds: number) => void;
  /**
   * Answer plain 2026-07-28 `tools/call` requests without the SDK's per-request server (default true; see
   * directCallOf). `false` sends every request through the SDK (the equality test compares the two).
   */
  directCalls?: boolean;
}

interface LegacySession {
  transport: NodeStreamableHTTPServerTransport;
  principal: Principal;
  lastUsed: number;
}

/**
 * Streamable HTTP at `/mcp` for both protocol eras. 2026-07-28 requests go through the SDK's
 * per-request handler; 2025-era requests get a sessionful transport bound to the caller's principal,
 * so kernel state persists across calls and cancellation reaches running handlers.
 */
export class McpEndpoint {
  private readonly logger = new Logger(McpEndpoint.name);
  private readonly modern: ReturnType<typeof toParsedBodyHandler>;
  private readonly legacy = new Map<string, LegacySession>();
  private readonly sweeper: NodeJS.Timeout;
  /** Tasks of tools that extensions run in this process, served beside the spec's own (`tasks`). */
  private readonly localTasks = new LocalTasks();
  /** `subscriptions/listen` streams of task notifications (when this server serves the Tasks extension). */
  private readonly taskListens: TaskListens | undefined;

  constructor(
    private readonly spec: McpServerSpec,
    private readonly opts: McpEndpointOptions,
  ) {
    const onerror = (e: Error) => this.logger.warn({ err: clip(e.message, 300) }, 'mcp request rejected');
    this.modern = toParsedBodyHandler(
      createMcpHandler((ctx) => this.buildServer(ctx.era), { legacy: 'reject', onerror }),
      onerror,
    );
    this.sweeper = setInterval(() => this.evictIdle(), Math.max(1000, Math.min(60_000, opts.legacyIdleMs / 2)));
    this.sweeper.unref();
    if (spec.tasks) this.taskListens = new TaskListens(chainTasks(this.localTasks, spec.tasks), this.serverInfo);
  }

  /** Number of open 2025-era MCP sessions. */
  get legacySessions(): number {
    return this.legacy.size;
  }

  /** Serves one HTTP request at /mcp for an authenticated `principal`. */
  async handle(req: McpRequest, res: ServerResponse, principal: Principal): Promise<void> {
    const refusal =
      transportRefusal(req) ??
      removedMethodRefusal(req, req.body) ??
      (req.method === 'POST' ? envelopeRefusal(req.body) : undefined);
    if (refusal) return refuse(res, refusal);
    const functionPolicy = functionPolicyOf(req);
    req.auth = {
      token: principal.token ?? '',
      clientId: principal.id,
      scopes: [...principal.scopes],
      extra: { principal, functionPolicy },
    };
    // Tool spans below are children of the caller's HTTP traceparent unless their `_meta` names another.
    await withHeaderContext(req.headers, async () => {
      const listen = this.taskListens && taskListenOf(req);
      if (listen) return this.taskListens?.serve(listen, res, principal);
      const direct = req.method === 'POST' && this.opts.directCalls !== false && directCallOf(req, this.spec.tools);
      if (direct) return this.serveDirect(direct, res, principal, functionPolicy);
      if (await this.isLegacy(req)) return this.handleLegacy(req, res, principal);
      await this.modern(req, res);
    });
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.taskListens?.closeAll();
    this.localTasks.close();
    // Forget the sessions first: a server shutdown is not the client ending its session.
    const open = [...this.legacy.values()];
    this.legacy.clear();
    await Promise.all(open.map((s) => s.transport.close()));
  }

  private async isLegacy(req: McpRequest): Promise<boolean> {
    // Fast paths for the two common shapes; anything else asks the SDK's own classifier.
    if (typeof req.headers['mcp-session-id'] === 'string') return true;
    const meta = (req.body as { params?: { _meta?: Record<string, unknown> } } | undefined)?.params?._meta;
    if (req.method === 'POST' && typeof meta?.['io.modelcontextprotocol/protocolVersion'] === 'string') return false;
    const probe = new Request('http://mcp.local/mcp', { method: req.method, headers: webHeaders(req) });
    return isLegacyRequest(probe, req.method === 'POST' ? req.body : undefined);
  }

  private async handleLegacy(req: McpRequest, res: ServerResponse, principal: Principal): Promise<void> {
    const sid = req.headers['mcp-session-id'];
    if (typeof sid === 'string' && sid) {
      const session = this.legacy.get(sid);
      // Someone else's MCP session answers exactly like an unknown one.
      if (!session || session.principal.id !== principal.id)
        return refuse(res, {
          status: 404,
          code: -32001,
          message: 'Session not found. Re-initialize the MCP connection.',
        });
      session.lastUsed = Date.now();
      session.principal = principal;
      return session.transport.handleRequest(req as never, res, req.body);
    }
    if (req.method !== 'POST' || !isInitializeRequest(req.body)) {
      return refuse(res, {
        status: 400,
        code: -32000,
        message:
          'Bad Request: no Mcp-Session-Id header. Send initialize first (2025-era clients) or use the 2026-07-28 per-request envelope.',
      });
    }
    const transport: NodeStreamableHTTPServerTransport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: this.opts.mintSessionId,
      onsessioninitialized: (id) => void this.legacy.set(id, { transport, principal, lastUsed: Date.now() }),
      onsessionclosed: (id) => this.dropLegacy(id),
    });
    transport.onclose = () => transport.sessionId && this.dropLegacy(transport.sessionId);
    await this.buildServer('legacy').connect(transport);
    await transport.handleRequest(req as never, res, req.body);
  }

  private dropLegacy(id: string): void {
    this.legacy.delete(id);
  }

  private evictIdle(): void {
    const cutoff = Date.now() - this.opts.legacyIdleMs;
    for (const [id, s] of this.legacy) {
      if (s.lastUsed < cutoff) {
        void s.transport.close();
        this.dropLegacy(id);
      }
    }
  }

  /**
   * One MCP server instance for an era. `fixed` is the caller and connection of a transport without HTTP auth
   * (stdio: see serveMcpStdio); otherwise each request's principal comes from our auth middleware.
   */
  buildServer(era: 'legacy' | 'modern', fixed?: FixedCaller): McpServer {
    const tasks = era === 'modern' ? this.spec.tasks : undefined;
    const { resources, skills } = this.spec;
    const extensions = { ...(tasks ? { [TASKS_EXTENSION]: {} } : {}), ...(skills ? skillsCapability : {}) };
    // logging: `logging/setLevel` per MCP session (2025 era; the SDK keeps the level per server instance, and
    // each 2025-era session has its own) or the request's log-level `_meta` (2026-07-28); see ToolContext.log.
    const capabilities = {
      tools: {},
      logging: {},
      ...(resources ? { resources: {} } : {}),
      ...(Object.keys(extensions).length ? { extensions } : {}),
    };
    const server = withReadableErrors(
      new McpServer(
        { name: this.spec.name, version: this.spec.version },
        { instructions: this.spec.instructions, capabilities },
      ),
    );
    for (const tool of this.spec.tools()) this.register(server, tool, fixed);
    const caller = (ctx: ServerContext) => fixed?.principal ?? principalOf(ctx);
    if (tasks) registerTaskMethods(server, chainTasks(this.localTasks, tasks), caller);
    if (resources) registerResourceMethods(server, resources, era, caller);
    if (skills) registerSkillMethods(server, skills, era, caller);
    const { prompts, completions } = this.spec;
    if (prompts || completions) registerPromptMethods(server, era, { prompts, completions }, caller);
    if (this.spec.extend) extendServer(server, era, this.spec.extend, tasks && this.localTasks, caller);
    return server;
  }

  private register(server: McpServer, tool: ToolDefinition, fixed?: FixedCaller): void {
    const inputSchema = tool.inputJsonSchema ? proxiedSchema(tool.inputJsonSchema) : compactJsonSchema(tool.input);
    server.registerTool(
      tool.name,
      { description: tool.description, inputSchema, annotations: tool.annotations },
      (args: unknown, ctx: ServerContext) =>
        this.runTool(tool, args, toolContext(ctx, fixed), ctx.mcpReq._meta, ctx.mcpReq.id, ctx.sessionId),
    );
  }

  /** A 2026-07-28 `tools/call` the endpoint answers without the SDK (see directCallOf). */
  private async serveDirect(
    call: DirectCall,
    res: ServerResponse,
    principal: Principal,
    functionPolicy: ToolContext['functionPolicy'],
  ) {
    const abort = new AbortController();
    res.once('close', () => res.writableFinished || abort.abort());
    const ctx: ToolContext = {
      principal,
      tasksSupported: false,
      transportSessionId: undefined,
      signal: abort.signal,
      functionPolicy,
      log: () => Promise.resolve(), // no log level in the envelope: a 2026-07-28 server sends no log messages
      progress: undefined,
    };
    const result = await this.runTool(call.tool, call.args, ctx, call.meta, call.id, undefined);
    const text = directAnswer(call.id, result, this.serverInfo);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }

  private get serverInfo() {
    return { name: this.spec.name, version: this.spec.version };
  }

  /** One tool call, whichever path it came by: a span (MCP semantic conventions), the result, metrics. */
  private runTool(
    tool: ToolDefinition,
    args: unknown,
    ctx: ToolContext,
    meta: Record<string, unknown> | undefined,
    requestId: string | number,
    sessionId: string | undefined,
  ): Promise<CallToolResult> {
    // The span is a child of the caller's `_meta` traceparent, else of the HTTP one.
    return inSpan(
      `tools/call ${tool.name}`,
      {
        kind: SpanKind.SERVER,
        parent: callerContext(meta),
        attributes: {
          'mcp.method.name': 'tools/call',
          'gen_ai.tool.name': tool.name,
          'gen_ai.operation.name': 'execute_tool',
          ...(sessionId ? { 'mcp.session.id': sessionId } : {}),
          'jsonrpc.request.id': String(requestId),
        },
      },
      async (span) => {
        const started = performance.now();
        let result: CallToolResult;
        try {
          const value = await tool.handler(args as never, ctx);
          result = withResourceLinks(toToolResult(value), this.spec.resultLinks?.(value));
        } catch (err) {
          result = errorToToolResult(err, tool.name);
        }
        if (result.isError) failSpan(span, 'tool_error');
        this.opts.onToolCall?.(tool.name, result.isError === true, (performance.now() - started) / 1000);
        return result;
      },
    );
  }
}
