import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { APT_INSTALL_TIMEOUT_MS } from '../helpers/apt.js';
import { launchChromium, screenshot, WIDTHS, type TestBrowser } from './chromium.js';

/** The API reference renders from this sandbox alone: any request elsewhere fails the test. */
let sandbox: TestSandbox;
let chromium: TestBrowser;

beforeAll(async () => {
  [sandbox, chromium] = await Promise.all([startSandbox(), launchChromium()]);
}, APT_INSTALL_TIMEOUT_MS);
afterAll(async () => {
  await chromium?.close();
  await sandbox?.stop();
});

describe('API reference', () => {
  it('renders openapi.yaml with every request staying on the sandbox', async () => {
    const page = await chromium.context.newPage();
    await page.setViewportSize({ width: WIDTHS.desktop, height: 900 });
    const elsewhere: string[] = [];
    page.on('request', (request) => {
      const url = request.url();
      if (!url.startsWith(sandbox.url) && !url.startsWith('data:')) elsewhere.push(url);
    });
    await page.goto(`${sandbox.url}/_sandbox/docs`);
    await page.getByRole('heading', { name: /Payments and Catalog Service/ }).waitFor();
    await page.locator('.opblock-summary-path', { hasText: '/transactions/v2/purchase' }).first().waitFor();
    expect(await page.locator('.opblock').count()).toBeGreaterThan(20);
    expect(elsewhere).toEqual([]);
    await screenshot(page, 'docs-desktop');
    await page.close();
  });
});
