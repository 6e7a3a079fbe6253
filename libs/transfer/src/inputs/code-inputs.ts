import type { KernelDirs, KernelProcess, RewriteTarget } from '@stoa/kernel';
import { isAppError } from '@stoa/core';
import type { AssetResolver } from './asset-resolver';
import { HANDLE_RE, type HandleStore } from './handle-store';

const MAYBE = /<(local|blob)>|h_[0-9a-f]{12}/;

/**
 * The "resolve assets/handles" step of the execute pipeline: asset tags and handle ids that appear as string
 * literals (found by the kernel's own `ast`) become `pathlib.Path` variables and injected objects.
 */
export class CodeInputs {
  constructor(
    private readonly assets: AssetResolver,
    private readonly handles: HandleStore,
    private readonly ttlHours: number,
  ) {}

  /** The rewrite map for `code`, or the error the run reports instead of running. */
  async prepare(
    owner: string,
    kernel: KernelProcess,
    dirs: KernelDirs,
    code: string,
  ): Promise<{ rewrite?: Record<string, RewriteTarget>; error?: string }> {
    if (!MAYBE.test(code)) return {};
    const literals = await kernel.literals(code, 10_000);
    if (!literals.length) return {};
    const rewrite: Record<string, RewriteTarget> = {};
    for (const lit of literals) {
      if (HANDLE_RE.test(lit)) {
        const meta = await this.handles.lookup(owner, lit);
        if (!meta) {
          return {
            error: `Unknown handle '${lit}': no stashed object with this id exists for you (handles belong to the user who stashed them and expire after ${this.ttlHours} h). Run stash(obj) again and use the new handle.`,
          };
        }
        rewrite[lit] = {
          kind: 'object',
          path: await this.handles.provide(meta, lit, dirs),
          serializer: asSerializer(meta.serializer),
        };
        continue;
      }
      // Only our two tag types are assets; other markup in strings (say '<b>x</b>') is left alone.
      if (!/^\s*<(local|blob)>/.test(lit)) continue;
      try {
        rewrite[lit] = { kind: 'path', path: await this.assets.resolve(lit, dirs) };
      } catch (err) {
        if (!isAppError(err)) throw err;
        return { error: `Failed to resolve asset '${lit}': ${err.message}` };
      }
    }
    return Object.keys(rewrite).length ? { rewrite } : {};
  }

  /** Stores what the run stashed. */
  async collect(owner: string, dirs: KernelDirs, stashed: readonly string[] | undefined): Promise<void> {
    if (stashed?.length) await this.handles.ingest(owner, dirs, stashed);
  }
}

/** The serializer recorded with a payload (anything unexpected is treated as plain pickle). */
export function asSerializer(s: string | undefined): 'pickle' | 'cloudpickle' | 'dill' {
  return s === 'dill' || s === 'cloudpickle' ? s : 'pickle';
}
