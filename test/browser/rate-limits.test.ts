import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APT_INSTALL_TIMEOUT_MS } from '../helpers/apt.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { launchChromium, screenshot, WIDTHS, type TestBrowser } from './chromium.js';

/**
 * The console's rate limits (Account page): each class's limit and what is left, and the form
 * that sets the account's own, on a sandbox on loopback without an admin token that limits
 * rates (SANDBOX_RATE_LIMIT set), where the sandbox lets the console set them.
 */
let sandbox: TestSandbox;
let chromium: TestBrowser;

beforeAll(async () => {
  [sandbox, chromium] = await Promise.all([
    startSandbox({ rateLimit: { write: { perSecond: 50, burst: 100 }, read: { perSecond: 200, burst: 400 }, control: { perSecond: 20, burst: 40 } } }),
    launchChromium(),
  ]);
}, APT_INSTALL_TIMEOUT_MS);
afterAll(async () => {
  await chromium?.close();
  await sandbox?.stop();
});

async function accountPage(width: number): Promise<Page> {
  const page = await chromium.context.newPage();
  page.setDefaultTimeout(15_000);
  await page.setViewportSize({ width, height: 860 });
  await page.goto(`${sandbox.url}/_sandbox/#/account`);
  await page.getByLabel('Secret key').fill(sandbox.config.secretKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#live.on').waitFor();
  await page.locator('#rate-write-limit').waitFor();
  return page;
}

const overflow = (page: Page): Promise<number> => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

describe('console: rate limits', () => {
  for (const [device, width] of [['desktop', WIDTHS.desktop], ['phone', WIDTHS.phone]] as const) {
    it(`shows the limits and what is left, and sets the account's own (${device})`, async () => {
      const page = await accountPage(width);
      try {
        expect(await page.locator('#rate-write-limit').textContent()).toBe('50/s, burst 100');
        expect(await page.locator('#rate-control-limit').textContent()).toBe('20/s, burst 40');
        // What is left: a whole number up to the burst (the console's own calls take from it, and it refills at 20/s).
        const left = Number(await page.locator('#rate-control-remaining').textContent());
        expect(Number.isInteger(left) && left >= 0 && left <= 40).toBe(true);
        await page.getByLabel('write').fill('5:9');
        await page.getByLabel('read').fill('off');
        await page.getByRole('button', { name: 'Save limits' }).click();
        await page.getByText('Rate limits saved').waitFor();
        expect(await page.locator('#rate-write-limit').textContent()).toBe('5/s, burst 9');
        expect(await page.locator('#rate-read-limit').textContent()).toBe('not limited');
        const state = await sandbox.client.get<{ write: { perSecond: number; source: string } }>('/_sandbox/rate-limit');
        expect(state.body.write).toMatchObject({ perSecond: 5, burst: 9, source: 'account' });
        expect(await overflow(page)).toBe(0);
        await screenshot(page, `console-rate-limits-${device}`);
        // Back to the sandbox's for the next test.
        for (const name of ['write', 'read']) await page.getByLabel(name).fill('');
        await page.getByRole('button', { name: 'Save limits' }).click();
        await page.locator('#rate-write-limit', { hasText: '50/s, burst 100' }).waitFor();
      } finally {
        await page.close();
      }
    });
  }

  it('shows the refusal of a malformed limit without calling the sandbox', async () => {
    const page = await accountPage(WIDTHS.desktop);
    try {
      await page.getByLabel('control').fill('fast');
      await page.getByRole('button', { name: 'Save limits' }).click();
      await page.getByText('control: write a rate per second').waitFor();
    } finally {
      await page.close();
    }
  });
});
