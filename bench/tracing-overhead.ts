/**
 * tracing-overhead: execute round trip (`x+1` on a warm session over MCP, 2026-07-28) with OpenTelemetry tracing
 * off and on (spans exported to an in-bench OTLP/HTTP receiver), straight to an executor and through a router in
 * front of one (the router's fast path: a client span per hop, `traceparent` in the header and in `_meta`).
 * Four subjects interleaved call by call in one run; each "on" is compared with its own "off".
 */
import { startExecutor } from '../test/support/executor-process';
import { startOtlpCollector } from '../test/support/otlp-collector';
import { startRouter } from '../test/support/router-process';
import { emit, emitFigures, quietNestLogger, rounds, runBench, summarize } from './lib/bench';
import { executeSubject, interleavedExecute, type ExecuteSubject } from './lib/execute-rounds';

const BENCH = 'tracing-overhead';
const WARMUP = rounds(50, 1);
const SAMPLES = rounds(300, 3);

async function main(): Promise<void> {
  quietNestLogger();
  const collector = await startOtlpCollector();
  const auth = { mode: 'passthrough', audience: 'dev' };
  const stops: (() => Promise<unknown>)[] = [collector.close];
  try {
    const subjects: Record<string, ExecuteSubject> = {};
    for (const [tracing, env] of [
      ['off', {}],
      ['on', { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url }],
    ] as const) {
      const executor = await startExecutor({ env });
      stops.unshift(executor.stop);
      const router = await startRouter({ upstreams: [{ name: 'demo', url: executor.mcpUrl, auth }] }, env);
      stops.unshift(router.stop);
      for (const [via, url] of [
        ['direct', executor.mcpUrl],
        ['routed', router.mcpUrl],
      ] as const) {
        const subject = await executeSubject(url);
        stops.unshift(subject.client.close);
        subjects[`${via}_tracing_${tracing}`] = subject;
      }
    }
    const samples = await interleavedExecute(subjects, WARMUP, SAMPLES);
    for (const via of ['direct', 'routed']) {
      const off = summarize(samples[`${via}_tracing_off`]!);
      emitFigures(BENCH, `${via}_tracing_off`, off);
      emitFigures(BENCH, `${via}_tracing_on`, summarize(samples[`${via}_tracing_on`]!), {
        name: `${via}_tracing_off`,
        summary: off,
      });
    }
    // The "on" subjects really traced: spans of both apps reach the receiver (exported in batches, so wait for them).
    await collector.waitFor('a router span and an executor span (was tracing on?)', (spans) =>
      ['stoa-router', 'stoa-executor'].every((service) => spans.some((s) => s.service === service)),
    );
    emit({ bench: BENCH, subject: 'spans_exported', metric: 'count', value: collector.spans.length });
  } finally {
    for (const stop of stops) await stop();
  }
}

runBench(BENCH, main);
