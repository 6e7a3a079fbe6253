/**
 * Whether a kernel directory's uid is known to run nothing any more, so its lease can go back without a look at
 * every process of the host (UidLeases.release). Every process that runs as a kernel's uid is started inside the
 * kernel's cgroup, and a process cannot leave a cgroup it cannot write to: once every cgroup of the kernels
 * launched in the directory has been removed (the OS removes only empty ones), nothing runs as that uid.
 * Unknown (no cgroups on this host, a removal that did not finish, no launch recorded) means the scan runs.
 */
export class UidVacancy {
  private readonly dirs = new Map<string, { open: number; removals: Promise<boolean>[] }>();

  /** A kernel is being launched in `base` inside a cgroup. */
  launching(base: string): void {
    const d = this.dirs.get(base) ?? { open: 0, removals: [] };
    d.open++;
    this.dirs.set(base, d);
  }

  /** The cgroup of a kernel launched in `base` is being removed: `removal` says whether it was. */
  removing(base: string, removal: Promise<boolean>): void {
    const settled = removal.catch(() => false);
    const d = this.dirs.get(base);
    if (!d) return;
    d.open--;
    d.removals.push(settled);
  }

  /** True when every cgroup of `base` is gone; forgets `base`. */
  async vacated(base: string): Promise<boolean> {
    const d = this.dirs.get(base);
    this.dirs.delete(base);
    if (!d || d.open !== 0) return false;
    return (await Promise.all(d.removals)).every(Boolean);
  }
}
