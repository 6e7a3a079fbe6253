import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { envMapOf, loadConfig } from '@stoa/config';

describe('envMapOf', () => {
  const server = z
    .strictObject({
      host: z.string().default('127.0.0.1').meta({ env: 'HOST' }),
      public_url: z
        .url()
        .optional()
        .meta({ env: ['PUBLIC_BASE_URL', 'SERVER_PUBLIC_URL'] }),
    })
    .prefault({});
  const schema = z.strictObject({
    server,
    auth: z
      .preprocess((v) => v, z.object({ mode: z.enum(['noop', 'entra']).optional().meta({ env: 'MODE' }) }))
      .prefault({}),
    jobs: z
      .object({ redis_url: z.string().optional().meta({ env: 'REDIS_URL' }) })
      .transform((j) => j)
      .optional(),
    plain: z.string().optional(),
  });

  it('finds names through prefault, optional, default, preprocess and transform, at dotted paths', () => {
    expect(envMapOf(schema)).toEqual({
      HOST: 'server.host',
      PUBLIC_BASE_URL: 'server.public_url',
      SERVER_PUBLIC_URL: 'server.public_url',
      MODE: 'auth.mode',
      REDIS_URL: 'jobs.redis_url',
    });
  });

  it('lets the later of two names for one key win, and names the variable a bad value came from', () => {
    const env = { PUBLIC_BASE_URL: 'http://a.example', SERVER_PUBLIC_URL: 'http://b.example' };
    expect(loadConfig({ schema, env }).config.server.public_url).toBe('http://b.example');
    expect(() => loadConfig({ schema, env: { MODE: 'open' } })).toThrow(/auth\.mode \(from MODE\)/);
  });

  it('refuses a name declared at two paths of one schema', () => {
    const both = z.object({ a: server, b: server });
    expect(() => envMapOf(both)).toThrow('env variable HOST is declared for both a.host and b.host');
  });
});
