'use strict';
/**
 * The MCP conformance suite's SEP-2243 custom-header fixture (http-custom-header-server-validation): a tool whose
 * string argument declares `x-mcp-header`, so 2026-07-28 clients mirror it as `Mcp-Param-Region`. The SDK's HTTP
 * entry checks that header against the body before the handler runs (400 + -32020 on a missing, undecodable or
 * mismatched value), so the handler only echoes. Registered on every MCP server instance of the conformance profile
 * only (server.yaml `mcp_extensions`). Never load this in another server: it answers anyone with canned data.
 */
const { z } = require('zod');

const input = z.object({
  region: z.string().describe('Region to greet; mirrored as the Mcp-Param-Region header').meta({
    'x-mcp-header': 'Region',
  }),
});

/** @param {import('@modelcontextprotocol/server').McpServer} server */
function register(server) {
  server.registerTool(
    'test_mcp_param_header',
    { description: 'Echoes a region given both in the body and as the Mcp-Param-Region header', inputSchema: input },
    async ({ region }) => ({ content: [{ type: 'text', text: `region: ${region}` }] }),
  );
}

module.exports = { register };
