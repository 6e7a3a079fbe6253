'use strict';
/**
 * The MCP conformance suite's fixtures (names and payloads as in its everything-server example), registered on
 * every MCP server instance of the conformance profile only (server.yaml `mcp_extensions`). Never load this in
 * another server: these tools answer anyone with canned data.
 */
const { fromJsonSchema } = require('@modelcontextprotocol/server');
const { z } = require('zod');

const IMAGE = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const AUDIO = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';
const none = z.object({});

/** SEP-1613 / SEP-2106: a 2020-12 schema whose keywords tools/list must keep verbatim. */
const SCHEMA_2020_12 = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: {
    address: {
      $anchor: 'addressDef',
      type: 'object',
      properties: { street: { type: 'string' }, city: { type: 'string' } },
    },
  },
  properties: {
    name: { type: 'string' },
    address: { $ref: '#/$defs/address' },
    contactMethod: { type: 'string', enum: ['phone', 'email'] },
    phone: { type: 'string' },
    email: { type: 'string' },
  },
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  then: { required: ['phone'] },
  else: { required: ['email'] },
  additionalProperties: false,
};
const text = (t) => ({ content: [{ type: 'text', text: t }] });
const pause = () => new Promise((resolve) => setTimeout(resolve, 50));

/** @param {import('@modelcontextprotocol/server').McpServer} server */
function tools(server) {
  const tool = (name, description, cb, inputSchema = none) =>
    server.registerTool(name, { description, inputSchema }, cb);
  tool('test_simple_text', 'Tests simple text content response', async () =>
    text('This is a simple text response for testing.'),
  );
  tool('test_image_content', 'Tests image content response', async () => ({
    content: [{ type: 'image', data: IMAGE, mimeType: 'image/png' }],
  }));
  tool('test_audio_content', 'Tests audio content response', async () => ({
    content: [{ type: 'audio', data: AUDIO, mimeType: 'audio/wav' }],
  }));
  tool('test_embedded_resource', 'Tests embedded resource content response', async () => ({
    content: [
      {
        type: 'resource',
        resource: {
          uri: 'test://embedded-resource',
          mimeType: 'text/plain',
          text: 'This is an embedded resource content.',
        },
      },
    ],
  }));
  tool(
    'test_multiple_content_types',
    'Tests response with multiple content types (text, image, resource)',
    async () => ({
      content: [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: IMAGE, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: {
            uri: 'test://mixed-content-resource',
            mimeType: 'application/json',
            text: JSON.stringify({ test: 'data', value: 123 }),
          },
        },
      ],
    }),
  );
  tool('test_tool_with_logging', 'Tests tool that emits log messages during execution', async (_args, ctx) => {
    for (const message of ['Tool execution started', 'Tool processing data', 'Tool execution completed']) {
      await ctx.mcpReq.notify({ method: 'notifications/message', params: { level: 'info', data: message } });
      await pause();
    }
    return text('Tool with logging executed successfully');
  });
  tool('test_tool_with_progress', 'Tests tool that reports progress notifications', async (_args, ctx) => {
    const progressToken = ctx.mcpReq._meta?.progressToken ?? 0;
    for (const progress of [0, 50, 100]) {
      await ctx.mcpReq.notify({
        method: 'notifications/progress',
        params: { progressToken, progress, total: 100, message: `Completed step ${progress} of 100` },
      });
      if (progress < 100) await pause();
    }
    return text(String(progressToken));
  });
  tool('test_error_handling', 'Tests error response handling', async () => {
    throw new Error('This tool intentionally returns an error for testing');
  });
  tool(
    'test_sampling',
    'Tests server-initiated sampling (LLM completion request)',
    async ({ prompt }, ctx) => {
      const r = await ctx.mcpReq.requestSampling({
        messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
        maxTokens: 100,
      });
      return text(`LLM response: ${r.content?.text ?? 'No response'}`);
    },
    z.object({ prompt: z.string().describe('The prompt to send to the LLM') }),
  );
  const elicitTool = (name, description, message, requestedSchema, prefix, input = none) =>
    tool(
      name,
      description,
      async (args, ctx) => {
        const r = await ctx.mcpReq.elicitInput({ message: args.message ?? message, requestedSchema });
        return text(`${prefix}: action=${r.action}, content=${JSON.stringify(r.content || {})}`);
      },
      input,
    );
  elicitTool(
    'test_elicitation',
    'Tests server-initiated elicitation (user input request)',
    '',
    {
      type: 'object',
      properties: { response: { type: 'string', description: "User's response" } },
      required: ['response'],
    },
    'User response',
    z.object({ message: z.string().describe('The message to show the user') }),
  );
  elicitTool(
    'test_elicitation_sep1034_defaults',
    'Tests elicitation with default values per SEP-1034',
    'Please review and update the form fields with defaults',
    {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'User name', default: 'John Doe' },
        age: { type: 'integer', description: 'User age', default: 30 },
        score: { type: 'number', description: 'User score', default: 95.5 },
        status: {
          type: 'string',
          description: 'User status',
          enum: ['active', 'inactive', 'pending'],
          default: 'active',
        },
        verified: { type: 'boolean', description: 'Verification status', default: true },
      },
      required: [],
    },
    'Elicitation completed',
  );
  const options = (values, titles) => values.map((v, i) => ({ const: v, title: titles[i] }));
  elicitTool(
    'test_elicitation_sep1330_enums',
    'Tests elicitation with enum schema improvements per SEP-1330',
    'Please select options from the enum fields',
    {
      type: 'object',
      properties: {
        untitledSingle: { type: 'string', description: 'Select one option', enum: ['option1', 'option2', 'option3'] },
        titledSingle: {
          type: 'string',
          description: 'Select one option with titles',
          oneOf: options(['value1', 'value2', 'value3'], ['First Option', 'Second Option', 'Third Option']),
        },
        legacyEnum: {
          type: 'string',
          description: 'Select one option (legacy)',
          enum: ['opt1', 'opt2', 'opt3'],
          enumNames: ['Option One', 'Option Two', 'Option Three'],
        },
        untitledMulti: {
          type: 'array',
          description: 'Select multiple options',
          minItems: 1,
          maxItems: 3,
          items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
        },
        titledMulti: {
          type: 'array',
          description: 'Select multiple options with titles',
          minItems: 1,
          maxItems: 3,
          items: { anyOf: options(['value1', 'value2', 'value3'], ['First Choice', 'Second Choice', 'Third Choice']) },
        },
      },
      required: [],
    },
    'Elicitation completed',
  );
  tool(
    'json_schema_2020_12_tool',
    'Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)',
    async (args) => text(`JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}`),
    fromJsonSchema(SCHEMA_2020_12),
  );
}

