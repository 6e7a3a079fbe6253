import { describe, expect, it } from 'vitest';
import { authConfigSchema, bearerChallenge, entraSettings } from '@stoa/auth';
import { ConfigError, loadConfig } from '@stoa/config';
import { z } from 'zod';

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

  it('refuses an explicit noop mode when ENTRA_CLIENT_ID and ENTRA_TENANT_ID are in the environment, naming both settings', () => {
    const load = () =>
      loadConfig({
        schema: z.object({ auth: authConfigSchema }),
        env: { ENTRA_CLIENT_ID: 'cid', ENTRA_TENANT_ID: 'tid' },
        overrides: { 'auth.mode': 'noop' },
      });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(
      /auth\.client_id \(from ENTRA_CLIENT_ID\): .*auth\.mode is 'noop'.*STOA_AUTH_MODE=entra.*unset ENTRA_CLIENT_ID/,
    );
    expect(load).toThrow(/auth\.tenant_id \(from ENTRA_TENANT_ID\): .*auth\.mode is 'noop'/);
  });

  it('refuses an explicit noop mode beside Entra keys written in the YAML', () => {
    const r = authConfigSchema.safeParse({ mode: 'noop', clientID: 'c', audience: ['api://c'] });
    expect(r.error?.issues.map((i) => i.path.join('.'))).toEqual(['client_id', 'audience']);
  });

  it('treats a tenant id without a client id as a half-set Entra config, never as no-op', () => {
    const r = authConfigSchema.safeParse({ tenant_id: 't' });
    expect(r.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`)).toEqual([
      'client_id: required for Entra ID auth (or set ENTRA_CLIENT_ID)',
    ]);
  });

  it('derives passport-azure-ad style defaults: audiences, v1+v2 issuers, metadata URL', () => {
    const s = entraSettings(authConfigSchema.parse({ client_id: 'cid', tenant_id: 'tid' }));
    expect(s.audiences).toEqual(['cid', 'api://cid']);
    expect(s.issuers).toEqual(['https://login.microsoftonline.com/tid/v2.0', 'https://sts.windows.net/tid/']);
    expect(s.metadataUrl).toBe('https://login.microsoftonline.com/tid/v2.0/.well-known/openid-configuration');
  });

  it('honours an authority override and validateIssuer: false', () => {
    const s = entraSettings(
      authConfigSchema.parse({
        client_id: 'c',
        tenant_id: 't',
        authority: 'https://login.microsoftonline.us/',
        validateIssuer: false,
      }),
    );
    expect(s.metadataUrl).toBe('https://login.microsoftonline.us/t/v2.0/.well-known/openid-configuration');
    expect(s.issuers).toBeUndefined();
  });
});

describe('bearerChallenge', () => {
  const settings = { auth: authConfigSchema.parse({}), publicBaseUrl: 'https://stoa.example/' };
  it('points /mcp at the path-suffixed metadata, absolute under PUBLIC_BASE_URL', () => {
    expect(bearerChallenge(settings, '/mcp', false, '')).toBe(
      'Bearer resource_metadata="https://stoa.example/.well-known/oauth-protected-resource/mcp"',
    );
    expect(bearerChallenge({ auth: settings.auth }, '/admin/v1/sessions', false, '')).toBe(
      'Bearer resource_metadata="/.well-known/oauth-protected-resource"',
    );
  });
  it('adds invalid_token with a quote-safe description when a token was sent', () => {
    expect(bearerChallenge(settings, '/mcp', true, 'bad "token"\n')).toContain(
      'error="invalid_token", error_description="bad  token  "',
    );
  });
});
