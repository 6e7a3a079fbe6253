#!/usr/bin/env node
// `npx stoa …`: the CLI app from the build (npm run build makes dist/apps/cli/main.js).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const entry = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'apps', 'cli', 'main.js');
if (!existsSync(entry)) {
  process.stderr.write(`${entry} is missing: run \`npm run build\` first, then \`npx stoa …\` again.\n`);
  process.exit(2);
}
createRequire(import.meta.url)(entry);
