import { Logger } from '@nestjs/common';
import type { KernelProcess } from './kernel-process';
import type { KernelDirs } from './sandbox';

const REFILL_DELAY_MS = 50;

/** A started, sandboxed, bootstrapped kernel with its directories, not yet given to a session. */
export interface KernelLease {
  kernel: KernelProcess;
  dirs: KernelDirs;
}

/** Pool state for /health/ready. */
export interface PoolStatus {
  size: number;
  ready: number;
  starting: number;
  started_total: number;
  failures_in_a_row: number;
  last_error: string | null;
  healthy: boolean;
}

/**
 * Keeps `size` kernels started ahead of demand. `take()` is synchronous (a new session pays no interpreter
 * start); each take triggers a background refill, one kernel at a time so refills never starve live work.
 * Failures back off (1 s doubling to 30 s) and show in the status; a pooled kernel that dies is replaced.
 */
export class WarmPool {
  private readonly logger = new Logger(WarmPool.name);
  private readonly ready: KernelLease[] = [];
  private readonly onExit = new Map<KernelLease, () => void>();
  private starting = 0;
  private startedTotal = 0;
  private failures = 0;
  private lastError: string | null = null;
  private stopped = false;
  private retry?: NodeJS.Timeout;
  private refill?: NodeJS.Timeout;

  constructor(
    readonly size: number,
    private readonly start: () => Promise<KernelLease>,
    private readonly discard: (lease: KernelLease) => Promise<void>,
  ) {}

  /** Begins filling the pool (returns at once). */
  fill(): void {
    if (this.stopped || this.starting > 0 || this.ready.length >= this.size || this.retry) return;
    this.starting++;
    this.start().then(
      (lease) => {
        this.starting--;
        this.failures = 0;
        this.startedTotal++;
        if (this.stopped) return void this.discard(lease);
        this.ready.push(lease);
        const evict = () => this.evict(lease);
        this.onExit.set(lease, evict);
        lease.kernel.once('exit', evict);
        this.fill();
      },
      (err: Error) => {
        this.starting--;
        this.failures++;
        this.lastError = err.message;
        const delay = Math.min(30_000, 1000 * 2 ** Math.min(this.failures - 1, 5));
        this.logger.warn({ err: err.message, retryInMs: delay }, 'warm kernel failed to start');
        this.retry = setTimeout(() => {
          this.retry = undefined;
          this.fill();
        }, delay);
        this.retry.unref();
      },
    );
  }

  /** A ready kernel, or undefined when the pool is empty (the caller starts one itself). */
  take(): KernelLease | undefined {
    while (this.ready.length) {
      const lease = this.ready.shift()!;
      const evict = this.onExit.get(lease);
      this.onExit.delete(lease);
      if (evict) lease.kernel.off('exit', evict);
      if (lease.kernel.alive) {
        this.refillSoon();
        return lease;
      }
    }
    this.refillSoon();
    return undefined;
  }

  /**
   * Refills after the taker's request has had the CPU: spawning bwrap blocks the event loop for a few ms and
   * interpreter start-up competes for the same cores, which would otherwise land on the very session that
   * took the kernel.
   */
  private refillSoon(): void {
    if (this.refill) return;
    this.refill = setTimeout(() => {
      this.refill = undefined;
      this.fill();
    }, REFILL_DELAY_MS);
    this.refill.unref();
  }

  status(): PoolStatus {
    return {
      size: this.size,
      ready: this.ready.length,
      starting: this.starting,
      started_total: this.startedTotal,
      failures_in_a_row: this.failures,
      last_error: this.lastError,
      healthy: this.size === 0 || this.ready.length > 0 || this.failures < 3,
    };
  }

  /** Stops refilling and closes the kernels waiting in the pool. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    clearTimeout(this.refill);
    const leases = this.ready.splice(0);
    await Promise.all(leases.map((l) => this.discard(l)));
  }

  private evict(lease: KernelLease): void {
    const i = this.ready.indexOf(lease);
    if (i < 0) return;
    this.ready.splice(i, 1);
    this.onExit.delete(lease);
    void this.discard(lease);
    this.fill();
  }
}
