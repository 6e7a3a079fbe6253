'use strict';
/**
 * The MCP conformance suite's multi-round-trip (SEP-2322, input-required-result-* scenarios) and stateless
 * diagnostic (SEP-2575, server-stateless) fixtures, with the names and payloads its scenarios and everything-server
 * example use. Registered on every MCP server instance of the conformance profile only (server.yaml
 * `mcp_extensions`). Never load this in another server: these tools answer anyone with canned data.
 */
const crypto = require('node:crypto');
const {
  CLIENT_CAPABILITIES_META_KEY,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  acceptedContent,
  inputRequired,
} = require('@modelcontextprotocol/server');
const { z } = require('zod');

const none = z.object({});
const text = (t) => ({ content: [{ type: 'text', text: t }] });
const nameSchema = z.object({ name: z.string() });
const colorSchema = z.object({ color: z.string() });
const okSchema = z.object({ ok: z.boolean() });
const contextSchema = z.object({ context: z.string() });

const askName = (message = 'What is your name?') => inputRequired.elicit({ message, requestedSchema: nameSchema });
const ask = (question, maxTokens) =>
  inputRequired.createMessage({
    messages: [{ role: 'user', content: { type: 'text', text: question } }],
    maxTokens,
  });

// requestState is echoed by the client, so it is HMAC-signed with a per-process key (one process serves every
// round of a call); a state that fails verification is rejected with -32602 before the tool's handler runs.
const KEY = crypto.randomBytes(32);
const mac = (body) => crypto.createHmac('sha256', KEY).update(body).digest('base64url');
const mint = (payload) => {
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${body}.${mac(body)}`;
};
/** The payload of a requestState this process minted, else undefined. */
function verified(state) {
  if (typeof state !== 'string') return undefined;
  const [body, tag, ...rest] = state.split('.');
  if (!body || !tag || rest.length) return undefined;
  const want = Buffer.from(mac(body));
  const got = Buffer.from(tag);
  if (want.length !== got.length || !crypto.timingSafeEqual(want, got)) return undefined;
  try {
    return JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}
/** Guard: an echoed requestState must be one this process minted for the same tool. */
const signedState = (tool) => (ctx) => {
  const state = ctx.mcpReq.requestState();
  if (state !== undefined && verified(state)?.tool !== tool)
    throw new ProtocolError(-32602, 'Invalid requestState: integrity check failed');
};
const stateOf = (ctx) => verified(ctx.mcpReq.requestState());

/** The client capabilities this 2026-07-28 request declared in its _meta envelope. */
const capabilities = (ctx) => ctx.mcpReq.envelope?.[CLIENT_CAPABILITIES_META_KEY] ?? {};
const responses = (ctx) => ctx.mcpReq.inputResponses ?? {};

/**
 * @param {import('@modelcontextprotocol/server').McpServer} server
 * @param {'legacy' | 'modern'} _era
 * @param {import('@stoa/mcp').McpExtensionKit} kit
 */
function register(server, _era, kit) {
  const tool = (name, description, cb) => server.registerTool(name, { description, inputSchema: none }, cb);
  const signed = (name, description, cb) => (kit.guard(name, signedState(name)), tool(name, description, cb));

  tool('test_input_required_result_elicitation', 'MRTR: one elicitation, then a greeting', async (_a, ctx) => {
    const name = acceptedContent(responses(ctx), 'user_name', nameSchema)?.name;
    if (name === undefined) return inputRequired({ inputRequests: { user_name: askName() } });
    return text(`Hello, ${name}!`);
  });
  tool('test_input_required_result_sampling', 'MRTR: one sampling request, then its answer', async (_a, ctx) => {
    const answer = responses(ctx).capital_question;
    if (!answer?.content)
      return inputRequired({ inputRequests: { capital_question: ask('What is the capital of France?', 100) } });
    return text(`Sampling said: ${answer.content.text ?? JSON.stringify(answer.content)}`);
  });
  tool('test_input_required_result_list_roots', 'MRTR: one roots/list request, then the roots', async (_a, ctx) => {
    const roots = responses(ctx).client_roots?.roots;
    if (!Array.isArray(roots)) return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } });
    return text(`Roots: ${roots.map((r) => r.uri).join(', ') || '(none)'}`);
  });
  /** One confirmation under a signed requestState: ask with `state`, then answer `done(ok)`. */
  const confirmOnce = (state, done) => async (_a, ctx) => {
    const ok = acceptedContent(responses(ctx), 'confirm', okSchema)?.ok;
    if (ok === undefined || !stateOf(ctx))
      return inputRequired({
        inputRequests: { confirm: inputRequired.elicit({ message: 'Please confirm', requestedSchema: okSchema }) },
        requestState: mint(state),
      });
    return text(done(ok));
  };
  signed(
    'test_input_required_result_request_state',
    'MRTR: elicitation plus a signed requestState',
    confirmOnce({ tool: 'test_input_required_result_request_state', round: 1 }, (ok) => `state-ok: confirmed=${ok}`),
  );
  signed(
    'test_input_required_result_multiple_inputs',
    'MRTR: elicitation, sampling and roots at once',
    async (_a, ctx) => {
      const r = responses(ctx);
      const name = acceptedContent(r, 'user_name', nameSchema)?.name;
      if (name === undefined || !r.greeting?.content || !Array.isArray(r.client_roots?.roots) || !stateOf(ctx))
        return inputRequired({
          inputRequests: {
            user_name: askName(),
            greeting: ask('Generate a greeting', 50),
            client_roots: inputRequired.listRoots(),
          },
          requestState: mint({ tool: 'test_input_required_result_multiple_inputs' }),
        });
      return text(`${r.greeting.content.text ?? 'Hello'}, ${name}! (${r.client_roots.roots.length} roots)`);
    },
  );
  signed(
    'test_input_required_result_multi_round',
    'MRTR: two rounds with an evolving requestState',
    async (_a, ctx) => {
      const state = stateOf(ctx);
      const r = responses(ctx);
      if (state?.round === 2) {
        const color = acceptedContent(r, 'step2', colorSchema)?.color;
        if (color !== undefined) return text(`${state.name}'s favorite color is ${color}`);
      }
      const name = state?.round === 1 ? acceptedContent(r, 'step1', nameSchema)?.name : undefined;
      if (name !== undefined || state?.round === 2)
        return inputRequired({
          inputRequests: {
            step2: inputRequired.elicit({
              message: 'Step 2: What is your favorite color?',
              requestedSchema: colorSchema,
            }),
          },
          requestState: mint({ tool: 'test_input_required_result_multi_round', round: 2, name: name ?? state.name }),
        });
      return inputRequired({
        inputRequests: { step1: askName('Step 1: What is your name?') },
        requestState: mint({ tool: 'test_input_required_result_multi_round', round: 1 }),
      });
    },
  );
  signed(
    'test_input_required_result_tampered_state',
    'MRTR: rejects a requestState it did not sign',
    confirmOnce({ tool: 'test_input_required_result_tampered_state' }, (ok) => `state verified: confirmed=${ok}`),
  );
  tool('test_input_required_result_capabilities', 'MRTR: asks only through declared capabilities', async (_a, ctx) => {
    const caps = capabilities(ctx);
    const r = responses(ctx);
    const inputRequests = {};
    if (caps.elicitation && r.user_name === undefined) inputRequests.user_name = askName();
    if (caps.sampling && r.greeting === undefined) inputRequests.greeting = ask('Generate a greeting', 50);
    if (caps.roots && r.client_roots === undefined) inputRequests.client_roots = inputRequired.listRoots();
    if (Object.keys(inputRequests).length) return inputRequired({ inputRequests });
    return text(`Asked through: ${Object.keys(caps).join(', ') || 'nothing (no capability declared)'}`);
  });
  server.registerPrompt(
    'test_input_required_result_prompt',
    { description: 'MRTR on prompts/get: asks for context, then the prompt' },
    async (ctx) => {
      const context = acceptedContent(responses(ctx), 'user_context', contextSchema)?.context;
      if (context === undefined)
        return inputRequired({
          inputRequests: {
            user_context: inputRequired.elicit({
              message: 'What context should the prompt use?',
              requestedSchema: contextSchema,
            }),
          },
        });
      return {
        messages: [{ role: 'user', content: { type: 'text', text: `Answer using this context: ${context}` } }],
      };
    },
  );

  // SEP-2575 diagnostics (server-stateless scenario).
  kit.guard('test_missing_capability', (ctx) => {
    if (!capabilities(ctx).sampling)
      throw new MissingRequiredClientCapabilityError(
        { requiredCapabilities: { sampling: {} } },
        'Missing required client capability: test_missing_capability needs sampling',
      );
  });
  tool('test_missing_capability', 'Needs the sampling capability (-32021 without it)', async (_a, ctx) => {
    const answer = responses(ctx).question;
    if (!answer?.content) return inputRequired({ inputRequests: { question: ask('Say hello', 20) } });
    return text(`Sampling said: ${answer.content.text ?? ''}`);
  });
  tool(
    'test_streaming_elicitation',
    'Asks through input_required, never a server-to-client request',
    async (_a, ctx) => {
      const name = acceptedContent(responses(ctx), 'user_name', nameSchema)?.name;
      if (name === undefined) return inputRequired({ inputRequests: { user_name: askName() } });
      return text(`Hello, ${name}!`);
    },
  );
  tool('test_logging_tool', 'Logs at info (sent only when the request set a logLevel)', async (_a, ctx) => {
    await ctx.mcpReq.log('info', 'test_logging_tool ran');
    return text('Logged a message at info.');
  });
}

module.exports = { register };
