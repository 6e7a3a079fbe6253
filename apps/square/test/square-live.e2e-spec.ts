import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_ADMIN_TOKEN } from '../../../test/support/admin';
import { type AppProcess, shutDown } from '../../../test/support/app-process';
import { chromiumAvailable, launchChromium, screenshotAndOrigins } from '../../../test/support/browser';
import { startSquare } from '../../../test/support/square-process';
import { devToken, v2Client, type TestClient } from '../../../test/support/ts-clients';

const XSS = `<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>`;

// chromiumAvailable() throws under STOA_REQUIRE_SERVICES=1 when Chromium is missing, and says why it skips otherwise.
describe.runIf(chromiumAvailable())('the square’s live view in Chromium', () => {
  let square: AppProcess;
  let alice: TestClient;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    square = await startSquare();
    alice = await v2Client(square.mcpUrl, 'auto', devToken('alice'));
    await alice.call('register', { name: 'alice', role: 'planner' });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('console', (m) => {
      // The refused sign-in below is expected to log its 403.
      if (m.type() === 'error' && !m.text().includes('403')) pageErrors.push(m.text());
    });
  });
  afterAll(async () => {
    await browser?.close();
    await shutDown(alice, square);
  });

  it('serves the page with a CSP that allows no inline script and nothing from elsewhere', async () => {
    const res = await fetch(`${square.url}/live`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('unsafe-inline');
    const html = await res.text();
    expect(html).not.toMatch(/<script>|<script [^>]*>[^<]/); // scripts only by src
    expect(html).not.toMatch(/https?:\/\//);
  });

  it('shows nothing of the square without the admin token: the stream is refused as the admin API is', async () => {
    expect((await fetch(`${square.url}/admin/v1/square/live`)).status).toBe(403);
    await page.goto(`${square.url}/live`);
    await page.fill('#token', 'not-the-admin-token');
    await page.click('#signin button');
    await page.locator('#conn[data-state="error"]').waitFor({ timeout: 5_000 });
    await expect(page.locator('#problem').textContent()).resolves.toContain('X-Stoa-Admin-Token');
    await expect(page.locator('#view').isHidden()).resolves.toBe(true);
  });

  it('with the admin token lists agents and channels, and shows a new message live, as text', async () => {
    await page.fill('#token', TEST_ADMIN_TOKEN);
    await page.click('#signin button');
    await page.locator('#conn[data-state="live"]').waitFor({ timeout: 5_000 });
    await page.locator('#agents tr[data-status="online"]', { hasText: 'alice' }).waitFor({ timeout: 5_000 });
    const t0 = performance.now();
    const posted = await alice.call('chat_post_message', { channel: '#live', content: XSS });
    const item = page.locator(`#messages li[data-message="${String(posted.json.message_id)}"]`);
    await item.waitFor({ timeout: 2_000 });
    expect(performance.now() - t0).toBeLessThan(2_000);
    await expect(item.locator('.content').textContent()).resolves.toBe(XSS);
    await expect(item.locator('.meta').textContent()).resolves.toContain('#live alice');
    await expect(page.locator('#messages img, #messages script').count()).resolves.toBe(0);
    expect(await page.evaluate('typeof window.__xss')).toBe('undefined');
    await expect(page.locator('#channels tr[data-channel="#live"] td').nth(1).textContent()).resolves.toBe('1');
  });

  it('follows the board and the locks without a reload', async () => {
    await alice.call('board_put', { key: 'plan/live', value: { step: 1 } });
    await alice.call('lock_acquire', { name: 'deploy', ttl_seconds: 30 });
    await page.locator('#board tr', { hasText: 'plan/live' }).waitFor({ timeout: 3_000 });
    const lock = page.locator('#locks tr', { hasText: 'deploy' });
    await lock.waitFor({ timeout: 3_000 });
    await expect(lock.locator('td').nth(1).textContent()).resolves.toBe('alice');
    await alice.call('lock_release', { name: 'deploy' });
    await lock.waitFor({ state: 'detached', timeout: 3_000 });
  });

  it('loads nothing from outside and runs no page errors; keeps a screenshot', async () => {
    const origins = await screenshotAndOrigins(page, 'square-live.png');
    expect(origins).toEqual(new Set([new URL(square.url).origin]));
    expect(pageErrors).toEqual([]);
  });
});
