import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shutDown } from './support/app-process';
import { ADMIN } from './support/admin';
import { startExecutor, type RunningExecutor } from './support/executor-process';
import { type LegacyFacade, startLegacyFacade } from './support/legacy-facade';
import { type CollectedSpan, type OtlpCollector, startOtlpCollector } from './support/otlp-collector';
import { ROOT } from './support/paths';
import { startDispatcher, startGateway, startRouter, until, type RunningRouter } from './support/router-process';
import { devToken, rawToolCall, v1Client, v2Client, type TestClient } from './support/ts-clients';

const demo = join(ROOT, 'examples', 'servers', 'demo');
const EXECUTE = 'execute_demo_code';
const SERVER = 2;
const CLIENT = 3;
const passthrough = { mode: 'passthrough', audience: 'dev' };

describe('OpenTelemetry traces across a router and an executor (real processes, an in-test OTLP receiver)', () => {
  let collector: OtlpCollector;
  let executor: RunningExecutor;
  let router: RunningRouter;
  let modern: TestClient;
  let legacy: TestClient;
  let facade: LegacyFacade;
  let oldRouter: RunningRouter;
  let viaOld: TestClient;
  let gateway: RunningRouter;
  let dispatcher: RunningRouter;
  let jobs: RunningExecutor;
  const others: TestClient[] = [];

  beforeAll(async () => {
    collector = await startOtlpCollector();
    executor = await startExecutor({
      config: { tools: { manifest: join(demo, 'tools.yaml') }, skills: { dir: join(demo, 'skills') } },
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url },
    });
    router = await startRouter(
      { upstreams: [{ name: 'demo', url: executor.mcpUrl, auth: { mode: 'passthrough', audience: 'dev' } }] },
      { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url },
    );
    modern = await v2Client(router.mcpUrl, 'auto', devToken('alice'));
    legacy = await v1Client(router.mcpUrl, devToken('alice'));
    // The same executor seen as a 2025-era-only server: the router talks to it over MCP SDK client sessions.
    facade = await startLegacyFacade(executor.url);
    oldRouter = await startRouter(
      { upstreams: [{ name: 'demo', url: facade.mcpUrl, auth: { mode: 'passthrough', audience: 'dev' } }] },
      { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url },
    );
    viaOld = await v2Client(oldRouter.mcpUrl, 'auto', devToken('alice'));
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url };
    // An async_only executor: every call runs as a background job (its own job.run span).
    jobs = await startExecutor({ config: { name: 'jobs', execution: { mode: 'async_only' } }, env: otel });
    [gateway, dispatcher] = await Promise.all([
      startGateway({ upstream: { name: 'demo', url: executor.mcpUrl, auth: passthrough } }, otel),
      startDispatcher({ workers: [{ name: 'w1', url: executor.mcpUrl }], worker_auth: passthrough }, otel),
    ]);
  });
  afterAll(() =>
    shutDown(
      modern,
      legacy,
      viaOld,
      ...others,
      oldRouter,
      facade,
      router,
      gateway,
      dispatcher,
      executor,
      jobs,
      collector,
    ),
  );

  /** The executor's tool span of the call that printed `marker`, once both apps exported theirs. */
  async function traceOf(marker: string, client: TestClient, via = 'stoa-router'): Promise<CollectedSpan[]> {
    const known = new Set(collector.spans.map((s) => s.spanId)); // spans of earlier calls
    const r = await client.call(EXECUTE, { code: `print(${JSON.stringify(marker)})` });
    expect(r.json).toMatchObject({ success: true, stdout: `${marker}\n` });
    return until(`spans of the ${marker} call`, () => {
      const server = collector.spans.filter(
        (s) => s.service === 'stoa-executor' && s.kind === SERVER && s.name === `tools/call ${EXECUTE}`,
      );
      const mine = server.find((s) =>
        collector.spans.some((k) => k.name === 'kernel.execute' && k.parentSpanId === s.spanId && !known.has(k.spanId)),
      );
      if (!mine) return Promise.resolve(undefined);
      const trace = collector.spans.filter((s) => s.traceId === mine.traceId);
      return Promise.resolve(trace.some((s) => s.service === via && s.kind === SERVER) ? trace : undefined);
    });
  }

  function check(trace: CollectedSpan[], via = 'stoa-router', upstream = 'demo'): void {
    const routerCall = trace.find((s) => s.service === via && s.kind === SERVER);
    const hop = trace.find((s) => s.service === via && s.kind === CLIENT);
    const executorCall = trace.find((s) => s.service === 'stoa-executor' && s.kind === SERVER);
    const kernel = trace.find((s) => s.name === 'kernel.execute');
    expect(routerCall).toMatchObject({
      name: `tools/call ${EXECUTE}`,
      attributes: {
        'mcp.method.name': 'tools/call',
        'gen_ai.tool.name': EXECUTE,
        'gen_ai.operation.name': 'execute_tool',
      },
    });
    expect(hop).toMatchObject({ parentSpanId: routerCall?.spanId, attributes: { 'stoa.upstream': upstream } });
    // One agent call is one trace: the executor's span is the child of the router's hop to it.
    expect(executorCall).toMatchObject({
      parentSpanId: hop?.spanId,
      attributes: { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': EXECUTE },
    });
    expect(kernel).toMatchObject({ service: 'stoa-executor', parentSpanId: executorCall?.spanId });
  }

  it('links a 2026-07-28 call (the router fast path) router → executor → kernel in one trace', async () => {
    check(await traceOf('modern', modern));
  });

  it('links a 2025-era call (the router SDK path) the same way', async () => {
    const trace = await traceOf('legacy', legacy);
    check(trace);
    const routerCall = trace.find((s) => s.service === 'stoa-router' && s.kind === SERVER);
    expect(routerCall?.attributes['mcp.session.id']).toEqual(expect.any(String));
  });

  it('links a call the router sends over a 2025-11-25 upstream session (MCP SDK client) by its HTTP traceparent', async () => {
    const upstreams = (await (await fetch(`${oldRouter.url}/admin/v1/upstreams`, { headers: ADMIN })).json()) as {
      upstreams: { era: string; state: string }[];
    };
    expect(upstreams.upstreams[0]).toMatchObject({ era: 'legacy', state: 'healthy' });
    const trace = await traceOf('via-2025-session', viaOld);
    check(trace);
    // The executor saw the call on its own 2025-era MCP session: no _meta carried the context, the header did.
    const executorCall = trace.find((s) => s.service === 'stoa-executor' && s.kind === SERVER);
    expect(executorCall?.attributes['mcp.session.id']).toEqual(expect.any(String));
  });

  it("continues the agent's own trace from its traceparent header", async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parent = '00f067aa0ba902b7';
    const r = await rawToolCall(
      router.mcpUrl,
      EXECUTE,
      { code: 'print("agent")' },
      {
        headers: { traceparent: `00-${traceId}-${parent}-01` },
      },
    );
    expect(r.json).toMatchObject({ success: true });
    const trace = await until('the agent trace', () => {
      const spans = collector.spans.filter((s) => s.traceId === traceId);
      const complete = spans.some((s) => s.name === 'kernel.execute') && spans.some((s) => s.service === 'stoa-router');
      return Promise.resolve(complete ? spans : undefined);
    });
    expect(trace.find((s) => s.service === 'stoa-router' && s.kind === SERVER)?.parentSpanId).toBe(parent);
    check(trace);
  });

  it('prefers the traceparent in _meta of a 2026-07-28 request over the HTTP header', async () => {
    const metaTrace = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
    const metaParent = 'aaaaaaaaaaaaaaaa';
    const r = await rawToolCall(
      executor.mcpUrl,
      EXECUTE,
      { code: 'print("meta")' },
      {
        headers: { traceparent: '00-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb-bbbbbbbbbbbbbbbb-01' },
        meta: { traceparent: `00-${metaTrace}-${metaParent}-01` },
      },
    );
    expect(r.json).toMatchObject({ success: true, stdout: 'meta\n' });
    const span = await until('the executor span of the _meta trace', () =>
      Promise.resolve(collector.spans.find((s) => s.traceId === metaTrace && s.kind === SERVER)),
    );
    expect(span).toMatchObject({
      service: 'stoa-executor',
      parentSpanId: metaParent,
      attributes: { 'jsonrpc.request.id': '1' },
    });
  });
  it('links a call through the gateway: gateway → executor → kernel in one trace', async () => {
    const c = await v2Client(gateway.mcpUrl, 'auto', devToken('alice'));
    others.push(c);
    check(await traceOf('via-gateway', c, 'stoa-gateway'), 'stoa-gateway');
  });

  it('links a call through the dispatcher: dispatcher → worker executor → kernel in one trace', async () => {
    const c = await v2Client(dispatcher.mcpUrl, 'auto', devToken('alice'));
    others.push(c);
    check(await traceOf('via-dispatcher', c, 'stoa-dispatcher'), 'stoa-dispatcher', 'w1');
  });

  it("puts an async job's run under the tool call that started it: tools/call → job.run → kernel.execute", async () => {
    const c = await v2Client(jobs.mcpUrl, 'auto', devToken('alice'));
    others.push(c);
    const started = await c.call('execute_jobs_code', { code: 'print("in a job")' });
    const jobId = started.json.job_id as string;
    expect(jobId).toEqual(expect.any(String));
    await expect
      .poll(async () => (await c.call('jobs_check_job', { job_id: jobId })).json.status, { timeout: 20_000 })
      .toBe('completed');
    const run = await until('the job.run span', () =>
      Promise.resolve(collector.spans.find((s) => s.name === 'job.run' && s.attributes['stoa.job.id'] === jobId)),
    );
    const kernel = await until('its kernel.execute span', () =>
      Promise.resolve(collector.spans.find((s) => s.name === 'kernel.execute' && s.parentSpanId === run.spanId)),
    );
    const call = collector.spans.find((s) => s.spanId === run.parentSpanId);
    expect(call).toMatchObject({
      service: 'stoa-executor',
      kind: SERVER,
      name: 'tools/call execute_jobs_code',
      traceId: run.traceId,
    });
    expect(run.attributes['stoa.job.kind']).toBe('background');
    expect(kernel.traceId).toBe(run.traceId);
  });
});
