import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { REQUIRE_SERVICES } from './databases';
import { ROOT } from './paths';

/** Debian's Chromium (installed by .ci/run); playwright-core drives it, nothing is downloaded. */
export const CHROMIUM = process.env.STOA_CHROMIUM ?? '/usr/bin/chromium';

/** Whether Chromium is installed; in CI (`STOA_REQUIRE_SERVICES=1`) a missing one throws instead of skipping. */
export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  const why = `browser tests skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`;
  if (REQUIRE_SERVICES) throw new Error(`${why} (STOA_REQUIRE_SERVICES=1 makes this an error)`);
  console.warn(why);
  return false;
}

/** Headless Chromium with the flags verified on this machine kind (STACK-NOTES "Browser tests"). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Keeps a full-page screenshot under test-artifacts/ and returns the origins the page loaded anything from. */
export async function screenshotAndOrigins(page: Page, name: string): Promise<Set<string>> {
  const dir = join(ROOT, 'test-artifacts');
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, name), fullPage: true });
  const origins = await page.evaluate<string[]>(
    "performance.getEntriesByType('resource').map((r) => new URL(r.name).origin)",
  );
  return new Set(origins);
}
