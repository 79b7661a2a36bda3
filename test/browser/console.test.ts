import type { Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Transaction } from '../../src/spec/types.js';
import { copBody, created, hybridBody, pixBody } from '../helpers/purchases.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';
import { receiversClosedAfterEach } from '../helpers/webhooks.js';
import { APT_INSTALL_TIMEOUT_MS } from '../helpers/apt.js';
import { launchChromium, screenshot, WIDTHS, type TestBrowser } from './chromium.js';
import { openAccount } from '../helpers/accounts.js';

/**
 * The console driven as a person would, in headless Chromium against a real sandbox. One test
 * per feature, each on its own page and signed in anew, so features can be added one by one.
 */
let sandbox: TestSandbox;
let chromium: TestBrowser;
const receiver = receiversClosedAfterEach();

beforeAll(async () => {
  [sandbox, chromium] = await Promise.all([startSandbox({ instructionDelayMs: 60_000 }), launchChromium()]);
}, APT_INSTALL_TIMEOUT_MS);
afterAll(async () => {
  await chromium?.close();
  await sandbox?.stop();
});

async function signedIn(width: number = WIDTHS.desktop, hash = '', secretKey = sandbox.config.secretKey): Promise<Page> {
  const page = await chromium.context.newPage();
  // A wait that never ends fails naming its locator, well before the test's own timeout.
  page.setDefaultTimeout(15_000);
  await page.setViewportSize({ width, height: 860 });
  await page.goto(`${sandbox.url}/_sandbox/${hash}`);
  await page.getByLabel('Secret key').fill(secretKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#live.on').waitFor();
  return page;
}

/** The JSON a `pre` of the console shows. */
async function shownJson(locator: Locator): Promise<unknown> {
  await locator.waitFor();
  return JSON.parse((await locator.textContent()) ?? '');
}

/**
 * A client of an account of its own, for tests whose webhooks, retries or fault rules would
 * otherwise reach the tests after them through the shared default account.
 */
async function ownAccount(name: string): Promise<Client> {
  return (await openAccount(sandbox.client, { name })).client;
}

const overflow = (page: Page): Promise<number> => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

interface Rules {
  rules: { id: string; match: Record<string, unknown>; action: Record<string, unknown>; times?: number; fired: number }[];
}

// A fault rule left behind by a failed test would break the ones after it.
afterEach(async () => {
  await sandbox.client.delete('/_sandbox/faults');
});

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
        await delivery.getByText('Body, formatted').click();
        const body = delivery.getByLabel(/^Body of whd_/);
        await body.waitFor();
        expect(JSON.parse((await body.textContent()) ?? '')).toMatchObject({ event: 'cashin.paid', payload: { transaction_id: tx.id, external_id: 'order-pay-1' } });
        // The request exactly as the receiver got it: every header the sandbox set, the real
        // x-signature, and the body's bytes (what the signature signs).
        const [received] = await hook.waitForRequests(1);
        const shown = ((await delivery.getByLabel(/^Request of whd_/).textContent()) ?? '').split('\n');
        expect(shown[0]).toBe(`POST ${hook.url}`);
        for (const name of ['content-type', 'content-length', 'user-agent', 'x-signature', 'x-sandbox-delivery', 'x-sandbox-event', 'x-sandbox-attempt']) {
          expect(shown, name).toContain(`${name}: ${String(received!.headers[name])}`);
        }
        expect(shown.at(-1)).toBe(received!.rawBody);
        await screenshot(page, 'console-webhook-request-desktop');
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

  it("links a transaction's payer pages with their token, and the payer can pay from the linked page", async () => {
    const tx = await created(sandbox.client, hybridBody({ externalId: 'order-links-1' }));
    await sandbox.client.post(`/_sandbox/transactions/${tx.id}/fill`);
    for (const [name, width] of Object.entries(WIDTHS)) {
      const page = await signedIn(width, `#/transactions/${tx.id}`);
      const links = page.locator('p.links a');
      await page.getByRole('link', { name: 'Pix payer page' }).waitFor();
      const hrefs = await links.evaluateAll((as) => as.map((a) => [a.textContent, (a as HTMLAnchorElement).href]));
      expect(hrefs.map(([text]) => text)).toEqual(['Pix payer page', 'Boleto page']);
      for (const [, href] of hrefs) expect(href).toMatch(new RegExp(`/_sandbox/(pix|boletos)/${tx.id}\\?token=[A-Za-z0-9_-]{24}$`));
      const qr = page.getByRole('img', { name: 'Pix QR code' });
      expect(await qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
      expect(await overflow(page), name).toBeLessThanOrEqual(0);
      await screenshot(page, `console-payer-links-${name}`);
      if (name === 'phone') {
        // The link names the public URL (localhost); the payer opens it and pays.
        const pix = new URL(String(hrefs[0]?.[1]));
        const payer = await chromium.context.newPage();
        await payer.goto(`${sandbox.url}${pix.pathname}${pix.search}`);
        await payer.getByRole('button', { name: /Pagar no sandbox/ }).click();
        await payer.getByText('Pronto: pagamento aprovado.').waitFor();
        await payer.close();
        await page.locator('h1 .badge', { hasText: 'APPROVED' }).waitFor();
      }
      await page.close();
    }
  });

  it("lists transactions with each row's id, amount and status in view at phone width, and says why one is BLOCKED", async () => {
    const cop = await created(sandbox.client, copBody({ externalId: 'order-phone-cop-with-a-long-reference-1', amount: 123_456_789 }));
    const expired = await created(sandbox.client, pixBody({ externalId: 'order-phone-expired' }));
    expect((await sandbox.client.post(`/_sandbox/transactions/${expired.id}/expire`)).status).toBe(200);
    for (const [name, width] of Object.entries(WIDTHS)) {
      const page = await signedIn(width);
      await page.locator(`tr[data-transaction="${expired.id}"]`).waitFor();
      expect(await overflow(page)).toBeLessThanOrEqual(0);
      // Nothing of the list scrolls sideways either, inside its box.
      expect(await page.locator('.scroll').first().evaluate((el) => el.scrollWidth - el.clientWidth)).toBeLessThanOrEqual(0);
      for (const tx of [cop, expired]) {
        const row = page.locator(`tr[data-transaction="${tx.id}"]`);
        for (const part of [row.getByRole('link', { name: tx.id }), row.locator('.cell-amount'), row.locator('.badge')]) {
          const box = await part.boundingBox();
          expect(box, `${name}: ${tx.id}`).not.toBeNull();
          expect(box!.x, `${name}: ${tx.id} starts in view`).toBeGreaterThanOrEqual(0);
          expect(box!.x + box!.width, `${name}: ${tx.id} ends in view`).toBeLessThanOrEqual(width);
        }
      }
      expect(await page.locator(`tr[data-transaction="${cop.id}"] .cell-amount`).textContent()).toBe('$ 1.234.567,89 COP');
      expect(await page.locator(`tr[data-transaction="${expired.id}"] .cell-status`).textContent()).toBe('BLOCKED expired');
      expect(await page.getByLabel('Value').getAttribute('placeholder')).toMatch(/\b\d{9}\b/);
      await screenshot(page, `console-transactions-${name}`);
      await page.close();
    }
  });

  it("the header ticks on the account's clock and says which account is signed in", async () => {
    const page = await signedIn(WIDTHS.phone);
    const header = page.locator('#header-clock');
    await expect.poll(() => header.textContent()).toMatch(/^Clock \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    const first = await header.getAttribute('datetime');
    await expect.poll(async () => Date.parse((await header.getAttribute('datetime')) ?? '') - Date.parse(first ?? ''), { timeout: 5000 }).toBeGreaterThanOrEqual(1000);
    expect(await page.locator('#header-account').textContent()).toBe(`Signed in as ${sandbox.running.sandbox.defaultAccount.name} (acc_default)`);
    // Advanced from the Clock view: the header jumps with it, and goes on ticking from there.
    await page.getByRole('link', { name: 'Clock' }).click();
    const offset = async () => (await sandbox.client.get<{ offsetMs: number }>('/_sandbox/clock')).body.offsetMs;
    const before = await offset();
    await page.getByRole('button', { name: '+30 days' }).click();
    // The click only starts the advance: read the clock once the sandbox has applied it.
    await expect.poll(offset, { timeout: 10_000 }).toBeGreaterThanOrEqual(before + 30 * 86_400_000);
    const now = (await sandbox.client.get<{ now: string }>('/_sandbox/clock')).body.now;
    await expect.poll(async () => Math.abs(Date.parse((await header.getAttribute('datetime')) ?? '') - Date.parse(now)), { timeout: 5000 }).toBeLessThan(5000);
    await screenshot(page, 'console-header-phone');
    await page.close();
  });

  it('takes a toast away when the view changes', async () => {
    const page = await signedIn(WIDTHS.desktop);
    await page.getByLabel('Value').fill('999999999');
    await page.getByRole('button', { name: 'Find' }).click();
    const toast = page.locator('#toast');
    await toast.filter({ hasText: 'Search failed: 404 Transaction not found' }).waitFor();
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Webhook deliveries' }).waitFor();
    expect(await toast.isHidden()).toBe(true);
    await page.close();
  });

  it('offers Fill instruction only while the instruction is missing, and reads an attempt\'s failure once', async () => {
    const own = await ownAccount('console-fill');
    const hook = await receiver(500);
    const pix = await created(own, pixBody({ postbackUrl: hook.url }));
    const cop = await created(own, copBody());
    const page = await signedIn(WIDTHS.desktop, `#/transactions/${pix.id}`, own.secretKey);
    await page.getByRole('heading', { name: `Transaction ${pix.id}` }).waitFor();
    // A plain Pix has its code from the 201 on: nothing to fill.
    expect(await page.getByRole('button', { name: 'Fill instruction' }).isDisabled()).toBe(true);
    await page.goto(`${sandbox.url}/_sandbox/#/transactions/${cop.id}`);
    await page.getByRole('heading', { name: `Transaction ${cop.id}` }).waitFor();
    const fill = page.getByRole('button', { name: 'Fill instruction' });
    expect(await fill.isEnabled()).toBe(true);
    await fill.click();
    await page.getByText('Checkout page').waitFor();
    await expect.poll(() => fill.isDisabled()).toBe(true);

    // Only the hash changes: wait for the Pix view, or Pay would pay the COP charge still shown.
    await page.goto(`${sandbox.url}/_sandbox/#/transactions/${pix.id}`);
    await page.getByRole('heading', { name: `Transaction ${pix.id}` }).waitFor();
    await page.getByRole('button', { name: 'Pay', exact: true }).click();
    const attempt = page.locator('.attempts tbody tr').first();
    await attempt.waitFor();
    expect(await attempt.locator('td').nth(2).textContent()).toBe('HTTP 500');
    await page.close();
  });

  it('has an icon, so the browser asks the sandbox for no /favicon.ico', async () => {
    const page = await chromium.context.newPage();
    const asked: string[] = [];
    page.on('request', (request) => asked.push(new URL(request.url()).pathname));
    await page.goto(`${sandbox.url}/_sandbox/`);
    await page.getByLabel('Secret key').waitFor();
    expect(await page.locator('link[rel="icon"]').getAttribute('href')).toMatch(/^data:image\/svg\+xml,/);
    await page.goto(`${sandbox.url}/_sandbox/docs`);
    await page.locator('#swagger-ui').waitFor();
    expect(asked.filter((p) => p.includes('favicon'))).toEqual([]);
    await page.close();
  });

  it('creates a purchase from the New purchase form, at phone and desktop width', async () => {
    for (const [name, width] of Object.entries(WIDTHS)) {
      const page = await signedIn(width);
      await page.getByRole('link', { name: 'New purchase' }).click();
      await page.getByRole('heading', { name: 'New purchase' }).waitFor();
      expect(await overflow(page)).toBeLessThanOrEqual(0);
      if (name === 'desktop') {
        // Colombia: the form switches to COP's methods and test data.
        await page.getByLabel('Currency').selectOption('COP');
        await page.getByLabel('Method', { exact: true }).selectOption('PSE');
        await page.getByLabel('External id', { exact: true }).fill('order-console-cop');
        await screenshot(page, 'console-new-purchase-desktop');
        await page.getByRole('button', { name: 'Create purchase' }).click();
      } else {
        // A declined test card, typed with spaces as printed.
        await page.getByLabel('Method', { exact: true }).selectOption('CREDIT_CARD');
        await page.getByLabel('Test card').selectOption('4000 0000 0000 0002');
        await page.getByLabel('External id', { exact: true }).fill('order-console-card');
        await screenshot(page, 'console-new-purchase-phone');
        await page.getByRole('button', { name: 'Create purchase' }).click();
      }
      const heading = page.getByRole('heading', { name: /^Transaction \d+/ });
      await heading.waitFor();
      const id = /Transaction (\d+)/.exec((await heading.textContent()) ?? '')?.[1] ?? '';
      const tx = (await sandbox.client.get<Record<string, unknown>>(`/transactions/${id}`)).body;
      if (name === 'desktop') expect(tx).toMatchObject({ currency: 'COP', method: 'PSE', amount: 1_500_000, status: 'PENDING', externalId: 'order-console-cop' });
      else expect(tx).toMatchObject({ currency: 'BRL', method: 'CREDIT_CARD', status: 'BLOCKED', statusReason: 'DECLINED', declineReason: 'card_declined', externalId: 'order-console-card' });
      await page.close();
    }
  });

  it('creates an MXN purchase from the New purchase form: SPEI only, a Mexican payer, the CLABE, nothing to fill', async () => {
    const own = await ownAccount('Tienda MX console');
    for (const [name, width] of Object.entries(WIDTHS)) {
      const page = await signedIn(width, '#/transactions/new', own.secretKey);
      await page.getByRole('heading', { name: 'New purchase' }).waitFor();
      await page.getByLabel('Currency').selectOption('MXN');
      const method = page.getByLabel('Method', { exact: true });
      expect(await method.locator('option').allTextContents()).toEqual(['SPEI']);
      // The Brazilian test data gives way to a Mexican payer; no CPF field, the RFC explained.
      expect(await page.getByLabel('Name').inputValue()).toBe('Sofía Hernández');
      expect(await page.getByLabel('Phone').inputValue()).toBe('+525512345678');
      expect(await page.getByLabel('Responsible document').inputValue()).toBe('XAXX010101000');
      expect(await page.locator('#np-document-hint').textContent()).toBe("the merchant's RFC (12 or 13 characters) or CPF/CNPJ");
      expect(await page.getByLabel('CPF or CNPJ of the payer').isVisible()).toBe(false);
      const sent = JSON.parse(((await page.getByLabel('Request sent').textContent()) ?? '').replace(/^POST \/transactions\/v2\/purchase\n\n/, '')) as Record<string, unknown>;
      expect(sent).toMatchObject({ currency: 'MXN', paymentMethod: 'SPEI', amount: 25_000, name: 'Sofía Hernández', phone: '+525512345678', responsibleDocument: 'XAXX010101000' });
      expect(sent).not.toHaveProperty('cpf');
      await page.getByLabel('External id', { exact: true }).fill(`order-console-mxn-${name}`);
      expect(await overflow(page)).toBeLessThanOrEqual(0);
      await screenshot(page, `console-new-purchase-mxn-${name}`);
      await page.getByRole('button', { name: 'Create purchase' }).click();
      const heading = page.getByRole('heading', { name: /^Transaction \d+/ });
      await heading.waitFor();
      const id = /Transaction (\d+)/.exec((await heading.textContent()) ?? '')?.[1] ?? '';
      const tx = (await own.get<Record<string, unknown>>(`/transactions/${id}`)).body;
      expect(tx).toMatchObject({ currency: 'MXN', method: 'SPEI', amount: 25_000, status: 'PENDING', externalId: `order-console-mxn-${name}` });
      expect(tx.clabe).toMatch(/^646180\d{12}$/);
      await page.locator('dd span.mono', { hasText: String(tx.clabe) }).waitFor();
      await page.getByRole('link', { name: 'SPEI payer page' }).waitFor();
      // The CLABE comes with the 201: Fill instruction has nothing to do; Pay does.
      expect(await page.getByRole('button', { name: 'Fill instruction' }).isDisabled()).toBe(true);
      expect(await overflow(page)).toBeLessThanOrEqual(0);
      await screenshot(page, `console-mxn-transaction-${name}`);
      if (name === 'desktop') {
        await page.getByRole('button', { name: 'Pay', exact: true }).click();
        await page.locator('h1 .badge', { hasText: 'APPROVED' }).waitFor();
        expect((await own.get<Record<string, unknown>>(`/transactions/${id}`)).body).toMatchObject({ status: 'APPROVED' });
      }
      await page.close();
    }
  });

  it('says beside the form what the sandbox refused, and keeps the form', async () => {
    const page = await signedIn(WIDTHS.desktop, '#/transactions/new');
    await page.getByLabel('Amount').fill('0.00');
    await page.getByRole('button', { name: 'Create purchase' }).click();
    await page.locator('#np-error', { hasText: 'The sandbox refused it: 400 Sale value below minimum' }).waitFor();
    expect(await page.getByLabel('Amount').inputValue()).toBe('0.00');
    await page.close();
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
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.locator('#account-webhook-url', { hasText: 'http://127.0.0.1:9/console-hook' }).waitFor();
    await page.getByRole('button', { name: 'Show' }).click();
    await page.locator('#webhook-secret').filter({ hasText: sandbox.running.sandbox.defaultAccount.webhookSecret }).waitFor();
    await screenshot(page, 'console-account-phone');
    await page.close();
  });

  it('finds a 400 in the request log with its hint and both bodies', async () => {
    const bad = await sandbox.client.post<{ message: string }>('/transactions/v2/purchase', pixBody({ externalId: 'order-bad-1', amount: 10_000_000_000 }));
    expect(bad.status).toBe(400);
    const hint = bad.headers.get('x-sandbox-hint');
    expect(hint).toBeTruthy();
    const traceId = bad.headers.get('x-trace-id');
    for (const [name, width] of Object.entries(WIDTHS)) {
      const page = await signedIn(width);
      await page.getByRole('link', { name: 'Requests' }).click();
      await page.getByRole('heading', { name: 'Request log' }).waitFor();
      await page.getByLabel('Status').fill('4xx');
      await page.getByRole('button', { name: 'Apply' }).click();
      const entry = page.locator(`details.request[data-trace="${traceId}"]`);
      await entry.waitFor();
      expect(await entry.locator('summary').first().textContent()).toMatch(/^400 POST \/transactions\/v2\/purchase/);
      await entry.locator('summary').first().click();
      await entry.locator('.hint', { hasText: hint ?? '' }).waitFor();
      expect(await shownJson(entry.getByLabel('Request body'))).toMatchObject({ externalId: 'order-bad-1', amount: 10_000_000_000 });
      expect(await shownJson(entry.getByLabel('Response body'))).toEqual(bad.body);
      expect(await overflow(page)).toBeLessThanOrEqual(0);
      await screenshot(page, `console-requests-${name}`);
      await page.close();
    }
  });

  it('hides the console\'s own calls from the request log until asked, and labels them', async () => {
    const page = await signedIn(WIDTHS.desktop, '#/requests');
    await page.getByRole('heading', { name: 'Request log' }).waitFor();
    // Signing in read the clock with the console's key: recorded, but not shown by default.
    const own = page.locator('details.request', { has: page.locator('.tag', { hasText: 'console' }) });
    await page.locator('details.request, #view .empty').first().waitFor();
    expect(await own.count()).toBe(0);
    await page.getByLabel('Include the console\'s own calls').check();
    await own.first().waitFor();
    await own.first().locator('summary').first().click();
    await own.first().getByText('Request headers').click();
    expect(await shownJson(own.first().getByLabel('Request headers'))).toMatchObject({ 'x-sandbox-client': 'console' });
    await page.close();
  });

  it('refunds and charges back a paid transaction, and declines a pending one with its reason', async () => {
    const [paid, disputed, declined] = (await Promise.all(['order-refund-1', 'order-cb-1', 'order-decline-1'].map((externalId) => created(sandbox.client, pixBody({ externalId }))))) as [Transaction, Transaction, Transaction];
    for (const tx of [paid, disputed]) expect((await sandbox.client.post(`/_sandbox/transactions/${tx.id}/pay`)).status).toBe(200);
    const act = async (id: string, button: string, note?: string): Promise<Page> => {
      const page = await signedIn(WIDTHS.desktop, `#/transactions/${id}`);
      await page.getByRole('heading', { name: `Transaction ${id}` }).waitFor();
      if (note) await page.getByLabel(/Decline message/).fill(note);
      await page.getByRole('button', { name: button, exact: true }).click();
      return page;
    };
    let page = await act(paid.id, 'Refund');
    await page.locator('h1 .badge', { hasText: 'REFUNDED' }).waitFor();
    expect(await page.getByRole('button', { name: 'Chargeback' }).isDisabled()).toBe(true);
    await page.close();

    page = await act(disputed.id, 'Chargeback', 'Pix MED: fraud reported');
    await page.locator('h1 .badge', { hasText: 'CHARGEBACK' }).waitFor();
    await page.locator('li[data-event]', { hasText: 'chargeback' }).first().waitFor();
    await page.close();

    page = await act(declined.id, 'Decline', 'Card refused by issuer');
    await page.locator('h1 .badge', { hasText: 'BLOCKED' }).waitFor();
    await page.locator('h1', { hasText: 'DECLINED' }).waitFor();
    await screenshot(page, 'console-declined-desktop');
    await page.close();

    const statuses = await Promise.all([paid, disputed, declined].map(async (tx) => (await sandbox.client.get<{ status: string; statusReason: string | null }>(`/transactions/${tx.id}`)).body));
    expect(statuses.map((t) => [t.status, t.statusReason])).toEqual([['REFUNDED', 'REFUNDED'], ['CHARGEBACK', 'CHARGEBACK'], ['BLOCKED', 'DECLINED']]);
  });

  it('shows fault rules, adds them with the form and deletes them', async () => {
    const own = await ownAccount('console-faults');
    const faults = async (): Promise<Rules['rules']> => (await own.get<Rules>('/_sandbox/faults')).body.rules;
    for (const [name, width] of Object.entries(WIDTHS)) {
      await own.put('/_sandbox/faults', { rules: [{ id: 'kept', match: { operation: 'listProducts' }, action: { latencyMs: 1 } }] });
      const page = await signedIn(width, '', own.secretKey);
      await page.getByRole('link', { name: 'Faults' }).click();
      await page.getByRole('heading', { name: 'Fault rules', exact: true }).waitFor();
      await page.locator('article.fault-rule[data-rule="kept"]', { hasText: 'wait 1 ms' }).waitFor();

      await page.getByLabel('Operation').fill('createOffer');
      await page.getByLabel('Action').selectOption('status');
      await page.getByLabel('Status').selectOption('502');
      await page.getByLabel('Times').fill('1');
      await page.getByLabel('Rule id').fill('offers-502');
      await page.getByRole('button', { name: 'Add rule' }).click();
      await page.locator('article.fault-rule[data-rule="offers-502"]', { hasText: 'answer 502' }).waitFor();

      // A webhook rule: the form swaps method and path for the event, and offers webhook actions.
      await page.getByLabel('Operation').fill('webhook');
      await page.getByLabel('Event').fill('cashin.paid');
      await page.getByLabel('Action').selectOption('duplicate');
      await page.getByLabel('Extra copies').fill('2');
      await page.getByRole('button', { name: 'Add rule' }).click();
      await page.locator('article.fault-rule', { hasText: 'send 2 extra copies' }).waitFor();
      expect(await faults()).toEqual([
        { id: 'kept', match: { operation: 'listProducts' }, action: { latencyMs: 1 }, fired: 0 },
        { id: 'offers-502', match: { operation: 'createOffer' }, action: { status: 502 }, times: 1, fired: 0 },
        { id: 'rule-3', match: { operation: 'webhook', event: 'cashin.paid' }, action: { duplicate: 2 }, fired: 0 },
      ]);
      expect(await overflow(page)).toBeLessThanOrEqual(0);
      await screenshot(page, `console-faults-${name}`);

      await page.getByRole('button', { name: 'Delete rule offers-502' }).click();
      await page.locator('article.fault-rule[data-rule="offers-502"]').waitFor({ state: 'detached' });
      expect((await faults()).map((r) => r.id)).toEqual(['kept', 'rule-3']);
      await page.getByRole('button', { name: 'Clear all' }).click();
      await page.getByText('No fault rules: the sandbox behaves.').waitFor();
      expect(await faults()).toEqual([]);
      // Nothing left to clear.
      expect(await page.getByRole('button', { name: 'Clear all' }).isDisabled()).toBe(true);
      await page.close();
    }
  });

  it('shows the catalog and adds a product', async () => {
    const page = await signedIn(WIDTHS.desktop, '#/catalog');
    await page.getByLabel('New product name').fill('Plano console');
    await page.getByRole('button', { name: 'Create product' }).click();
    await page.getByRole('heading', { name: 'Plano console' }).waitFor();
    await page.close();
  });
});
