import { resolve } from 'node:path';
import { defineConfig } from 'vitest/config';

const libs = [
  'core',
  'config',
  'persistence',
  'mcp',
  'kernel',
  'sessions',
  'execution',
  'auth',
  'tools',
  'jobs',
  'provision',
  'connectors',
  'audit',
  'transfer',
  'catalog',
  'client',
  'activity',
  'coordination',
];
const alias = Object.fromEntries(
  libs.map((l) => [`@stoa/${l}`, resolve(import.meta.dirname, `libs/${l}/src/index.ts`)]),
);

export default defineConfig({
  resolve: { alias },
  test: {
    projects: [
      {
        extends: true,
        // Unit specs share one module registry: isolated, each of the ~50 files re-imported Nest, TypeORM and the
        // MCP SDK (70 s of imports against 7 s); none keeps module-level state another depends on.
        test: { name: 'unit', include: ['libs/**/src/**/*.spec.ts', 'apps/**/src/**/*.spec.ts'], isolate: false },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['libs/**/test/**/*.int-spec.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['apps/**/test/**/*.e2e-spec.ts', 'test/**/*.e2e-spec.ts'],
          testTimeout: 120_000,
          hookTimeout: 240_000,
          globalSetup: ['test/setup/global-setup.ts'],
        },
      },
    ],
  },
});
