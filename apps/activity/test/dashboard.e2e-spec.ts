import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  PNG_DISPLAY_CODE,
  startActivity,
  TEST_WRITER_SECRET,
  type RunningActivity,
} from '../../../test/support/activity';
import { TEST_ADMIN_TOKEN } from '../../../test/support/admin';
import { chromiumAvailable, launchChromium, screenshotAndOrigins } from '../../../test/support/browser';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { TEST_PYTHON } from '../../../test/support/paths';
import { startRouter, type RunningRouter } from '../../../test/support/router-process';
import { devToken, v1Client, v2Client, type TestClient } from '../../../test/support/ts-clients';

const XSS = `<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>`;

/** A real matplotlib figure (the kernel's Agg backend; the driver captures open figures after the cell). */
const MATPLOTLIB = `import matplotlib.pyplot as plt
plt.figure(figsize=(5, 3.5), dpi=100)
plt.plot([0, 1, 2, 3, 4], [0, 1, 4, 9, 16], marker='o')
plt.title('squares')
plt.show()
print('plotted')`;

/**
 * Records, in order, the "n/m done" text of every batch_progress card the page adds (page script, as text). Each
 * update is a new card element; a lane moved to the top re-adds its cards, hence the set of those already seen.
 */
const RECORD_PROGRESS = `window.__progress = [];
const recorded = new WeakSet();
new MutationObserver((records) => {
  const sel = 'article.card[data-type="batch_progress"]';
  for (const r of records)
    for (const n of r.addedNodes) {
      if (!(n instanceof Element)) continue;
      for (const c of [n, ...n.querySelectorAll(sel)])
        if (c.matches(sel) && !recorded.has(c)) {
          recorded.add(c);
          window.__progress.push([c.dataset.batch, c.querySelector('.count').textContent]);
        }
    }
}).observe(document.getElementById('lanes'), { childList: true, subtree: true });`;

type Img = { complete: boolean; naturalWidth: number; naturalHeight: number };
/**
 * Waits until `img` is decoded (rejects if it cannot be). A function run by locator.evaluate, not a string for
 * page.waitForFunction: polling a string predicate evaluates it in the page, which the dashboard's CSP (no
 * unsafe-eval) refuses whenever the image was not loaded at the first check.
 */
const decoded = (img: Locator) => img.evaluate((i) => (i as unknown as { decode(): Promise<void> }).decode());

