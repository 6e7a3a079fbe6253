import { type DynamicModule, Logger, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ActivityPublisher } from '../publisher/activity-publisher';
import { AdminMetricsController, LoopbackMetricsController } from './metrics.controller';
import { StoaMetrics } from './stoa-metrics';
import type { MetricsConfig, TracingConfig } from './telemetry.config';
import { startTracing } from './tracing';

const TRACER_PROVIDER = Symbol('TRACER_PROVIDER');

/** Flushes the spans still batched when the app stops. */
class TracingShutdown implements OnApplicationShutdown {
  constructor(private readonly provider: NodeTracerProvider | undefined) {}

  async onApplicationShutdown(): Promise<void> {
    await this.provider?.shutdown();
  }
}

/**
 * An app's metrics and traces: a global `StoaMetrics` and, unless `metrics.enabled` is false, `GET /metrics`
 * (the activity publisher's losses included when the app has one); OpenTelemetry export when
 * `tracing.endpoint` is set.
 */
@Module({})
export class TelemetryModule {
  static forRoot(
    config: { metrics: MetricsConfig; tracing: TracingConfig },
    labels: { app: string; server: string },
  ): DynamicModule {
    const { metrics } = config;
    return {
      module: TelemetryModule,
      global: true,
      controllers: metrics.enabled
        ? [metrics.access === 'loopback' ? LoopbackMetricsController : AdminMetricsController]
        : [],
      providers: [
        {
          provide: StoaMetrics,
          inject: [{ token: ActivityPublisher, optional: true }],
          useFactory: (publisher?: ActivityPublisher) => withPublisherStats(new StoaMetrics(labels), publisher),
        },
        {
          provide: TRACER_PROVIDER,
          useFactory: () => {
            const provider = startTracing(config.tracing, `stoa-${labels.app}`);
            if (provider) new Logger('Tracing').log({ endpoint: config.tracing.endpoint }, 'OpenTelemetry traces on');
            return new TracingShutdown(provider);
          },
        },
      ],
      exports: [StoaMetrics],
    };
  }
}

function withPublisherStats(metrics: StoaMetrics, publisher: ActivityPublisher | undefined): StoaMetrics {
  if (!publisher) return metrics;
  let counted = 0;
  metrics.addCollector(() => {
    const { dropped, queued } = publisher.stats();
    if (dropped > counted) metrics.activityDropped.inc(dropped - counted);
    counted = dropped;
    metrics.activityQueued.set(queued);
  });
  return metrics;
}
