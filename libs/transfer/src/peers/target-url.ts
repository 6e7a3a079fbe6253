import { Logger } from '@nestjs/common';
import { appError, ErrorKind } from '@stoa/core';

const logger = new Logger('ObjectTransferTarget');

/** Always allowed over plain http, and exempt from the allowed-host list (reference §6.4). */
const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '::1']);

const TRUSTED_HTTP_ENV = 'OBJECT_TRANSFER_TRUSTED_HTTP_HOSTS';
const ALLOWED_HOSTS_ENV = 'OBJECT_TRANSFER_ALLOWED_HOSTS';

/** Which rule refused a target URL (in `details.rule`). */
export const TransferPolicyRule = {
  noHostname: 'no_hostname',
  scheme: 'scheme',
  invalidUrl: 'invalid_url',
  userinfo: 'userinfo',
  plainHttp: 'plain_http',
  allowedHosts: 'allowed_hosts',
} as const;
export type TransferPolicyRule = (typeof TransferPolicyRule)[keyof typeof TransferPolicyRule];

/** An object-transfer target URL refused before any credential is sent. */
export class TransferPolicyError extends appError('TRANSFER_TARGET_REFUSED', ErrorKind.forbidden) {
  constructor(message: string, rule: TransferPolicyRule, host?: string) {
    super(message, host === undefined ? { rule } : { rule, host });
  }
}

export interface TargetUrlOptions {
  /** The URL comes from an operator-curated source (registry peer): plain http allowed to any host. */
  trustHttp: boolean;
  env: { OBJECT_TRANSFER_TRUSTED_HTTP_HOSTS?: string; OBJECT_TRANSFER_ALLOWED_HOSTS?: string };
}

/** Host patterns from an env value: comma- and/or whitespace-separated, lower-cased, trailing dots dropped. */
export function hostPatterns(value: string | undefined): string[] {
  if (!value) return [];
  return value
    .split(/[\s,]+/)
    .map(normalisePattern)
    .filter((p) => p !== '');
}

/** True when `host` matches a pattern: `*.suffix` matches proper subdomains only, anything else exactly. */
export function hostMatches(host: string, patterns: readonly string[]): boolean {
  const h = unbracket(host.toLowerCase());
  return patterns.some((raw) => {
    const pattern = normalisePattern(raw);
    if (pattern.startsWith('*.')) {
      const suffix = pattern.slice(1);
      return h.length > suffix.length && h.endsWith(suffix);
    }
    return pattern !== '' && h === pattern;
  });
}

/**
 * Checks an object-transfer target before credentials are sent to it (reference §6.4) and returns the
 * peer's base URL: a trailing `/mcp` or `/mcp/` removed, no query or fragment. Send only to the returned
 * URL: the decisions are made on its host, the one fetch connects to.
 */
