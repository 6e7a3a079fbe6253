/**
 * A 2026-07-28 request as a client sends it without a session: the standard `Mcp-*` headers and the JSON-RPC body
 * with its `_meta` envelope (protocol version, no client capabilities unless `meta` declares some). Dependency-free,
 * so unit specs build requests the same way the e2e helpers do.
 */
export function modernRequest(
  method: string,
  params: Record<string, unknown>,
  o: { name?: string; meta?: Record<string, unknown>; id?: string | number } = {},
) {
  return {
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(o.name ? { 'mcp-name': o.name } : {}),
    } as Record<string, string>,
    body: {
      jsonrpc: '2.0',
      id: o.id ?? 1,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {},
          ...o.meta,
        },
      },
    },
  };
}
