import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { envMapOf } from '@stoa/config';
import { activityConfigSchema } from '../apps/activity/src/activity.config';
import { dispatcherConfigSchema } from '../apps/dispatcher/src/dispatcher.config';
import { executorConfigSchema } from '../apps/executor/src/executor.config';
import { gatewayConfigSchema } from '../apps/gateway/src/gateway.config';
import { routerConfigSchema } from '../apps/router/src/router.config';
import { squareConfigSchema } from '../apps/square/src/square.config';

// Every env variable an app's config schema declares (`meta({ env })`) is documented in .env.example, and no
// app's schema declares one name for two keys (envMapOf throws).
describe('config env names', () => {
  const documented = readFileSync('.env.example', 'utf8');
  const apps = {
    executor: executorConfigSchema,
    router: routerConfigSchema,
    gateway: gatewayConfigSchema,
    dispatcher: dispatcherConfigSchema,
    square: squareConfigSchema,
    activity: activityConfigSchema,
  };
  it.each(Object.entries(apps))('%s: every declared variable is in .env.example', (_app, schema) => {
    const names = Object.keys(envMapOf(schema));
    expect(names.length).toBeGreaterThan(10);
    expect(names.filter((n) => !new RegExp(`\\b${n}\\b`).test(documented))).toEqual([]);
  });
});
