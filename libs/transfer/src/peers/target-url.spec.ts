import { Logger } from '@nestjs/common';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { hostMatches, hostPatterns, TransferPolicyError, validateTargetUrl, type TargetUrlOptions } from './target-url';

const TRUSTED = 'OBJECT_TRANSFER_TRUSTED_HTTP_HOSTS';
const ALLOWED = 'OBJECT_TRANSFER_ALLOWED_HOSTS';
const HTTP_GATE =
  ' This is a deployment policy controlled by the operator via the OBJECT_TRANSFER_TRUSTED_HTTP_HOSTS environment variable — it cannot be changed from agent code. Do not retry; use an HTTPS URL, or ask the operator to add this host to the trusted list.';
const ALLOWED_GATE =
  ' This is a deployment policy controlled by the operator via the OBJECT_TRANSFER_ALLOWED_HOSTS environment variable — it cannot be changed from agent code. Do not retry; ask the operator to add this host if the transfer is expected.';

function opts(env: TargetUrlOptions['env'] = {}, trustHttp = false): TargetUrlOptions {
  return { trustHttp, env };
}

function refusal(url: string, o: TargetUrlOptions): TransferPolicyError {
  try {
    validateTargetUrl(url, o);
  } catch (err) {
    if (err instanceof TransferPolicyError) return err;
    throw err;
  }
  throw new Error(`expected ${url} to be refused`);
}

beforeAll(() => {
  // Trusted plain-http use logs a warning by design; keep the test output readable.
  Logger.overrideLogger(false);
});

describe('hostPatterns', () => {
  it('splits on commas and whitespace, lower-cases and drops trailing dots', () => {
    expect(hostPatterns(' A.example.COM., b-server\t*.Svc.Cluster.Local,,\nc ')).toEqual([
      'a.example.com',
      'b-server',
      '*.svc.cluster.local',
      'c',
    ]);
  });

  it('returns no patterns for an unset or blank value', () => {
    expect(hostPatterns(undefined)).toEqual([]);
    expect(hostPatterns('  , ')).toEqual([]);
  });
});

describe('hostMatches', () => {
  it('matches a wildcard against proper subdomains but not the bare domain', () => {
    expect(hostMatches('chem.svc.cluster.local', ['*.svc.cluster.local'])).toBe(true);
    expect(hostMatches('a.b.svc.cluster.local', ['*.svc.cluster.local'])).toBe(true);
    expect(hostMatches('svc.cluster.local', ['*.svc.cluster.local'])).toBe(false);
    expect(hostMatches('evilsvc.cluster.local', ['*.svc.cluster.local'])).toBe(false);
  });

  it('matches other patterns exactly', () => {
    expect(hostMatches('chemistry-server', ['chemistry-server'])).toBe(true);
    expect(hostMatches('chemistry-server2', ['chemistry-server'])).toBe(false);
  });

  it('compares bracketed IPv6 hosts with unbracketed patterns', () => {
    expect(hostMatches('[fd00::1]', ['fd00:0:0::1'])).toBe(true);
    expect(hostMatches('fd00::1', ['[FD00::1]'])).toBe(true);
  });
});

