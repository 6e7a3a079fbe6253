import { ActivityEventType, type ActivityEventInput, type ActivityPublisher } from '@stoa/activity';
import { isAppError } from '@stoa/core';
import { ToolFailure, type ToolContext, type ToolDefinition } from '@stoa/mcp';

type Args = Record<string, unknown>;
type EventOf = (args: Args, result: unknown, ctx: ToolContext) => ActivityEventInput | undefined;

/**
 * The executor's tool-level activity events (reference §9.2): searches, skill loads, plans, data searches, batch
 * cancels, sends, and execute calls refused by the handler. Cell runs publish from the execute pipeline itself
 * (with their displays). Each event is queued after the tool answered; publishing never changes a result.
 */
export function withActivityEvents(
  tools: ToolDefinition[],
  name: string,
  publisher: ActivityPublisher | undefined,
): ToolDefinition[] {
  if (!publisher?.enabled) return tools;
  const events: Record<string, EventOf> = {
    [`search_${name}_tools`]: toolSearch,
    [`load_${name}_skill`]: skillLoaded,
    [`plan_${name}_workflow`]: workflowPlanned,
    search_data: dataSearched,
    [`${name}_cancel_batch`]: batchCancelled,
    [`${name}_send`]: sent,
    [`execute_${name}_code`]: executeRefused,
  };
  return tools.map((t) => {
    const of = events[t.name];
    if (!of) return t;
    return {
      ...t,
      handler: async (args, ctx) => {
        let result: unknown;
        try {
          result = await t.handler(args, ctx);
        } catch (err) {
          result = new ToolFailure({ error: isAppError(err) ? err.message : 'failed' });
          publishFor(publisher, of, args, result, ctx);
          throw err;
        }
        publishFor(publisher, of, args, result, ctx);
        return result;
      },
    };
  });
}

function publishFor(p: ActivityPublisher, of: EventOf, args: Args, result: unknown, ctx: ToolContext): void {
  try {
    const e = of(args, result, ctx);
    if (e) p.publish({ user: ctx.principal.id, session_id: sessionOf(args, result, ctx), ...e });
  } catch {
    // An event that cannot be built is not worth failing a tool call for.
  }
}

/**
 * The execution session a call ran in, so its event shares that session's lane: the session it named
 * (`execution_session_id`), else the one its result names (a batch's parent for cancel_batch), else the 2025-era
 * MCP session (which is the execution session of that connection). A stateless 2026-07-28 call has no transport
 * session, so only the first two can place it; a call about no session at all (a search) goes to "(no session)".
 */
function sessionOf(args: Args, result: unknown, ctx: ToolContext): string | null {
  const body = bodyOf(result);
  return (
    str(args.execution_session_id) ??
    str(body?.session_id) ??
    str(body?.parent_session_id) ??
    ctx.transportSessionId ??
    null
  );
}

/** The JSON body of a result (a ToolFailure's body, a plain object), else undefined. */
function bodyOf(result: unknown): Args | undefined {
  if (result instanceof ToolFailure) return result.body;
  return result && typeof result === 'object' && !Array.isArray(result) ? (result as Args) : undefined;
}

const failed = (result: unknown) => result instanceof ToolFailure;
const errorOf = (result: unknown) => (failed(result) ? text(bodyOf(result)?.error, 'failed') : null);
const names = (v: unknown) =>
  Array.isArray(v) ? v.map((x) => String((x as { name?: unknown })?.name ?? x)).slice(0, 100) : [];
const str = (v: unknown) => (typeof v === 'string' && v ? v : null);
const text = (v: unknown, fallback = '') => (typeof v === 'string' ? v : fallback);

const toolSearch: EventOf = (args, result) => {
  const body = bodyOf(result);
  const tools = names(body?.tools);
  const skills = names(body?.skills);
  const q = text(args.query);
  return {
    type: ActivityEventType.toolSearch,
    description: `search ${q ? `'${q}'` : "'' (catalog)"} → ${tools.length} tool(s), ${skills.length} skill(s)`,
    success: !failed(result),
    query: q,
    category: str(args.category),
    matched_tools: tools,
    matched_skills: skills,
    error: errorOf(result),
  };
};

const skillLoaded: EventOf = (args, result) => ({
  type: ActivityEventType.skillLoaded,
  description: `load skill '${String(args.skill_name)}'`,
  success: !failed(result),
  skill_name: String(args.skill_name),
  error: errorOf(result),
});

const workflowPlanned: EventOf = (args, result) => {
  const [domain, mode, cur, target, tool] = ['domain', 'mode', 'current_state', 'target_state', 'tool_name'].map((k) =>
    str(args[k]),
  );
  const parts = [`plan_workflow mode=${mode ?? 'overview'}`];
  if (domain) parts.push(`domain=${domain}`);
  if (cur || target) parts.push(`${cur ?? ''}→${target ?? ''}`);
  if (tool) parts.push(`tool=${tool}`);
  return {
    type: ActivityEventType.workflowPlanned,
    description: parts.join(' '),
    success: !failed(result),
    domain,
    mode,
    current_state: cur,
    target_state: target,
    tool_name: tool,
    error: errorOf(result),
  };
};

const dataSearched: EventOf = (args, result) => {
  const hits = Array.isArray(result) ? result : [];
  return {
    type: ActivityEventType.dataSearched,
    description: `search data '${text(args.query)}' → ${hits.length} dataset(s)`,
    success: !failed(result),
    query: text(args.query),
    matched_artifacts: names(hits),
    error: errorOf(result),
  };
};

const batchCancelled: EventOf = (args, result) => ({
  type: ActivityEventType.batchCancelled,
  description: `cancel batch ${String(args.batch_id)}`,
  success: !failed(result),
  batch_id: String(args.batch_id),
  error: errorOf(result),
});

const sent: EventOf = (args, result) => {
  const body = bodyOf(result) ?? {};
  const to = text(args.to);
  const ok = body.success === true;
  // A server destination is an object transfer; user, blob and local publish an artifact.
  const published = ['user', 'blob', 'local'].includes(to);
  return {
    type: published ? ActivityEventType.artifactPublished : ActivityEventType.objectSent,
    description: `send '${text(args.data_ref)}' to ${to}${ok ? '' : ' failed'}`,
    success: ok,
    transfer_id: str(body.transfer_id),
    data_ref: str(args.data_ref),
    destination: to,
    name: str(body.name),
    remote_uri: str(body.remote_uri),
    size_bytes: typeof body.size_bytes === 'number' ? body.size_bytes : null,
    error: ok ? null : text(body.error, 'failed'),
  };
};

/** An execute call the handler refused (unknown session, bad argument): the cell never ran. */
const executeRefused: EventOf = (args, result) => {
  if (!failed(result)) return undefined;
  return {
    type: ActivityEventType.codeFailed,
    description: text(args.description),
    success: false,
    code: text(args.code),
    error: errorOf(result),
  };
};
