import {
  type Attributes,
  context,
  type Context,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { TracingConfig } from './telemetry.config';

export { SpanKind };

/**
 * Registers the OpenTelemetry SDK for this process when `tracing.endpoint` is set: spans batched to
 * `{endpoint}/v1/traces` (OTLP/HTTP, JSON), W3C trace context, AsyncLocalStorage context. Without an endpoint
 * nothing is registered and every span below is the API's no-op (no cost beyond a function call).
 */
export function startTracing(config: TracingConfig, service: string): NodeTracerProvider | undefined {
  if (!config.endpoint) return undefined;
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.service_name ?? service }),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: `${config.endpoint}/v1/traces` }), {
        scheduledDelayMillis: 500,
      }),
    ],
  });
  provider.register();
  return provider;
}

/** Carriers of W3C trace context: HTTP headers, or an MCP request's `_meta` (2026-07-28). */
type Carrier = Record<string, unknown>;
const getter = {
  keys: (c: Carrier) => Object.keys(c),
  get: (c: Carrier, key: string) => {
    const v = c[key];
    return typeof v === 'string' ? v : Array.isArray(v) && typeof v[0] === 'string' ? v[0] : undefined;
  },
};

/**
 * The caller's trace context: `_meta.traceparent` of an MCP request when present (it names the MCP call itself),
 * else the HTTP `traceparent` header, else the active context.
 */
export function callerContext(meta?: Carrier, headers?: Carrier): Context {
  const base = context.active();
  if (meta && typeof meta.traceparent === 'string') return propagation.extract(base, meta, getter);
  return headers ? propagation.extract(base, headers, getter) : base;
}

/** `traceparent` (and `tracestate`) of the active span, for an outgoing request's headers or `_meta`; {} untraced. */
export function traceCarrier(): Record<string, string> {
  const out: Record<string, string> = {};
  propagation.inject(context.active(), out);
  return out;
}

/** Whether spans are being recorded now (tracing on, and the active span sampled). */
export function isTracing(): boolean {
  return trace.getActiveSpan()?.isRecording() ?? false;
}

/**
 * Runs `fn` in a new span (child of `parent`, default the active context): the span is active inside `fn`, ends
 * when `fn` settles and records a throw as an error. `fn` may mark a failed result itself (`failSpan`).
 */
export function inSpan<T>(
  name: string,
  opts: { kind?: SpanKind; attributes?: Attributes; parent?: Context },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const tracer = trace.getTracer('stoa');
  return tracer.startActiveSpan(
    name,
    { kind: opts.kind ?? SpanKind.INTERNAL, attributes: opts.attributes },
    opts.parent ?? context.active(),
    async (span) => {
      try {
        return await fn(span);
      } catch (err) {
        span.recordException(err as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
        throw err;
      } finally {
        span.end();
      }
    },
  );
}

/** Marks a span failed without an exception (a tool result flagged isError: `error.type` = `tool_error`). */
export function failSpan(span: Span, errorType: string, message?: string): void {
  span.setAttribute('error.type', errorType);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

/** Runs `fn` with the trace context of an incoming request's HTTP headers (`traceparent`) as the active one. */
export function withHeaderContext<T>(headers: Carrier, fn: () => T): T {
  return context.with(callerContext(undefined, headers), fn);
}
