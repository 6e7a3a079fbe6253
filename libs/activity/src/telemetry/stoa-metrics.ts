import { Logger } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** How a tool call, upstream hop or kernel start ended (the `outcome` label). */
export type Outcome = 'ok' | 'error';

/** Seconds buckets for calls that take from a millisecond (a no-op tool) to minutes (a long execution). */
const CALL_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
const START_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The Prometheus metrics of one app: Node's default metrics plus Stoa's, on the app's own registry (labelled with
 * `app` and `server`). Libs record through the metric fields; gauges read their state at scrape time from the
 * collectors apps add. Every metric is defined in every app, so one dashboard fits all of them.
 */
export class StoaMetrics {
  readonly registry = new Registry();
  private readonly logger = new Logger(StoaMetrics.name);
  private readonly collectors: (() => void | Promise<void>)[] = [];

  readonly toolCalls = this.counter(
    'stoa_tool_calls_total',
    'MCP tool calls answered, by tool and outcome (error = the result was flagged isError or the call failed).',
    ['tool', 'outcome'],
  );
  readonly toolCallDuration = this.histogram(
    'stoa_tool_call_duration_seconds',
    'Time from an MCP tools/call arriving to its result, by tool and outcome.',
    CALL_BUCKETS,
    ['tool', 'outcome'],
  );
  readonly kernels = this.gauge(
    'stoa_kernels',
    'Kernel processes by state: live (all alive), starting (for the warm pool), in_use (serving sessions and batch items).',
    ['state'],
  );
  readonly warmPoolReady = this.gauge('stoa_warm_pool_ready', 'Kernels waiting in the warm pool.');
  readonly warmPoolTarget = this.gauge(
    'stoa_warm_pool_target',
    'Kernels the warm pool keeps ready now: sessions.warm_pool, raised after bursts up to sessions.warm_pool_max.',
  );
  readonly kernelStartDuration = this.histogram(
    'stoa_kernel_start_duration_seconds',
    'Time to start a kernel until it is bootstrapped (sandbox, interpreter, tool proxies), by outcome.',
    START_BUCKETS,
    ['outcome'],
  );
  readonly jobs = this.gauge('stoa_jobs', 'Jobs held (within retention) by kind (background, batch_item) and state.', [
    'kind',
    'state',
  ]);
  readonly batches = this.gauge(
    'stoa_batches',
    'Parallel batches held (within retention) by state (active, cancelled).',
    ['state'],
  );
  readonly upstreamHealthy = this.gauge(
    'stoa_upstream_healthy',
    'Whether an upstream of a connector is connected and healthy (1) or not (0).',
    ['upstream'],
  );
  readonly upstreamHopDuration = this.histogram(
    'stoa_upstream_hop_duration_seconds',
    'Time of a connector request to an upstream until its answer was relayed, by upstream and outcome.',
    CALL_BUCKETS,
    ['upstream', 'outcome'],
  );
  readonly rateLimitRejections = this.counter(
    'stoa_rate_limit_rejections_total',
    'Tool calls refused by a gateway rate limit, by limit (all = max_calls_per_minute, else the tool_limits pattern).',
    ['limit'],
  );
  readonly activityDropped = this.counter(
    'stoa_activity_events_dropped_total',
    'Activity events lost by the publisher (queue overflow, failed or timed-out POSTs to the activity app).',
  );
  readonly activityQueued = this.gauge('stoa_activity_events_queued', 'Activity events waiting to be sent.');
  readonly activityIngested = this.counter(
    'stoa_activity_events_ingested_total',
    'Activity events the activity app accepted and stored, by type (a refused batch counts nothing).',
    ['type'],
  );

  constructor(labels: { app: string; server: string }) {
    this.registry.setDefaultLabels(labels);
    collectDefaultMetrics({ register: this.registry });
  }

  /** Runs `collect` before each scrape (gauges that read live state: kernels, jobs, upstreams). */
  addCollector(collect: () => void | Promise<void>): void {
    this.collectors.push(collect);
  }

  /** Records one answered tool call. */
  observeToolCall(tool: string, outcome: Outcome, seconds: number): void {
    this.toolCalls.inc({ tool, outcome });
    this.toolCallDuration.observe({ tool, outcome }, seconds);
  }

  /** Records one request to an upstream. */
  observeUpstreamHop(upstream: string, outcome: Outcome, seconds: number): void {
    this.upstreamHopDuration.observe({ upstream, outcome }, seconds);
  }

  /** The text exposition of every metric, gauges freshly collected. */
  async render(): Promise<{ contentType: string; body: string }> {
    const results = await Promise.allSettled(this.collectors.map(async (c) => c()));
    for (const r of results)
      // A source that cannot answer (database down) leaves its gauges as last seen; the rest still scrape.
      if (r.status === 'rejected') this.logger.warn({ err: (r.reason as Error).message }, 'metrics source failed');
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  private counter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
    return new Counter<L>({ name, help, labelNames, registers: [this.registry] });
  }

  private gauge<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Gauge<L> {
    return new Gauge<L>({ name, help, labelNames, registers: [this.registry] });
  }

  private histogram<L extends string = never>(
    name: string,
    help: string,
    buckets: number[],
    labelNames: readonly L[] = [],
  ): Histogram<L> {
    return new Histogram<L>({ name, help, buckets, labelNames, registers: [this.registry] });
  }
}
