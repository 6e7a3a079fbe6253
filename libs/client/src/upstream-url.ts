/** The upstream's MCP endpoint and base URL, whether the configured URL ends with /mcp or not. */
export function upstreamUrls(url: string): {
  base: string;
  mcp: string;
  origin: string;
  mcpPath: string;
  basePath: string;
} {
  const u = new URL(url);
  const path = u.pathname.replace(/\/+$/, '').replace(/\/mcp$/, '');
  return {
    base: `${u.origin}${path}`,
    mcp: `${u.origin}${path}/mcp`,
    origin: u.origin,
    mcpPath: `${path}/mcp`,
    basePath: path,
  };
}
