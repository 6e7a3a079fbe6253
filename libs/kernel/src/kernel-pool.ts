import { Logger } from '@nestjs/common';
import { availableParallelism } from 'node:os';
import type { KernelProcess } from './kernel-process';
import type { KernelDirs } from './sandbox';

const REFILL_DELAY_MS = 50;
/** Demand is the most kernels taken within any BURST_MS seen in the last MEMORY_MS. */
const BURST_MS = 5_000;
const MEMORY_MS = 10 * 60_000;
/** How often the pool shrinks back toward its minimum once a burst is forgotten. */
const TRIM_EVERY_MS = 30_000;

/** A started, sandboxed, bootstrapped kernel with its directories, not yet given to a session. */
export interface KernelLease {
  kernel: KernelProcess;
  dirs: KernelDirs;
}

/** Pool state for /health/ready. */
export interface PoolStatus {
  /** The configured minimum (sessions.warm_pool). */
  size: number;
  /** The configured maximum (sessions.warm_pool_max). */
  max: number;
  /** What the pool keeps ready now: the minimum, raised to the busiest burst of the last 10 minutes. */
  target: number;
  ready: number;
  starting: number;
  started_total: number;
  failures_in_a_row: number;
  last_error: string | null;
  healthy: boolean;
}

/**
 * Keeps kernels started ahead of demand: at least `size`, and as many as were taken in the busiest 5 s of the last
 * 10 minutes (up to `max`), so a burst that came once finds the pool deep enough when it comes again; once it is
 * forgotten the surplus is closed. `take()` is synchronous (a new session pays no interpreter start); each take
 * triggers a background refill — one start at a time at the minimum, up to `concurrency` while below a raised
 * target. Failures back off (1 s doubling to 30 s) and show in the status; a pooled kernel that dies is replaced.
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
  private readonly trim: NodeJS.Timeout;
  /** When kernels were taken (the last BURST_MS), and the busiest burst per BURST_MS bucket (the last MEMORY_MS). */
  private readonly takes: number[] = [];
  private readonly peaks = new Map<number, number>();
  readonly max: number;

  constructor(
    readonly size: number,
    private readonly start: () => Promise<KernelLease>,
    private readonly discard: (lease: KernelLease) => Promise<void>,
    max = size,
    private readonly concurrency = Math.min(2, availableParallelism()),
  ) {
    this.max = size === 0 ? 0 : Math.max(size, max); // warm_pool 0 switches the pool off, bursts included
    this.trim = setInterval(() => this.fill(), TRIM_EVERY_MS);
    this.trim.unref();
  }

  /** How many kernels the pool keeps ready now. */
  target(now = Date.now()): number {
    let peak = 0;
    for (const [bucket, n] of this.peaks) {
      if (bucket < Math.floor((now - MEMORY_MS) / BURST_MS)) this.peaks.delete(bucket);
      else peak = Math.max(peak, n);
    }
    return Math.min(this.max, Math.max(this.size, peak));
  }

  /** Begins filling the pool to its target, or closes what a forgotten burst left above it (returns at once). */
  fill(): void {
    if (this.stopped || this.retry) return;
    const target = this.target();
    while (this.ready.length > target) this.evict(this.ready[this.ready.length - 1]!, false);
    const limit = target > this.size ? this.concurrency : 1;
    while (this.starting < limit && this.ready.length + this.starting < target) this.startOne();
  }

  private startOne(): void {
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
        if (this.retry) return; // a parallel start already scheduled the retry
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
    this.noteTake(Date.now());
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
   * took the kernel. While more than the minimum is ready, every take postpones the refill again (a burst runs on
   * what the pool holds and the refill follows it).
   */
  private refillSoon(): void {
    // Above the minimum, wait for a pause in the takes: starting kernels mid-burst slows the burst itself.
    if (this.refill && this.ready.length > this.size) clearTimeout(this.refill);
    else if (this.refill) return;
    this.refill = setTimeout(() => {
      this.refill = undefined;
      this.fill();
    }, REFILL_DELAY_MS);
    this.refill.unref();
  }

  private noteTake(now: number): void {
    this.takes.push(now);
    while (this.takes[0]! <= now - BURST_MS) this.takes.shift();
    const bucket = Math.floor(now / BURST_MS);
    this.peaks.set(bucket, Math.max(this.peaks.get(bucket) ?? 0, this.takes.length));
  }

  status(): PoolStatus {
    return {
      size: this.size,
      max: this.max,
      target: this.target(),
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
    clearInterval(this.trim);
    clearTimeout(this.retry);
    clearTimeout(this.refill);
    const leases = this.ready.splice(0);
    await Promise.all(leases.map((l) => this.discard(l)));
  }

  private evict(lease: KernelLease, refill = true): void {
    const i = this.ready.indexOf(lease);
    if (i < 0) return;
    this.ready.splice(i, 1);
    const onExit = this.onExit.get(lease);
    if (onExit) lease.kernel.off('exit', onExit);
    this.onExit.delete(lease);
    void this.discard(lease);
    if (refill) this.fill();
  }
}
