import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { CliError } from './cli.errors';

/** A file shipped with the CLI (`apps/cli/<sub>`), found from source and from dist alike. */
export function cliAsset(sub: string): string {
  for (let dir = __dirname, i = 0; i < 8; i++, dir = dirname(dir)) {
    const candidate = join(dir, 'apps', 'cli', sub);
    if (existsSync(candidate)) return candidate;
  }
  throw new CliError(`The CLI's ${sub} is missing: run stoa from a checkout of the Stoa repository (npm ci).`);
}

/** The build output (`dist/`) this CLI runs from: other apps' entries and config modules live there. */
export function distRoot(): string {
  for (let dir = __dirname, i = 0; i < 8; i++, dir = dirname(dir)) {
    if (basename(dir) === 'dist') return dir;
  }
  throw new CliError('The stoa CLI runs from the build: run `npm run build`, then `npx stoa …`.');
}

/** The built entry of an app (`dist/apps/<app>/main.js`). */
export function appEntry(app: string): string {
  const entry = join(distRoot(), 'apps', app, 'main.js');
  if (!existsSync(entry)) throw new CliError(`${entry} is missing: run \`npm run build\` first.`);
  return entry;
}
