import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APT_INSTALL_TIMEOUT_MS } from '../helpers/apt.js';
import { createProduct } from '../helpers/catalog.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { launchChromium, screenshot, WIDTHS, type TestBrowser } from './chromium.js';

/** The console's usage view (issue 42, Quotas), in headless Chromium against a sandbox with quotas. */
let sandbox: TestSandbox;
let chromium: TestBrowser;

beforeAll(async () => {
  [sandbox, chromium] = await Promise.all([startSandbox({ accountMaxRecords: 20, accountMaxBytes: 100_000 }), launchChromium()]);
}, APT_INSTALL_TIMEOUT_MS);
afterAll(async () => {
  await chromium?.close();
  await sandbox?.stop();
});

async function signedIn(width: number, hash: string): Promise<Page> {
  const page = await chromium.context.newPage();
  page.setDefaultTimeout(15_000);
  await page.setViewportSize({ width, height: 860 });
  await page.goto(`${sandbox.url}/_sandbox/${hash}`);
  await page.getByLabel('Secret key').fill(sandbox.config.secretKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#live.on').waitFor();
  return page;
}

const overflow = (page: Page): Promise<number> => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

describe('console: usage', () => {
  it('shows the records and bytes against the quotas, and the request log against the process budget, at 390 and 1280 px', async () => {
    for (let i = 0; i < 5; i++) await createProduct(sandbox.client, { description: 'd'.repeat(2_000) });
    const usage = await sandbox.client.get<{ records: number; bytes: number }>('/_sandbox/usage');
    expect(usage.body.records).toBe(5);
    for (const [name, width] of Object.entries(WIDTHS)) {
      const page = await signedIn(width, '#/usage');
      await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
      await page.getByText('5 of 20').waitFor();
      const records = page.getByRole('progressbar', { name: 'Records against the quota' });
      expect(await records.getAttribute('value')).toBe('5');
      expect(await records.getAttribute('max')).toBe('20');
      const bytes = page.getByRole('progressbar', { name: 'Stored bytes against the quota' });
      expect(await bytes.getAttribute('value')).toBe(String(usage.body.bytes));
      await page.getByText(`of ${(100_000 / 1024).toFixed(1)} KiB`).waitFor();
      await page.getByRole('progressbar', { name: 'Request log memory against the budget every account shares' }).waitFor();
      await page.getByText('of 64.0 MiB').waitFor();
      expect(await overflow(page), name).toBeLessThanOrEqual(0);
      await screenshot(page, `console-usage-${name}`);
      await page.close();
    }
  });
});
