import { statSync } from 'node:fs';
import { dirname, relative, sep } from 'node:path';

/** True when `child` is `parent` or inside it. */
export function isWithin(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !rel.startsWith(sep) && rel !== '..');
}

/** Size cap of a hidden region other than /tmp (an empty tmpfs that only holds mount points). */
const PLACEHOLDER_BYTES = 16 * 1024 * 1024;

/**
 * bubblewrap mount arguments built in the order bwrap applies them: hidden regions (tmpfs) first, from the
 * shallowest, then binds into them. Mount points bwrap would create with mode 0700 are created explicitly
 * with 0755 so an unprivileged kernel can traverse them.
 */
export class MountPlan {
  private readonly hidden: string[] = [];
  private readonly hideArgs: string[] = [];
  private readonly bindArgs: string[] = [];
  private readonly made = new Set<string>();

  /**
   * @param tmpBytes size cap of the private /tmp (bubblewrap `--size`; 0 = the host's default, half its RAM).
   *   Other hidden regions are placeholders that hold only mount points and get a small cap.
   */
  constructor(private readonly tmpBytes = 0) {}

  /** Hides a host directory behind an empty tmpfs (or a file behind /dev/null). */
  hide(path: string): void {
    if (this.hidden.includes(path)) return;
    const st = statSync(path, { throwIfNoEntry: false });
    if (!st) return; // nothing to hide
    if (!st.isDirectory()) {
      this.hideArgs.push('--ro-bind', '/dev/null', path);
      return;
    }
    this.hidden.push(path);
  }

  /** Makes `path` visible (read-only or writable) even when it lies in a hidden region. */
  bind(path: string, writable: boolean): void {
    this.bindArgs.push(writable ? '--bind' : '--ro-bind', path, path);
  }

  /** True when `path` is inside a hidden region. */
  hides(path: string): boolean {
    return this.hidden.some((h) => isWithin(path, h));
  }

  args(): string[] {
    const out: string[] = [];
    const roots = [...this.hidden].sort((a, b) => a.length - b.length);
    for (const root of roots) {
      this.mkdirs(out, root, roots);
      const size = root === '/tmp' ? this.tmpBytes : PLACEHOLDER_BYTES;
      out.push(
        '--perms',
        root === '/tmp' ? '1777' : '0755',
        ...(size ? ['--size', String(size)] : []),
        '--tmpfs',
        root,
      );
    }
    out.push(...this.hideArgs);
    for (let i = 0; i < this.bindArgs.length; i += 3) {
      this.mkdirs(out, this.bindArgs[i + 1]!, roots);
      out.push(this.bindArgs[i]!, this.bindArgs[i + 1]!, this.bindArgs[i + 2]!);
    }
    return out;
  }

  /** Creates, with 0755, the directories between the deepest hidden root above `target` and `target`'s parent. */
  private mkdirs(out: string[], target: string, roots: string[]): void {
    const root = roots.filter((r) => r !== target && isWithin(target, r)).sort((a, b) => b.length - a.length)[0];
    if (!root) return;
    const chain: string[] = [];
    for (let d = dirname(target); d !== root && isWithin(d, root); d = dirname(d)) chain.unshift(d);
    for (const d of chain) {
      if (this.made.has(d)) continue;
      this.made.add(d);
      out.push('--perms', '0755', '--dir', d);
    }
  }
}

/**
 * The shallowest ancestor of `path` (or `path` itself) that others cannot traverse, i.e. lacks o+x — what an
 * unprivileged kernel uid would be stopped by. Undefined when the whole chain is open.
 */
export function closedAncestor(path: string): string | undefined {
  const chain: string[] = [];
  for (let d = path; ; d = dirname(d)) {
    chain.unshift(d);
    if (dirname(d) === d) break;
  }
  for (const d of chain) {
    try {
      const st = statSync(d);
      if (st.isDirectory() && (st.mode & 0o001) === 0) return d;
    } catch {
      return undefined;
    }
  }
  return undefined;
}
