/** The reference's activity event types and the event schema (validated on ingest). */
export {
  ACTIVITY_EVENT_TYPES,
  ActivityEventType,
  activityEventSchema,
  type ActivityDisplay,
  type ActivityEvent,
  type ActivityEventInput,
} from './activity.types';
/** `activity:` config of every app (ACTIVITY_UI_URL, ACTIVITY_UI_AUDIENCE, ACTIVITY_UI_SECRET). */
export { activityPublisherConfigSchema, type ActivityPublisherConfig } from './publisher/publisher.config';
/** Fire-and-forget publisher (bounded queue, batches, drop-oldest with a counter) and its global module. */
export { ActivityPublisher, type ActivityPublisherStats } from './publisher/activity-publisher';
export { ActivityModule } from './publisher/activity.module';
/** Text clipping used for event fields. */
export { clipText } from './publisher/event-limits';
/** The activity app's store (retention, figures once) and live hub (in-process or Redis). */
export { ActivityFeedModule } from './feed/feed.module';
export { EventStore, type StoredFigure } from './feed/event-store';
export { EventHub } from './feed/event-hub';
/** One bounded Server-Sent Events response (a client that stops reading is dropped, not buffered). */
export { SseClient, type SseLimits } from './feed/sse-client';
export { ACTIVITY_MIGRATIONS } from './feed/feed.migrations';
export { isEventId } from './feed/event-id';
export { canRead, type FeedDisplay, type FeedEvent, type FeedReader, type FeedSettings } from './feed/feed.types';
/** `metrics:` and `tracing:` config of every app, with their env names. */
export {
  metricsConfigSchema,
  tracingConfigSchema,
  type MetricsConfig,
  type TracingConfig,
} from './telemetry/telemetry.config';
/** An app's Prometheus metrics (default registry plus Stoa's) and the module serving `GET /metrics`. */
export { StoaMetrics, type Outcome } from './telemetry/stoa-metrics';
export { TelemetryModule } from './telemetry/telemetry.module';
/** OpenTelemetry traces: the SDK started when configured, spans, and W3C trace context in and out. */
export {
  callerContext,
  failSpan,
  inSpan,
  isTracing,
  SpanKind,
  startTracing,
  traceCarrier,
  withHeaderContext,
} from './telemetry/tracing';