export function validateTargetUrl(url: string, opts: TargetUrlOptions): URL {
  const raw = splitAuthority(url);
  if (!raw.host)
    throw new TransferPolicyError('Object transfer target URL must include a hostname.', TransferPolicyRule.noHostname);
  if (raw.scheme !== 'http' && raw.scheme !== 'https') {
    throw new TransferPolicyError(
      `Object transfer target URL must use HTTP or HTTPS (got '${raw.scheme}').`,
      TransferPolicyRule.scheme,
      raw.host,
    );
  }
  const parsed = parseWhatwg(url, raw.host);
  // Hardening beyond the reference: userinfo is where URL parsers disagree on the host
  // (`http://evil\@localhost`), and fetch refuses credentials in URLs anyway.
  if (raw.userinfo || parsed.username || parsed.password) {
    throw new TransferPolicyError(
      'Object transfer target URL must not contain user information (user:password@). Configure the peer by its plain base URL; credentials travel in the Authorization header.',
      TransferPolicyRule.userinfo,
      unbracket(parsed.hostname),
    );
  }
  const host = unbracket(parsed.hostname);
  const loopback = LOOPBACK_HOSTS.has(host);

  if (parsed.protocol === 'http:' && !loopback) {
    const trusted = opts.trustHttp || hostMatches(host, hostPatterns(opts.env.OBJECT_TRANSFER_TRUSTED_HTTP_HOSTS));
    if (!trusted) {
      throw new TransferPolicyError(
        operatorGate(
          `Plain HTTP to '${host}' is only permitted for loopback addresses (localhost, 127.0.0.1, ::1) or explicitly trusted hosts.`,
          TRUSTED_HTTP_ENV,
          'use an HTTPS URL, or ask the operator to add this host to the trusted list.',
        ),
        TransferPolicyRule.plainHttp,
        host,
      );
    }
    logger.warn(
      { host },
      'plain-HTTP object transfer to a trusted host: the bearer token crosses an unencrypted connection',
    );
  }

  // Trusted-for-http hosts are not exempt: the allow-list stays an SSRF control for internal names.
  const allowed = hostPatterns(opts.env.OBJECT_TRANSFER_ALLOWED_HOSTS);
  if (allowed.length > 0 && !loopback && !hostMatches(host, allowed)) {
    throw new TransferPolicyError(
      operatorGate(
        `Object transfer target host '${host}' is not in the allowed-host list.`,
        ALLOWED_HOSTS_ENV,
        'ask the operator to add this host if the transfer is expected.',
      ),
      TransferPolicyRule.allowedHosts,
      host,
    );
  }
  return baseUrl(parsed);
}

/** The reference's B-class message: a deployment policy the agent cannot change (agent_guidance.operator_gate). */
function operatorGate(problem: string, envVar: string, tellUser: string): string {
  return `${problem} This is a deployment policy controlled by the operator via the ${envVar} environment variable — it cannot be changed from agent code. Do not retry; ${tellUser}`;
}

/**
 * Scheme and host read the way the reference (Python urlsplit) reads them, so that `https:///path`,
 * `https:host` or `file:///x` count as having no hostname; WHATWG URL would invent one for them.
 */
function splitAuthority(url: string): { scheme: string; host: string; userinfo: boolean } {
  let start = 0;
  while (start < url.length && url.charCodeAt(start) <= 0x20) start++; // C0 controls and space, as urlsplit and URL drop them
  const trimmed = url.slice(start);
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):(.*)$/s.exec(trimmed);
  const scheme = m?.[1]?.toLowerCase() ?? '';
  const rest = m ? (m[2] ?? '') : trimmed;
  if (!rest.startsWith('//')) return { scheme, host: '', userinfo: false };
  const netloc = rest.slice(2).split(/[/?#]/, 1)[0] ?? '';
  const at = netloc.lastIndexOf('@');
  const hostPort = netloc.slice(at + 1);
  const close = hostPort.indexOf(']');
  const host = hostPort.startsWith('[')
    ? hostPort.slice(1, close < 0 ? undefined : close)
    : (hostPort.split(':', 1)[0] ?? '');
  return { scheme, host: host.toLowerCase(), userinfo: at >= 0 };
}

function parseWhatwg(url: string, host: string): URL {
  try {
    return new URL(url.trim());
  } catch {
    throw new TransferPolicyError(
      `Object transfer target URL '${url}' is not a valid URL. Use http(s)://host[:port][/path].`,
      TransferPolicyRule.invalidUrl,
      host,
    );
  }
}

/** The peer's root: `/mcp` stripped (agents and operators often paste the MCP endpoint). */
function baseUrl(parsed: URL): URL {
  const base = new URL(parsed.href);
  base.search = '';
  base.hash = '';
  base.pathname = base.pathname
    .replace(/\/+$/, '')
    .replace(/\/mcp$/, '')
    .replace(/\/+$/, '');
  return base;
}

function normalisePattern(pattern: string): string {
  const p = unbracket(pattern.trim().toLowerCase().replace(/\.+$/, ''));
  if (!p.includes(':')) return p;
  // IPv6 patterns compare in the compressed form URL uses for hosts.
  try {
    return unbracket(new URL(`http://[${p}]/`).hostname);
  } catch {
    return p;
  }
}

function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}