describe('validateTargetUrl', () => {
  it('allows plain http to loopback hosts', () => {
    expect(validateTargetUrl('http://localhost:8001', opts()).href).toBe('http://localhost:8001/');
    expect(validateTargetUrl('http://127.0.0.1:8001', opts()).host).toBe('127.0.0.1:8001');
    expect(validateTargetUrl('http://[::1]:8001/mcp', opts()).href).toBe('http://[::1]:8001/');
  });

  it('allows https to any host when no allow-list is set', () => {
    expect(validateTargetUrl('https://gis.example.com', opts()).hostname).toBe('gis.example.com');
  });

  it('refuses plain http to a non-loopback host with the operator-gate message', () => {
    const err = refusal('http://example.com:8000', opts());
    expect(err.message).toBe(
      "Plain HTTP to 'example.com' is only permitted for loopback addresses (localhost, 127.0.0.1, ::1) or explicitly trusted hosts." +
        HTTP_GATE,
    );
    expect(err.kind).toBe('forbidden');
    expect(err.details).toEqual({ rule: 'plain_http', host: 'example.com' });
  });

  it('allows plain http to a host listed exactly in the trusted list', () => {
    const env = { [TRUSTED]: 'chemistry-server,earthscience-server energysystems-server' };
    expect(validateTargetUrl('http://earthscience-server:8000/mcp', opts(env)).href).toBe(
      'http://earthscience-server:8000/',
    );
    expect(validateTargetUrl('http://energysystems-server:8000', opts(env)).hostname).toBe('energysystems-server');
  });

  it('allows plain http to subdomains of a trusted wildcard', () => {
    expect(
      validateTargetUrl('http://chem.svc.cluster.local', opts({ [TRUSTED]: '*.svc.cluster.local' })).hostname,
    ).toBe('chem.svc.cluster.local');
  });

  it('refuses plain http to the bare domain of a trusted wildcard', () => {
    expect(refusal('http://svc.cluster.local', opts({ [TRUSTED]: '*.svc.cluster.local' })).message).toContain(
      "Plain HTTP to 'svc.cluster.local'",
    );
  });

  it('refuses plain http to a host outside the trusted list', () => {
    expect(refusal('http://chem.example.com', opts({ [TRUSTED]: '*.svc.cluster.local' })).details).toEqual({
      rule: 'plain_http',
      host: 'chem.example.com',
    });
  });

  it('matches trusted patterns case-insensitively and ignoring their trailing dot', () => {
    const env = { [TRUSTED]: '*.AzureContainerApps.IO. GIS-Server.' };
    expect(validateTargetUrl('http://app.azurecontainerapps.io', opts(env)).hostname).toBe('app.azurecontainerapps.io');
    expect(validateTargetUrl('http://GIS-SERVER:8000', opts(env)).hostname).toBe('gis-server');
  });

  it('allows plain http to any host when the caller trusts the URL (registry peers)', () => {
    expect(validateTargetUrl('http://gis-server:8000', opts({}, true)).hostname).toBe('gis-server');
  });

  it('logs a warning when a bearer token is about to cross plain http', () => {
    const warn = vi.spyOn(Logger.prototype, 'warn');
    validateTargetUrl('http://gis-server:8000', opts({}, true));
    expect(warn).toHaveBeenCalledWith({ host: 'gis-server' }, expect.stringContaining('plain-HTTP'));
    warn.mockRestore();
  });

  it('refuses an https host missing from the allowed-host list', () => {
    const err = refusal('https://evil.example.net', opts({ [ALLOWED]: '*.azurecontainerapps.io' }));
    expect(err.message).toBe(
      "Object transfer target host 'evil.example.net' is not in the allowed-host list." + ALLOWED_GATE,
    );
    expect(err.details).toEqual({ rule: 'allowed_hosts', host: 'evil.example.net' });
  });

  it('allows an https host on the allowed-host list', () => {
    expect(
      validateTargetUrl('https://gis.azurecontainerapps.io', opts({ [ALLOWED]: '*.azurecontainerapps.io' })).hostname,
    ).toBe('gis.azurecontainerapps.io');
  });

  it('keeps applying the allowed-host list to hosts trusted for plain http', () => {
    const env = { [TRUSTED]: 'gis-server chem-server', [ALLOWED]: 'gis-server' };
    expect(validateTargetUrl('http://gis-server:8000', opts(env)).hostname).toBe('gis-server');
    expect(refusal('http://chem-server:8000', opts(env)).details).toEqual({
      rule: 'allowed_hosts',
      host: 'chem-server',
    });
  });

  it('keeps applying the allowed-host list when the caller trusts the URL', () => {
    expect(refusal('http://gis-server:8000', opts({ [ALLOWED]: 'other' }, true)).details.rule).toBe('allowed_hosts');
  });

  it('exempts loopback hosts from the allowed-host list', () => {
    expect(validateTargetUrl('http://localhost:9000', opts({ [ALLOWED]: 'gis-server' })).hostname).toBe('localhost');
  });

  it('refuses schemes other than http and https, even for loopback', () => {
    expect(refusal('ftp://localhost:21', opts()).message).toBe(
      "Object transfer target URL must use HTTP or HTTPS (got 'ftp').",
    );
    expect(refusal('FTP://example.com', opts()).message).toBe(
      "Object transfer target URL must use HTTP or HTTPS (got 'ftp').",
    );
  });

  it('refuses URLs without a hostname', () => {
    for (const url of ['https:///path', 'https:example.com', 'file:///etc/passwd', 'gis-server:8000', '']) {
      const err = refusal(url, opts({}, true));
      expect(err.message).toBe('Object transfer target URL must include a hostname.');
      expect(err.details).toEqual({ rule: 'no_hostname' });
    }
  });

  it('strips a trailing /mcp or /mcp/ and returns the base URL', () => {
    expect(validateTargetUrl('https://gis.example.com/mcp', opts()).href).toBe('https://gis.example.com/');
    expect(validateTargetUrl('https://gis.example.com/mcp/', opts()).href).toBe('https://gis.example.com/');
    expect(validateTargetUrl('https://gis.example.com/tenant-a/mcp/', opts()).href).toBe(
      'https://gis.example.com/tenant-a',
    );
    expect(validateTargetUrl('https://gis.example.com/mcpx', opts()).href).toBe('https://gis.example.com/mcpx');
  });

  it('refuses user information in the URL, where parsers disagree on the host', () => {
    expect(refusal('http://user:pw@localhost:8000', opts()).details.rule).toBe('userinfo');
    expect(refusal('http://evil.example\\@localhost/', opts({}, true)).details.rule).toBe('userinfo');
  });

  it('refuses text that is not a URL with a clear message', () => {
    expect(refusal('http://exa mple.com', opts()).details.rule).toBe('invalid_url');
  });
});
