import { describe, expect, it } from 'vitest';
import { StartupRefusedError } from '@stoa/core';
import { parseCli } from './cli';

const USAGE = 'Usage: app --config <x.yaml>';

describe('parseCli', () => {
  it('maps the shared flags to config paths and reads the app flags', () => {
    const cli = parseCli(
      USAGE,
      ['warm'],
      ['-c', 'a.yaml', '--host', '0.0.0.0', '--port', '9', '--allow-unauthenticated-remote', '--warm'],
      {},
    );
    expect(cli).toEqual({
      help: false,
      file: 'a.yaml',
      overrides: { 'server.host': '0.0.0.0', 'server.port': '9', 'server.allow_unauthenticated_remote': true },
      flags: { warm: true },
    });
  });

  it('falls back to STOA_CONFIG and leaves flags not given undefined', () => {
    const cli = parseCli(USAGE, ['warm'], [], { STOA_CONFIG: 'env.yaml' });
    expect(cli).toEqual({
      help: false,
      file: 'env.yaml',
      overrides: {
        'server.host': undefined,
        'server.port': undefined,
        'server.allow_unauthenticated_remote': undefined,
      },
      flags: { warm: false },
    });
  });

  it('reports --help without reading anything else', () => {
    expect(parseCli(USAGE, [], ['-h'], {}).help).toBe(true);
  });

  it('refuses an unknown flag with the usage', () => {
    const refuse = () => parseCli(USAGE, [], ['--bogus'], {});
    expect(refuse).toThrow(StartupRefusedError);
    expect(refuse).toThrow(/Unknown option '--bogus'[\s\S]*Usage: app --config <x\.yaml>/);
  });
});
