import { EventEmitter } from 'node:events';
import { ExponentialBackoff, halfJitterGenerator, type IBackoff } from 'cockatiel';

/** Lifecycle of one supervised connection. */
export const ConnectionState = {
  connecting: 'connecting',
  connected: 'connected',
  unavailable: 'unavailable',
} as const;
export type ConnectionState = (typeof ConnectionState)[keyof typeof ConnectionState];

/** Ceiling of the reconnect backoff. */
export const RECONNECT_MAX_MS = 30_000;

/** What a supervisor drives. `connect` and `check` reject when the server cannot be reached. */
export interface ConnectionDriver {
  /** One connection attempt; a failed attempt cleans up after itself. `signal` aborts at `close()`. */
  connect(signal: AbortSignal): Promise<void>;
  /** One liveness check of the established connection. */
  check(signal: AbortSignal): Promise<void>;
  /** Releases an established connection that was lost, or still open at `close()`. */
  disconnect?(): Promise<void>;
}

/** Timing of a supervised connection. */
export interface SupervisorOptions {
  /** Period of `check()` while connected. */
  healthIntervalMs: number;
  /** First retry delay; it doubles per failed attempt up to 30 s, each delay drawn from [½, 1] of that (jitter). */
  reconnectBaseMs: number;
  /** Timers do not keep the process alive (servers close their pools on shutdown). Default false. */
  unrefTimers?: boolean;
}

/** `changed` fires after each state transition, with the state already updated. */
export type SupervisorEvents = { changed: [state: ConnectionState, previous: ConnectionState] };

/**
 * The one connection state machine of Stoa (the connectors' upstream pool and the client's sessions):
 * connect, check every `healthIntervalMs` while connected, and after a failure stay `unavailable` while
 * retrying in the background with exponential backoff and jitter (cockatiel), so many clients of one
 * restarting server do not retry in lockstep. One timer at a time: the health tick or the next retry.
 * Checks are single-flight per connection; a check or loss report of a replaced connection is ignored.
 */
export class ConnectionSupervisor extends EventEmitter<SupervisorEvents> {
  private current: ConnectionState = ConnectionState.connecting;
  private error: unknown;
  private since: Date | undefined;
  private retryAt: Date | undefined;
  private readonly backoffs: ExponentialBackoff<number>;
  private backoff: IBackoff<unknown> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private attempting: Promise<void> | undefined;
  private checking: { epoch: number; result: Promise<boolean> } | undefined;
  /** Counts established connections, so results about an earlier one are recognised. */
  private epoch = 0;
  private readonly aborter = new AbortController();

  constructor(
    private readonly driver: ConnectionDriver,
    private readonly options: SupervisorOptions,
  ) {
    super();
    this.backoffs = new ExponentialBackoff({
      initialDelay: options.reconnectBaseMs,
      maxDelay: RECONNECT_MAX_MS,
      generator: halfJitterGenerator,
    });
  }

  get state(): ConnectionState {
    return this.current;
  }

  /** The most recent failure (connect, check or loss); kept after recovery for diagnosis. */
  get lastError(): unknown {
    return this.error;
  }

  /** When the current connection was established; undefined unless connected. */
  get connectedAt(): Date | undefined {
    return this.since;
  }

  /** When the next attempt is due; undefined unless unavailable. */
  get nextRetryAt(): Date | undefined {
    return this.retryAt;
  }

  get closed(): boolean {
    return this.aborter.signal.aborted;
  }

  /** Runs the first attempt; resolves once it settled (a failure schedules retries, it never rejects). */
  start(): Promise<void> {
    return this.attempt();
  }

  /** Attempts now with a fresh backoff (an operator's "reconnect"); resolves once that attempt settled. */
  async reconnect(): Promise<void> {
    await this.attempting;
    if (this.closed) return;
    clearTimeout(this.timer);
    this.backoff = undefined;
    this.retryAt = undefined;
    if (this.current === ConnectionState.connected) await this.release();
    this.transition(ConnectionState.connecting);
    await this.attempt();
  }

  /** Checks the connection now (joining a check under way). False when not connected or the check failed. */
  check(): Promise<boolean> {
    if (this.current !== ConnectionState.connected || this.closed) return Promise.resolve(false);
    if (this.checking?.epoch !== this.epoch) {
      const flight = { epoch: this.epoch, result: this.runCheck(this.epoch) };
      this.checking = flight;
      void flight.result.finally(() => {
        if (this.checking === flight) this.checking = undefined;
      });
    }
    return this.checking.result;
  }

  /** The established connection is gone (its transport closed): unavailable now, retried with backoff. */
  lost(err: unknown): void {
    this.lose(this.epoch, err);
  }

  /** Stops timers, aborts what is under way and releases the connection. Idempotent; no restart. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.aborter.abort(new Error('the connection supervisor was closed'));
    clearTimeout(this.timer);
    this.timer = undefined;
    this.retryAt = undefined;
    await Promise.all([this.attempting, this.checking?.result]);
    if (this.current === ConnectionState.connected) await this.release();
  }

  private attempt(): Promise<void> {
    const run = this.connectOnce();
    this.attempting = run;
    void run.finally(() => {
      if (this.attempting === run) this.attempting = undefined;
    });
    return run;
  }

  private async connectOnce(): Promise<void> {
    this.timer = undefined;
    try {
      await this.driver.connect(this.aborter.signal);
    } catch (err) {
      if (!this.closed) this.failed(err);
      return;
    }
    if (this.closed) return this.release();
    this.epoch++;
    this.backoff = undefined;
    this.retryAt = undefined;
    this.since = new Date();
    // Scheduled before the transition: a `changed` listener may close the supervisor.
    this.schedule(() => void this.healthTick(), this.options.healthIntervalMs);
    this.transition(ConnectionState.connected);
  }

  private async runCheck(epoch: number): Promise<boolean> {
    try {
      await this.driver.check(this.aborter.signal);
      return true;
    } catch (err) {
      if (!this.closed) this.lose(epoch, err);
      return false;
    }
  }

  private async healthTick(): Promise<void> {
    const epoch = this.epoch;
    // Reschedule only for the connection checked: a reconnect in between has scheduled its own tick.
    if ((await this.check()) && epoch === this.epoch && this.current === ConnectionState.connected && !this.closed) {
      this.schedule(() => void this.healthTick(), this.options.healthIntervalMs);
    }
  }

  private lose(epoch: number, err: unknown): void {
    if (epoch !== this.epoch || this.current !== ConnectionState.connected || this.closed) return;
    void this.release();
    this.failed(err);
  }

  private failed(err: unknown): void {
    this.error = err;
    this.since = undefined;
    this.backoff = this.backoff ? this.backoff.next(undefined) : this.backoffs.next();
    const delay = this.backoff.duration;
    this.retryAt = new Date(Date.now() + delay);
    this.schedule(() => void this.attempt(), delay);
    this.transition(ConnectionState.unavailable);
  }

  /** A server that is already gone cannot fail our goodbye. */
  private async release(): Promise<void> {
    await this.driver.disconnect?.().catch(() => undefined);
  }

  private schedule(run: () => void, ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(run, ms);
    if (this.options.unrefTimers) this.timer.unref();
  }

  private transition(state: ConnectionState): void {
    const previous = this.current;
    if (previous === state) return;
    this.current = state;
    this.emit('changed', state, previous);
  }
}
