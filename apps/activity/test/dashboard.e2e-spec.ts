import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  PNG_DISPLAY_CODE,
  startActivity,
  TEST_WRITER_SECRET,
  type RunningActivity,
} from '../../../test/support/activity';
import { chromiumAvailable, launchChromium, screenshotAndOrigins } from '../../../test/support/browser';
import { startExecutor, type RunningExecutor } from '../../../test/support/executor-process';
import { startRouter, type RunningRouter } from '../../../test/support/router-process';
import { v2Client, type TestClient } from '../../../test/support/ts-clients';

const XSS = `<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>`;

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
      const ex = await startExecutor({ config: { name }, env });
      executors.push(ex);
      clients[name] = await v2Client(ex.mcpUrl, 'auto');
    }
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
    type Img = { complete: boolean; naturalWidth: number; naturalHeight: number };
    await page.waitForFunction(
      "[...document.querySelectorAll('.figures img')].every((i) => i.complete && i.naturalWidth > 0)",
      undefined,
      {
        timeout: 5000,
      },
    );
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
    // The executor's own event of the same run shares the lane.
    await expect(
      lane.locator('article.card[data-type="code_executed"]', { hasText: 'via router' }).count(),
    ).resolves.toBe(1);
  });

  it('loads nothing from outside and runs no page errors; keeps a screenshot', async () => {
    const origins = await screenshotAndOrigins(page, 'activity-dashboard.png');
    expect(origins).toEqual(new Set([new URL(activity.url).origin]));
    expect(pageErrors).toEqual([]);
  });
});