// chromiumAvailable() throws under STOA_REQUIRE_SERVICES=1 when Chromium is missing, and says why it skips otherwise.
describe.runIf(chromiumAvailable())('activity dashboard in Chromium', () => {
  let activity: RunningActivity;
  const executors: RunningExecutor[] = [];
  const clients: Record<string, TestClient> = {};
  let router: RunningRouter;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    activity = await startActivity();
    const env = { ACTIVITY_UI_URL: activity.url, ACTIVITY_UI_SECRET: TEST_WRITER_SECRET };
    for (const name of ['demo', 'geo']) {
      // demo's kernels run the test venv's interpreter, which has matplotlib (the global setup installs it).
      const environment = name === 'demo' ? { python: TEST_PYTHON } : {};
      const ex = await startExecutor({ config: { name, environment }, env });
      executors.push(ex);
      clients[name] = await v2Client(ex.mcpUrl, 'auto');
    }
    const demoUrl = executors[0]!.mcpUrl;
    clients.legacy = await v1Client(demoUrl);
    clients.alice = await v2Client(demoUrl, 'auto', devToken('alice'));
    clients.bob = await v2Client(demoUrl, 'auto', devToken('bob'));
    router = await startRouter(
      { upstreams: [{ name: 'demo', url: executors[0]!.mcpUrl, auth: { mode: 'passthrough', audience: 'dev' } }] },
      env,
    );
    clients.router = await v2Client(router.mcpUrl, 'auto');
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && pageErrors.push(m.text()));
    await page.goto(`${activity.url}/`);
    await page.locator('#conn[data-state="live"]').waitFor({ timeout: 10_000 });
    await page.evaluate(RECORD_PROGRESS);
  });
  afterAll(async () => {
    await browser?.close();
    for (const c of Object.values(clients)) await c.close();
    await router?.stop();
    for (const e of executors) await e.stop();
    await activity?.stop();
  });

  it('shows an execution live, within a second of the call returning', async () => {
    const r = await clients.demo!.call('execute_demo_code', { code: 'print(6 * 7)', description: 'answer' });
    expect(r.json.success).toBe(true);
    const t0 = performance.now();
    const card = page.locator('article.card[data-type="code_executed"]', { hasText: 'answer' });
    await card.waitFor({ timeout: 1000 });
    expect(performance.now() - t0).toBeLessThan(1000);
    await expect(card.locator('[data-field="stdout"] pre').textContent()).resolves.toBe('42\n');
    // Its lane is the run's session.
    const lane = page.locator(`details.lane[data-session="${String(r.json.session_id)}"]`);
    await expect(lane.count()).resolves.toBe(1);
  });

  it('renders a PNG display and keeps an XSS payload in stdout as text', async () => {
    const code = `${PNG_DISPLAY_CODE}\nprint(${JSON.stringify(XSS)})`;
    await clients.demo!.call('execute_demo_code', { code, description: 'plot with payload' });
    const card = page.locator('article.card', { hasText: 'plot with payload' });
    await card.waitFor({ timeout: 5000 });
    const img = card.locator('.figures img');
    await expect(img.count()).resolves.toBe(1);
    await decoded(img);
    expect(
      await img.evaluate((i) => [(i as unknown as Img).naturalWidth, (i as unknown as Img).naturalHeight]),
    ).toEqual([120, 60]);
    const stdout = card.locator('[data-field="stdout"] pre');
    await expect(stdout.textContent()).resolves.toBe(`${XSS}\n`);
    // Inert: no element was created from the payload and nothing ran.
    await expect(stdout.locator('img, script').count()).resolves.toBe(0);
    expect(await page.evaluate('typeof window.__xss')).toBe('undefined');
  });

  it('filters by server', async () => {
    await clients.geo!.call('execute_geo_code', { code: 'print("from geo")', description: 'geo run' });
    await page.locator('article.card[data-server="geo"]').first().waitFor({ timeout: 5000 });
    await page.selectOption('#filter-server', 'geo');
    await expect(page.locator('article.card[data-server="geo"]:not(.hidden)').count()).resolves.toBeGreaterThan(0);
    await expect(page.locator('article.card:not(.hidden):not([data-server="geo"])').count()).resolves.toBe(0);
    await page.selectOption('#filter-server', '');
    await expect(page.locator('article.card[data-server="demo"]:not(.hidden)').count()).resolves.toBeGreaterThan(0);
  });

  it("shows a router's proxied call as text in the lane of the session it ran in", async () => {
    const r = await clients.router!.call('execute_demo_code', { code: 'print("proxied")', description: 'via router' });
    expect(r.json.success).toBe(true);
    const lane = page.locator(`details.lane[data-session="${String(r.json.session_id)}"]`);
    const card = lane.locator('article.card[data-type="tool_called"][data-server="lab"]');
    await card.waitFor({ timeout: 5000 });
    await expect(card.locator('.desc').textContent()).resolves.toBe('execute_demo_code → demo');
    await expect(card.textContent()).resolves.toContain('tool execute_demo_code → upstream demo');
    // The executor's own event of the same run shares the lane (it comes from another publisher: wait for it).
    const executed = lane.locator('article.card[data-type="code_executed"]', { hasText: 'via router' });
    await executed.first().waitFor({ timeout: 5000 });
    await expect(executed.count()).resolves.toBe(1);
  });

  it('renders a real matplotlib figure in the lane of the session that plotted it, and not in the result', async () => {
    const r = await clients.demo!.call('execute_demo_code', { code: MATPLOTLIB, description: 'matplotlib squares' });
    expect(r.json).toMatchObject({ success: true, stdout: 'plotted\n' });
    expect(r.text).not.toContain('iVBOR'); // no PNG bytes for the agent
    const lane = page.locator(`details.lane[data-session="${String(r.json.session_id)}"]`);
    const img = lane.locator('article.card', { hasText: 'matplotlib squares' }).locator('.figures img');
    await img.waitFor({ timeout: 10_000 });
    await expect(img.getAttribute('data-mime')).resolves.toBe('image/png');
    await decoded(img);
    const [w, h] = await img.evaluate((i) => [(i as unknown as Img).naturalWidth, (i as unknown as Img).naturalHeight]);
    // 500×350 px before matplotlib trims the margins (bbox_inches="tight").
    expect(w).toBeGreaterThan(300);
    expect(h).toBeGreaterThan(200);
  });

  it("shows a batch's progress live in its parent session's lane, n/m up to m/m with the failed count", async () => {
    // The items' own work takes 0, 0.8 and 1.6 s, so they end one by one; the last one raises.
    const code = 'import time\ntime.sleep(i * 0.8)\nif i == 2:\n    raise ValueError("item 2 fails")\nresult = i * i';
    const r = await clients.demo!.call('demo_parallel_execute', { code, inputs: [{ i: 0 }, { i: 1 }, { i: 2 }] });
    const batchId = String(r.json.batch_id);
    const card = page.locator(`article.card[data-type="batch_progress"][data-batch="${batchId}"]`);
    await card.locator('.count', { hasText: '3/3 done' }).waitFor({ timeout: 60_000 });
    await expect(card.count()).resolves.toBe(1); // one card per batch, replaced as items end
    await expect(card.locator('.failed').textContent()).resolves.toBe('1 failed');
    await expect(card.locator('progress').getAttribute('value')).resolves.toBe('3');
    const shown = (await page.evaluate<[string, string][]>('window.__progress'))
      .filter(([b]) => b === batchId)
      .map(([, text]) => text);
    const done = shown.map((t) => Number(t.split('/')[0]));
    expect(shown[0]).toBe('0/3 done'); // the batch's card appears when it is created
    expect(shown.at(-1)).toBe('3/3 done');
    expect(done).toEqual([...new Set(done)].sort((a, b) => a - b)); // only forward, one step per item that ended
    expect(done.length).toBeGreaterThanOrEqual(3); // updated while items still ran, not only at the end
    // The lane is the batch's parent session; each item's own run has a lane of its own, tagged with the batch.
    const view = await clients.demo!.call('demo_check_batch', { batch_id: batchId });
    expect(view.json).toMatchObject({ status: 'partial_failure', completed: 2, failed: 1 });
    const parent = page.locator(`details.lane[data-session="${String(view.json.parent_session_id)}"]`);
    await expect(parent.locator(`article.card[data-batch="${batchId}"]`).count()).resolves.toBe(1);
    for (const job of r.json.jobs as { session_id: string }[])
      await page
        .locator(`details.lane[data-session="${job.session_id}"] article.card[data-batch="${batchId}"]`)
        .waitFor({ timeout: 5000 });
    // A stateless cancel has no MCP session: its event goes to the lane its result names (the batch's parent).
    await clients.demo!.call('demo_cancel_batch', { batch_id: batchId });
    await parent.locator('article.card[data-type="batch_cancelled"]').waitFor({ timeout: 5000 });
  });

  it('filters by event type in the page', async () => {
    await page.selectOption('#filter-type', 'job');
    const visible = (type: string) => page.locator(`article.card[data-type="${type}"]:not(.hidden)`).count();
    await expect(visible('batch_progress')).resolves.toBeGreaterThan(0);
    await expect(visible('code_executed')).resolves.toBe(0);
    const outside = 'article.card:not(.hidden):not([data-type^="job_"]):not([data-type^="batch_"])';
    await expect(page.locator(outside).count()).resolves.toBe(0);
    await page.selectOption('#filter-type', 'exec');
    await expect(visible('code_executed')).resolves.toBeGreaterThan(0);
    await expect(visible('batch_progress')).resolves.toBe(0);
    await expect(page.locator('article.card:not(.hidden):not([data-type^="code_"])').count()).resolves.toBe(0);
    await page.selectOption('#filter-type', '');
    await expect(visible('batch_progress')).resolves.toBeGreaterThan(0);
  });

  it('puts the tool event of a stateless call and of a 2025-era call in the lane of the session it ran in', async () => {
    const write = "open(agora_output('note.txt'), 'w').write('hi')";
    const modern = await clients.demo!.call('execute_demo_code', { code: write });
    const modernSid = String(modern.json.session_id);
    const sent = await clients.demo!.call('demo_send', {
      data_ref: 'note.txt',
      to: 'user',
      execution_session_id: modernSid,
    });
    expect(sent.json.success).toBe(true);
    const legacy = await clients.legacy!.call('execute_demo_code', { code: write });
    const legacySid = String(legacy.json.session_id);
    // A 2025-era client names no session: its MCP session is the one it runs in.
    expect((await clients.legacy!.call('demo_send', { data_ref: 'note.txt', to: 'user' })).json.success).toBe(true);
    for (const sid of [modernSid, legacySid])
      await page
        .locator(`details.lane[data-session="${sid}"] article.card[data-type="artifact_published"]`)
        .waitFor({ timeout: 5000 });
    // The card links the download the agent got, and the link serves the file.
    const link = page.locator(
      `details.lane[data-session="${modernSid}"] article.card[data-type="artifact_published"] a`,
    );
    await expect(link.first().getAttribute('href')).resolves.toBe(String(sent.json.remote_uri));
    const file = await fetch(String(sent.json.remote_uri));
    await expect(file.text()).resolves.toBe('hi');
    const orphans = page.locator(
      'details.lane[data-session="(no session)"] article.card[data-type="artifact_published"]',
    );
    await expect(orphans.count()).resolves.toBe(0);
  });

  it("filters by user in an admin's page, and a user's page shows only their own sessions", async () => {
    for (const who of ['alice', 'bob'])
      await clients[who]!.call('execute_demo_code', { code: `print("${who}")`, description: `${who} run` });
    const admin = await browser.newPage();
    try {
      await admin.goto(`${activity.url}/#admin=${TEST_ADMIN_TOKEN}`);
      await admin.locator('#conn[data-state="live"]').waitFor({ timeout: 10_000 });
      const ofUser = (user: string) => admin.locator(`article.card[data-user="${user}"]`);
      for (const user of ['alice@tenant-a', 'bob@tenant-a']) await ofUser(user).first().waitFor({ timeout: 5000 });
      await admin.selectOption('#filter-user', 'alice@tenant-a');
      await expect(admin.locator('article.card[data-user="alice@tenant-a"]:not(.hidden)').count()).resolves.toBe(
        await ofUser('alice@tenant-a').count(),
      );
      await expect(admin.locator('article.card:not(.hidden):not([data-user="alice@tenant-a"])').count()).resolves.toBe(
        0,
      );
      await admin.selectOption('#filter-user', '');
      await expect(
        admin.locator('article.card[data-user="bob@tenant-a"]:not(.hidden)').count(),
      ).resolves.toBeGreaterThan(0);
    } finally {
      await admin.close();
    }
    // The dev user's page never got alice's or bob's events.
    await expect(page.locator('article.card[data-user="alice@tenant-a"]').count()).resolves.toBe(0);
    await expect(page.locator('#filter-user option[value="bob@tenant-a"]').count()).resolves.toBe(0);
  });

  it('serves the page under a CSP the browser enforces: own-origin scripts only, nothing inline or external', async () => {
    const res = await fetch(`${activity.url}/`);
    const csp = res.headers.get('content-security-policy') ?? '';
    const directives = new Map(
      csp.split(';').map((d) => {
        const [name = '', ...sources] = d.trim().split(/\s+/);
        return [name, sources] as const;
      }),
    );
    expect(directives.get('default-src')).toEqual(["'none'"]);
    expect(directives.get('script-src')).toEqual(["'self'"]);
    // No origin but the page's own anywhere (no CDN), no 'unsafe-*' anything.
    const sources = [...directives.values()].flat();
    expect(sources.filter((s) => !["'self'", "'none'", 'data:'].includes(s))).toEqual([]);
    for (const file of ['dashboard.js', 'cards.js'])
      expect((await fetch(`${activity.url}/static/${file}`)).headers.get('content-security-policy')).toBe(csp);
    // Chromium enforces it: a script injected into the page does not run and is reported as a violation.
    const probe = await browser.newPage();
    try {
      await probe.goto(`${activity.url}/`);
      await probe.locator('#conn[data-state="live"]').waitFor({ timeout: 10_000 });
      const violated = await probe.evaluate(`new Promise((resolve) => {
        document.addEventListener('securitypolicyviolation', (e) => resolve(e.violatedDirective), { once: true });
        const s = document.createElement('script');
        s.textContent = 'window.__inline = 1';
        document.body.append(s);
      })`);
      expect(String(violated)).toMatch(/^script-src/);
      expect(await probe.evaluate('typeof window.__inline')).toBe('undefined');
    } finally {
      await probe.close();
    }
  });

  it('loads nothing from outside and runs no page errors; keeps a screenshot', async () => {
    const origins = await screenshotAndOrigins(page, 'activity-dashboard.png');
    expect(origins).toEqual(new Set([new URL(activity.url).origin]));
    expect(pageErrors).toEqual([]);
  });
});
