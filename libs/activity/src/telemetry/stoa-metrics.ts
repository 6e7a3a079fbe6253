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

  readonly toolCalls = new Counter({
    name: 'stoa_tool_calls_total',
    help: 'MCP tool calls answered, by tool and outcome (error = the result was flagged isError or the call failed).',
    labelNames: ['tool', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly toolCallDuration = new Histogram({
    name: 'stoa_tool_call_duration_seconds',
    help: 'Time from an MCP tools/call arriving to its result, by tool and outcome.',
    labelNames: ['tool', 'outcome'] as const,
    buckets: CALL_BUCKETS,
    registers: [this.registry],
  });
  readonly kernels = new Gauge({
    name: 'stoa_kernels',
    help: 'Kernel processes by state: live (all alive), starting (for the warm pool), in_use (serving sessions and batch items).',
    labelNames: ['state'] as const,
    registers: [this.registry],
  });
  readonly warmPoolReady = new Gauge({
    name: 'stoa_warm_pool_ready',
    help: 'Kernels waiting in the warm pool.',
    registers: [this.registry],
  });
  readonly warmPoolTarget = new Gauge({
    name: 'stoa_warm_pool_target',
    help: 'Configured warm-pool size (sessions.warm_pool).',
    registers: [this.registry],
  });
  readonly kernelStartDuration = new Histogram({
    name: 'stoa_kernel_start_duration_seconds',
    help: 'Time to start a kernel until it is bootstrapped (sandbox, interpreter, tool proxies), by outcome.',
    labelNames: ['outcome'] as const,
    buckets: START_BUCKETS,
    registers: [this.registry],
  });
  readonly jobs = new Gauge({
    name: 'stoa_jobs',
    help: 'Jobs held (within retention) by kind (background, batch_item) and state.',
    labelNames: ['kind', 'state'] as const,
    registers: [this.registry],
  });
  readonly batches = new Gauge({
    name: 'stoa_batches',
    help: 'Parallel batches held (within retention) by state (active, cancelled).',
    labelNames: ['state'] as const,
    registers: [this.registry],
  });
  readonly upstreamHealthy = new Gauge({
    name: 'stoa_upstream_healthy',
    help: 'Whether an upstream of a connector is connected and healthy (1) or not (0).',
    labelNames: ['upstream'] as const,
    registers: [this.registry],
  });
  readonly upstreamHopDuration = new Histogram({
    name: 'stoa_upstream_hop_duration_seconds',
    help: 'Time of a connector request to an upstream until its answer was relayed, by upstream and outcome.',
    labelNames: ['upstream', 'outcome'] as const,
    buckets: CALL_BUCKETS,
    registers: [this.registry],
  });
  readonly rateLimitRejections = new Counter({
    name: 'stoa_rate_limit_rejections_total',
    help: 'Tool calls refused by a gateway rate limit, by limit (all = max_calls_per_minute, else the tool_limits pattern).',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });
  readonly activityDropped = new Counter({
    name: 'stoa_activity_events_dropped_total',
    help: 'Activity events lost by the publisher (queue overflow, failed or timed-out POSTs to the activity app).',
    registers: [this.registry],
  });
  readonly activityQueued = new Gauge({
    name: 'stoa_activity_events_queued',
    help: 'Activity events waiting to be sent.',
    registers: [this.registry],
  });

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
}
