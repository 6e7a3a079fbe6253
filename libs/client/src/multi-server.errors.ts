import { appError, ErrorKind } from '@stoa/core';

/** A call was routed to a server that is not connected right now; the session keeps retrying it. */
export class ServerUnavailableError extends appError('MCP_SERVER_UNAVAILABLE', ErrorKind.unavailable) {
  constructor(
    server: string,
    url: string,
    lastError: string | undefined,
    nextRetryAt: Date | undefined,
    options?: { cause?: unknown },
  ) {
    const reason = lastError ?? 'it has not connected yet';
    const retry = nextRetryAt
      ? `in ${Math.max(0, (nextRetryAt.getTime() - Date.now()) / 1000).toFixed(1)} s`
      : 'shortly';
    super(
      `MCP server "${server}" (${url}) is unavailable: ${reason}. The session reconnects in the background ` +
        `(next attempt ${retry}); use another server meanwhile, or wait for the 'serverUp' event / session.status().`,
      { server, url, lastError },
      options,
    );
  }
}

/** No tool of that name exists in the merged catalog. */
export class UnknownToolError extends appError('UNKNOWN_TOOL', ErrorKind.notFound) {
  constructor(tool: string, suggestions: string[], servers: string[]) {
    const hint = suggestions.length
      ? `Did you mean: ${suggestions.join(', ')}?`
      : `Servers in this session: ${servers.join(', ') || '(none)'}.`;
    super(
      `No tool "${tool}" in this session. ${hint} Tools are named <server>__<tool>; session.listTools() lists them all.`,
      {
        tool,
        suggestions,
      },
    );
  }
}

/** A server name that is not part of the session. */
export class UnknownServerError extends appError('UNKNOWN_SERVER', ErrorKind.notFound) {
  constructor(server: string, servers: string[]) {
    super(
      `No server "${server}" in this session. Servers: ${servers.join(', ') || '(none)'} (a role filter may have left some out).`,
      {
        server,
        servers,
      },
    );
  }
}

/**
 * One line from an error and its causes, e.g. `fetch failed: connect ECONNREFUSED 127.0.0.1:8001`.
 * Node's fetch hides the useful part (the socket error) in `cause`; undici's errors carry it in `code`
 * (`other side closed (UND_ERR_SOCKET)`), added when the message does not already say it.
 */
export function describeError(err: unknown): string {
  const parts: string[] = [];
  let current: unknown = err;
  for (let depth = 0; current !== undefined && current !== null && depth < 5; depth++) {
    const message =
      current instanceof Error
        ? withCode(current)
        : typeof current === 'string'
          ? current
          : (JSON.stringify(current) ?? '');
    if (message && !parts.some((p) => p.includes(message))) parts.push(message);
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join(': ') || 'unknown error';
}

function withCode(err: Error): string {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && !err.message.includes(code) ? `${err.message} (${code})` : err.message;
}
