'use strict';
/**
 * The MCP conformance suite's Tasks extension fixtures (names and behaviour as its tasks-* scenarios require),
 * registered on every MCP server instance of the conformance profile only (server.yaml `mcp_extensions`). They run
 * as in-process tasks of the caller through the kit (@stoa/mcp McpExtensionKit), beside the executor's job tasks.
 * Never load this in another server: these tools answer anyone with canned data.
 */
const { acceptedContent, inputRequired } = require('@modelcontextprotocol/server');
const { z } = require('zod');

const none = z.object({});
const text = (t) => ({ content: [{ type: 'text', text: t }] });

/** Resolves after `ms`, or rejects when `signal` aborts (tasks/cancel). */
function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });
}

const confirmSchema = z.object({ confirm: z.boolean().describe('Go ahead?') });
const nameSchema = z.object({ name: z.string().describe('Your name') });

/**
 * @param {import('@modelcontextprotocol/server').McpServer} server
 * @param {'legacy' | 'modern'} _era
 * @param {import('@stoa/mcp').McpExtensionKit} kit
 */
function register(server, _era, kit) {
  const tool = (name, description, inputSchema, cb) => server.registerTool(name, { description, inputSchema }, cb);
  // Tools that cannot answer without a task: -32021 for requests that did not declare the Tasks extension.
  kit.requireTasks('failing_job', 'confirm_delete', 'multi_input', 'test_tool_with_task');

  tool('greet', 'Greets someone (never a task)', z.object({ name: z.string() }), async ({ name }) =>
    text(`Hello, ${name}!`),
  );
  tool(
    'slow_compute',
    'Sleeps `seconds` then answers; a task when the client declared the Tasks extension',
    z.object({ seconds: z.number().min(0).max(120).default(1), label: z.string().default('compute') }),
    async ({ seconds, label }, ctx) =>
      kit.task(ctx, async (run) => {
        await sleep(seconds * 1000, run.signal);
        return { text: `${label}: computed after ${seconds}s` };
      }),
  );
  tool('failing_job', 'A task that reports a tool execution error after about 1 s', none, async (_args, ctx) =>
    kit.task(ctx, async (run) => {
      await sleep(1000, run.signal);
      return { text: 'failing_job always reports a tool execution error', isError: true };
    }),
  );
  tool('protocol_error_job', 'A task that fails with a JSON-RPC protocol error', none, async (_args, ctx) =>
    kit.task(ctx, async () => {
      throw new Error('protocol_error_job failed on purpose (internal error)');
    }),
  );
  tool(
    'confirm_delete',
    'Asks for confirmation (one elicitation, answered with tasks/update) before "deleting" a file',
    z.object({ filename: z.string() }),
    async ({ filename }, ctx) =>
      kit.task(ctx, async (run) => {
        const message = `Delete ${filename}?`;
        const answers = await run.input({ confirm: inputRequired.elicit({ message, requestedSchema: confirmSchema }) });
        const confirmed = acceptedContent(answers, 'confirm', confirmSchema)?.confirm === true;
        return { text: confirmed ? `Deleted ${filename}` : `Kept ${filename}` };
      }),
  );
  tool('multi_input', 'Asks two questions at once (two pending elicitations)', none, async (_args, ctx) =>
    kit.task(ctx, async (run) => {
      const [who, go] = await Promise.all([
        run.input({ name: inputRequired.elicit({ message: 'Who is asking?', requestedSchema: nameSchema }) }),
        run.input({ confirm: inputRequired.elicit({ message: 'Proceed?', requestedSchema: confirmSchema }) }),
      ]);
      const name = acceptedContent(who, 'name')?.name;
      const confirm = acceptedContent(go, 'confirm')?.confirm;
      return { text: `name=${String(name)}, confirm=${String(confirm)}` };
    }),
  );
  // MRTR then a task: round 1 asks for the user's name (input_required), round 2 answers with a task using it.
  tool('test_tool_with_task', 'Gathers a name through input_required, then greets as a task', none, async (_a, ctx) => {
    const name = acceptedContent(ctx.mcpReq.inputResponses, 'user_name', nameSchema)?.name;
    if (name === undefined)
      return inputRequired({
        inputRequests: {
          user_name: inputRequired.elicit({ message: 'What is your name?', requestedSchema: nameSchema }),
        },
      });
    return kit.task(ctx, async () => ({ text: `Hello, ${name}! (greeted by a task)` }));
  });
}

module.exports = { register };
