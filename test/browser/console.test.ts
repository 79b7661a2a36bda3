import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { created, pixBody } from '../helpers/purchases.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { receiversClosedAfterEach } from '../helpers/webhooks.js';
import { INSTALL_TIMEOUT_MS, launchChromium, screenshot, WIDTHS, type TestBrowser } from './chromium.js';

/**
 * The console driven as a person would, in headless Chromium against a real sandbox. One test
 * per feature, each on its own page and signed in anew, so features can be added one by one.
 */
let sandbox: TestSandbox;
let chromium: TestBrowser;
const receiver = receiversClosedAfterEach();

beforeAll(async () => {
  [sandbox, chromium] = await Promise.all([startSandbox({ instructionDelayMs: 60_000 }), launchChromium()]);
}, INSTALL_TIMEOUT_MS);
afterAll(async () => {
  await chromium?.close();
  await sandbox?.stop();
});

async function signedIn(width: number = WIDTHS.desktop, hash = ''): Promise<Page> {
  const page = await chromium.context.newPage();
  await page.setViewportSize({ width, height: 860 });
  await page.goto(`${sandbox.url}/_sandbox/${hash}`);
  await page.getByLabel('Secret key').fill(sandbox.config.secretKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#live.on').waitFor();
  return page;
}

describe('console', () => {
  it('refuses a wrong key and keeps the right one in the tab only', async () => {
    const page = await chromium.context.newPage();
    await page.goto(`${sandbox.url}/_sandbox/`);
    await page.getByLabel('Secret key').fill('sk_wrong');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('That key was refused').waitFor();
    await page.getByLabel('Secret key').fill(sandbox.config.secretKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Transactions' }).waitFor();
    const stored = await page.evaluate(() => ({ session: Object.keys(sessionStorage), local: Object.keys(localStorage), cookie: document.cookie }));
    expect(stored).toEqual({ session: ['payments-sandbox.secretKey'], local: [], cookie: '' });
    // A reload keeps the session; signing out forgets the key.
    await page.reload();
    await page.locator('#live.on').waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Secret key').waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await page.close();
  });

  it('shows a purchase made through the API as it happens, and finds it by externalId', async () => {
    const page = await signedIn();
    const tx = await created(sandbox.client, pixBody({ externalId: 'order-live-1' }));
    const row = page.locator(`tr[data-transaction="${tx.id}"]`);
    await row.waitFor();
    expect(await row.textContent()).toContain('order-live-1');
    expect(await row.textContent()).toContain('PENDING');
    await page.getByLabel('Find by').selectOption('externalId');
    await page.getByLabel('Value').fill('order-live-1');
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByRole('heading', { name: `Transaction ${tx.id}` }).waitFor();
    await page.close();
  });

  it('pays a transaction with its Pay button, then shows the delivered webhook and replays it', async () => {
    const hook = await receiver(200);
    const tx = await created(sandbox.client, pixBody({ externalId: 'order-pay-1', postbackUrl: hook.url }));
    for (const [name, width] of Object.entries(WIDTHS)) {
      const page = await signedIn(width, `#/transactions/${tx.id}`);
      await page.getByRole('heading', { name: `Transaction ${tx.id}` }).waitFor();
      if (name === 'desktop') {
        await page.getByRole('button', { name: 'Pay', exact: true }).click();
        await page.locator('h1 .badge', { hasText: 'APPROVED' }).waitFor();
        const delivery = page.locator('article.delivery', { has: page.locator('.badge', { hasText: 'delivered' }) });
        await delivery.waitFor();
        await delivery.getByText('Request body and headers').click();
        const body = delivery.getByLabel(/^Body of whd_/);
        await body.waitFor();
        expect(JSON.parse((await body.textContent()) ?? '')).toMatchObject({ event: 'cashin.paid', payload: { transaction_id: tx.id, external_id: 'order-pay-1' } });
        await delivery.getByRole('button', { name: 'Replay' }).click();
        // The replay answers once its attempt is recorded, so the row means the receiver had it.
        await delivery.locator('.attempts .tag', { hasText: 'replay' }).waitFor();
        expect(hook.requests.map((r) => r.headers['x-sandbox-delivery'])).toEqual([await delivery.getAttribute('data-delivery'), await delivery.getAttribute('data-delivery')]);
      } else {
        await page.locator('h1 .badge', { hasText: 'APPROVED' }).waitFor();
        await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
        await page.getByRole('heading', { name: 'Webhook deliveries' }).waitFor();
        await page.locator(`article.delivery:has(a[href="#/transactions/${tx.id}"])`).waitFor();
        expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
        await screenshot(page, 'console-webhooks-phone');
        await page.goBack();
      }
      await screenshot(page, `console-transaction-${name}`);
      await page.close();
    }
  });

  it('lists transactions at phone width without sideways scrolling', async () => {
    await created(sandbox.client, pixBody({ externalId: 'order-phone-1' }));
    for (const [name, width] of Object.entries(WIDTHS)) {
      const page = await signedIn(width);
      await page.locator('tr[data-transaction]').first().waitFor();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      await screenshot(page, `console-transactions-${name}`);
      await page.close();
    }
  });

  it('advances the account clock', async () => {
    const before = (await sandbox.client.get<{ offsetMs: number }>('/_sandbox/clock')).body.offsetMs;
    const page = await signedIn(WIDTHS.desktop, '#/clock');
    await page.getByRole('heading', { name: 'Test clock' }).waitFor();
    await page.getByRole('button', { name: '+1 day' }).click();
    await page.getByText(/Clock advanced to/).waitFor();
    const after = (await sandbox.client.get<{ offsetMs: number }>('/_sandbox/clock')).body.offsetMs;
    expect(after - before).toBe(24 * 60 * 60 * 1000);
    await page.close();
  });

  it('changes the account webhook URL and shows the webhook secret', async () => {
    const page = await signedIn(WIDTHS.phone, '#/account');
    await page.getByLabel('Webhook URL').fill('http://127.0.0.1:9/console-hook');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.locator('#account-webhook-url', { hasText: 'http://127.0.0.1:9/console-hook' }).waitFor();
    await page.getByRole('button', { name: 'Show' }).click();
    await page.locator('#webhook-secret').filter({ hasText: sandbox.running.sandbox.defaultAccount.webhookSecret }).waitFor();
    await screenshot(page, 'console-account-phone');
    await page.close();
  });

  it('shows the catalog and adds a product', async () => {
    const page = await signedIn(WIDTHS.desktop, '#/catalog');
    await page.getByLabel('New product name').fill('Plano console');
    await page.getByRole('button', { name: 'Create product' }).click();
    await page.getByRole('heading', { name: 'Plano console' }).waitFor();
    await page.close();
  });
});
