import { describe, expect, it } from 'vitest';
import { buildKernelEnv } from './kernel-env';
import { z } from 'zod';
import { kernelEnvironmentFields } from './kernel.config';

describe('buildKernelEnv', () => {
  const host = {
    PATH: '/usr/bin',
    HOME: '/root',
    DATABASE_URL: 'postgres://u:p@h/db',
    REDIS_URL: 'redis://h',
    ENTRA_CLIENT_SECRET: 's',
    MY_TOKEN: 't',
    DB_PASSWORD: 'p',
    SOME_KEY: 'k',
    CUSTOM: 'c',
  };

  it('keeps only allow-listed variables and adds the interpreter bin dir to PATH', () => {
    const env = buildKernelEnv({
      host,
      pythonExecutable: '/opt/py/bin/python3',
      passthrough: [],
      extra: {},
      session: { AGORA_OUTPUT_DIR: '/o' },
    });
    expect(env.PATH).toBe('/opt/py/bin:/usr/bin');
    expect(env.AGORA_OUTPUT_DIR).toBe('/o');
    for (const name of [
      'DATABASE_URL',
      'REDIS_URL',
      'ENTRA_CLIENT_SECRET',
      'MY_TOKEN',
      'DB_PASSWORD',
      'SOME_KEY',
      'CUSTOM',
    ])
      expect(env).not.toHaveProperty(name);
  });

  it('passes through named variables but never secret-looking ones', () => {
    const env = buildKernelEnv({
      host,
      pythonExecutable: '/p/python',
      passthrough: ['CUSTOM', 'MY_TOKEN'],
      extra: { EXTRA: '1' },
      session: {},
    });
    expect(env.CUSTOM).toBe('c');
    expect(env.EXTRA).toBe('1');
    expect(env).not.toHaveProperty('MY_TOKEN');
  });

  it('refuses a secret-looking passthrough name in config with a reason', () => {
    const r = z.object(kernelEnvironmentFields).safeParse({ passthrough_env: ['AWS_SECRET_ACCESS_KEY'] });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.message).toContain('kernels must not see server secrets');
  });
});