/** The suite's fixed resources: as listed, plus what a read returns. */
const FIXED_RESOURCES = [
  {
    uri: 'test://static-text',
    name: 'static-text',
    title: 'Static Text Resource',
    description: 'A static text resource for testing',
    mimeType: 'text/plain',
    body: { text: 'This is the content of the static text resource.' },
  },
  {
    uri: 'test://static-binary',
    name: 'static-binary',
    title: 'Static Binary Resource',
    description: 'A static binary resource (image) for testing',
    mimeType: 'image/png',
    body: { blob: IMAGE },
  },
  {
    uri: 'test://watched-resource',
    name: 'watched-resource',
    title: 'Watched Resource',
    description: 'A resource that auto-updates every 3 seconds',
    mimeType: 'text/plain',
    body: { text: 'Watched resource content' },
  },
];
const TEMPLATE = /^test:\/\/template\/([^/]+)\/data$/;
const PUBLIC = { ttlMs: 60_000, cacheScope: 'public' };

/**
 * The fixture resources as a ResourceProvider (@stoa/mcp): the executor serves them beside its skills and
 * artifacts through its own resources/* methods, the same for every caller.
 */
const resources = {
  cache: { list: PUBLIC, templates: PUBLIC },
  list: async () => FIXED_RESOURCES.map(({ body: _body, ...listed }) => listed),
  templates: async () => [
    {
      uriTemplate: 'test://template/{id}/data',
      name: 'template',
      title: 'Resource Template',
      description: 'A resource template with parameter substitution',
      mimeType: 'application/json',
    },
  ],
  read: async (_principal, uri) => {
    const fixed = FIXED_RESOURCES.find((r) => r.uri === uri);
    if (fixed) return { contents: [{ uri, mimeType: fixed.mimeType, ...fixed.body }], cache: PUBLIC };
    const id = TEMPLATE.exec(uri)?.[1];
    if (id === undefined) return undefined;
    const text = JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` });
    return { contents: [{ uri, mimeType: 'application/json', text }], cache: PUBLIC };
  },
};

/** @param {import('@modelcontextprotocol/server').McpServer} server */
function prompts(server) {
  const user = (content) => ({ role: 'user', content });
  server.registerPrompt(
    'test_simple_prompt',
    { title: 'Simple Test Prompt', description: 'A simple prompt without arguments' },
    async () => ({ messages: [user({ type: 'text', text: 'This is a simple prompt for testing.' })] }),
  );
  server.registerPrompt(
    'test_prompt_with_arguments',
    {
      title: 'Prompt With Arguments',
      description: 'A prompt with required arguments',
      argsSchema: z.object({
        arg1: z.string().describe('First test argument'),
        arg2: z.string().describe('Second test argument'),
      }),
    },
    async ({ arg1, arg2 }) => ({
      messages: [user({ type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` })],
    }),
  );
  server.registerPrompt(
    'test_prompt_with_embedded_resource',
    {
      title: 'Prompt With Embedded Resource',
      description: 'A prompt that includes an embedded resource',
      argsSchema: z.object({ resourceUri: z.string().describe('URI of the resource to embed') }),
    },
    async ({ resourceUri }) => ({
      messages: [
        user({
          type: 'resource',
          resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' },
        }),
        user({ type: 'text', text: 'Please process the embedded resource above.' }),
      ],
    }),
  );
  server.registerPrompt(
    'test_prompt_with_image',
    { title: 'Prompt With Image', description: 'A prompt that includes image content' },
    async () => ({
      messages: [
        user({ type: 'image', data: IMAGE, mimeType: 'image/png' }),
        user({ type: 'text', text: 'Please analyze the image above.' }),
      ],
    }),
  );
}

/**
 * Every fixture on one MCP server instance. resources/subscribe exists in the 2025 era only (2026-07-28 removed it
 * for subscriptions/listen, and its scenarios expect -32601 there).
 */
function register(server, era) {
  tools(server);
  prompts(server);
  server.server.registerCapabilities({
    completions: {},
    ...(era === 'legacy' ? { resources: { subscribe: true } } : {}),
  });
  server.server.setRequestHandler('completion/complete', async () => ({
    completion: { values: [], total: 0, hasMore: false },
  }));
  if (era !== 'legacy') return;
  const ok = async () => ({});
  server.server.setRequestHandler('resources/subscribe', ok);
  server.server.setRequestHandler('resources/unsubscribe', ok);
}

module.exports = { register, resources };
