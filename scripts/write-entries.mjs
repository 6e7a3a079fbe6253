// Lays out each app from the one compiled program in dist/embed (`nest build embed` type-checks and emits every app
// and lib once: building each app on its own compiled the same libs eight times, ~100 s of every build) and gives
// it a stable entry point: dist/apps/<app>/main.js. Each dist/apps/<app> keeps the layout its own build had
// (apps/<app>/… and libs/…), so images, entrypoints and relative paths are unchanged.
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const from = join('dist', 'embed');
for (const app of process.argv.slice(2)) {
  const source = join(from, 'apps', app);
  if (!existsSync(join(source, 'src', 'main.js'))) {
    console.error(`build output missing: ${join(source, 'src', 'main.js')} (run nest build embed first)`);
    process.exit(1);
  }
  const dir = join('dist', 'apps', app);
  rmSync(dir, { recursive: true, force: true });
  cpSync(source, join(dir, 'apps', app), { recursive: true });
  cpSync(join(from, 'libs'), join(dir, 'libs'), { recursive: true });
  deepenSourceMaps(dir);
  writeFileSync(join(dir, 'main.js'), `require('./apps/${app}/src/main.js');\n`);
}

/** dist/apps/<app>/… sits one folder deeper than dist/embed/…: each map's sources gain one `../`. */
function deepenSourceMaps(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.js.map')) continue;
    const file = join(entry.parentPath, entry.name);
    const map = JSON.parse(readFileSync(file, 'utf8'));
    map.sources = map.sources.map((s) => `../${s}`);
    writeFileSync(file, JSON.stringify(map));
  }
}
