import { z } from 'zod';
import { boolish } from '@stoa/config';
import { optionalBaseUrl } from '../publisher/publisher.config';

/** `metrics:` in every app's YAML — the Prometheus endpoint `/metrics`. */
export const metricsConfigSchema = z
  .strictObject({
    /** Serve `/metrics` (STOA_METRICS_ENABLED). */
    enabled: boolish.default(true).meta({ env: 'STOA_METRICS_ENABLED' }),
    /**
     * Who may scrape (STOA_METRICS_ACCESS): `admin` — like /admin/v1 (the admin app role; in no-op mode loopback
     * plus the admin token); `loopback` — any caller on this host, no credentials (a local Prometheus agent).
     */
    access: z.enum(['admin', 'loopback']).default('admin').meta({ env: 'STOA_METRICS_ACCESS' }),
  })
  .prefault({});
export type MetricsConfig = z.output<typeof metricsConfigSchema>;

/** `tracing:` in every app's YAML — OpenTelemetry traces over OTLP/HTTP. Off unless an endpoint is set. */
export const tracingConfigSchema = z
  .strictObject({
    /** OTLP/HTTP base URL, e.g. http://127.0.0.1:4318 (OTEL_EXPORTER_OTLP_ENDPOINT); traces go to `{endpoint}/v1/traces`. */
    endpoint: optionalBaseUrl('http://127.0.0.1:4318').meta({ env: 'OTEL_EXPORTER_OTLP_ENDPOINT' }),
    /** `service.name` of the spans (OTEL_SERVICE_NAME); default `stoa-{app}`. */
    service_name: z.string().min(1).optional().meta({ env: 'OTEL_SERVICE_NAME' }),
  })
  .prefault({});
export type TracingConfig = z.output<typeof tracingConfigSchema>;
