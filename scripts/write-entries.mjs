// Gives each built app a stable entry point: dist/apps/<app>/main.js.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

for (const app of process.argv.slice(2)) {
  const dir = join('dist', 'apps', app);
  const target = join(dir, 'apps', app, 'src', 'main.js');
  if (!existsSync(target)) {
    console.error(`build output missing: ${target}`);
    process.exit(1);
  }
  writeFileSync(join(dir, 'main.js'), `require('./apps/${app}/src/main.js');\n`);
}
