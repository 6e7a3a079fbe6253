// The URL rules live with the client side of MCP (@stoa/client); this path stays for the HTTP layer's import.
export { upstreamUrls } from '@stoa/client';
