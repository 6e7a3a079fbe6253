import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export type Controller = 'memory' | 'pids';

/** One controller's hierarchy: where our cgroup is, and which version it is. */
export interface Hierarchy {
  version: 1 | 2;
  /** The server's own cgroup directory in this hierarchy (from /proc/self/cgroup). */
  own: string;
  controllers: Controller[];
}

/**
 * The cgroup hierarchies mounted here and our cgroup in each (from /proc/self/mountinfo and /proc/self/cgroup),
 * limited to the memory and pids controllers. A v2 hierarchy counts only for controllers our cgroup can hand on.
 */
export function discoverHierarchies(): Hierarchy[] {
  let mountinfo: string;
  let self: string;
  try {
    mountinfo = readFileSync('/proc/self/mountinfo', 'utf8');
    self = readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    return [];
  }
  const paths = new Map<string, string>(); // "memory" / "pids" / "" (v2) → our path
  for (const line of self.split('\n')) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line);
    if (m) for (const c of m[1]!.split(',')) paths.set(c, m[2]!);
  }
  const out: Hierarchy[] = [];
  for (const line of mountinfo.split('\n')) {
    const [pre, post] = line.split(' - ');
    if (!pre || !post) continue;
    const f = pre.split(' ');
    const [fstype, , opts] = post.split(' ');
    const root = f[3]!;
    const mountPoint = f[4]!;
    if (fstype === 'cgroup2') {
      const own = inMount(mountPoint, root, paths.get(''));
      if (!own) continue;
      const controllers = readText(join(own, 'cgroup.controllers'))
        .split(/\s+/)
        .filter((c): c is Controller => c === 'memory' || c === 'pids');
      if (controllers.length) out.push({ version: 2, own, controllers });
    } else if (fstype === 'cgroup') {
      const controllers = (opts ?? '').split(',').filter((c): c is Controller => c === 'memory' || c === 'pids');
      for (const c of controllers) {
        const own = inMount(mountPoint, root, paths.get(c));
        if (own) out.push({ version: 1, own, controllers: [c] });
      }
    }
  }
  return out;
}

/** Our cgroup's directory under a cgroupfs mounted at `mountPoint` whose root is `root`. */
function inMount(mountPoint: string, root: string, path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  const rel = root === '/' ? path : path.startsWith(root) ? path.slice(root.length) : undefined;
  if (rel === undefined) return undefined;
  const dir = join(mountPoint, rel);
  return existsSync(dir) ? dir : undefined;
}

export function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
