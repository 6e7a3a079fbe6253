import { describe, expect, it } from 'vitest';
import { authConfigSchema, bearerChallenge, entraSettings } from '@stoa/auth';

describe('auth config', () => {
  it('is no-op without a client id and Entra with one', () => {
    expect(authConfigSchema.parse({}).mode).toBe('noop');
    expect(authConfigSchema.parse({ client_id: 'c', tenant_id: 't' }).mode).toBe('entra');
  });

  it('accepts passport-azure-ad spellings (clientID) and rejects unknown keys', () => {
    expect(authConfigSchema.parse({ clientID: 'c', tenant_id: 't' })).toMatchObject({ mode: 'entra', client_id: 'c' });
    expect(authConfigSchema.safeParse({ client_id: 'c', tenant_id: 't', audiences: ['x'] }).success).toBe(false);
  });

  it('names every missing Entra key', () => {
    const r = authConfigSchema.safeParse({ mode: 'entra' });
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => i.path.join('.'))).toEqual(['client_id', 'tenant_id']);
  });

  it('derives passport-azure-ad style defaults: audiences, v1+v2 issuers, metadata URL', () => {
    const s = entraSettings(authConfigSchema.parse({ client_id: 'cid', tenant_id: 'tid' }));
    expect(s.audiences).toEqual(['cid', 'api://cid']);
    expect(s.issuers).toEqual(['https://login.microsoftonline.com/tid/v2.0', 'https://sts.windows.net/tid/']);
    expect(s.metadataUrl).toBe('https://login.microsoftonline.com/tid/v2.0/.well-known/openid-configuration');
  });

  it('honours an authority override and validateIssuer: false', () => {
    const s = entraSettings(authConfigSchema.parse({ client_id: 'c', tenant_id: 't', authority: 'https://login.microsoftonline.us/', validateIssuer: false }));
    expect(s.metadataUrl).toBe('https://login.microsoftonline.us/t/v2.0/.well-known/openid-configuration');
    expect(s.issuers).toBeUndefined();
  });
});

describe('bearerChallenge', () => {
  const settings = { auth: authConfigSchema.parse({}), publicBaseUrl: 'https://stoa.example/' };
  it('points /mcp at the path-suffixed metadata, absolute under PUBLIC_BASE_URL', () => {
    expect(bearerChallenge(settings, '/mcp', false, '')).toBe('Bearer resource_metadata="https://stoa.example/.well-known/oauth-protected-resource/mcp"');
    expect(bearerChallenge({ auth: settings.auth }, '/admin/v1/sessions', false, '')).toBe('Bearer resource_metadata="/.well-known/oauth-protected-resource"');
  });
  it('adds invalid_token with a quote-safe description when a token was sent', () => {
    expect(bearerChallenge(settings, '/mcp', true, 'bad "token"\n')).toContain('error="invalid_token", error_description="bad  token  "');
  });
});
