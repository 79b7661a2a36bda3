import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { createAccount } from '../helpers/catalog.js';
import { created } from '../helpers/purchases.js';
import { type Client, type TestSandbox } from '../helpers/sandbox.js';
import { receiversClosedAfterEach } from '../helpers/webhooks.js';
import { balanceOf, cashedOut, cashOutBody, collect, fund, MAGIC } from '../helpers/withdrawals.js';
import { brokenWords, sandboxAndChromium, screenshot, signedInPage, type TestBrowser, WIDTHS } from './chromium.js';

/**
 * The console's Payouts view and the MXN payer page, driven as a person would in headless
 * Chromium at phone and desktop widths, with screenshots under test-artifacts/.
 */
let sandbox: TestSandbox;
let chromium: TestBrowser;
const receiver = receiversClosedAfterEach();

// Withdrawals stay where the test puts them: their automatic steps are an hour away.
sandboxAndChromium({ withdrawalStepMs: 3_600_000 }, (started, browser) => {
  sandbox = started;
  chromium = browser;
});

const signedIn = (key: string, width: number, hash: string): Promise<Page> => signedInPage(chromium, sandbox.url, key, width, hash);

const overflow = (page: Page): Promise<number> => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

/**
 * The console's layout: no word split mid-way, nothing to scroll sideways. On a phone a long
 * id (marked `.id`) may break, only where it cannot fit; on a desktop nothing breaks.
 */
async function expectLayout(page: Page, width: number): Promise<void> {
  const where = `${page.url().split('#')[1] ?? ''} at ${width} px`;
  expect(await brokenWords(page, 'main', width < 640 ? '.id' : undefined), `words broken mid-way: ${where}`).toEqual([]);
  expect(await overflow(page), `horizontal overflow: ${where}`).toBeLessThanOrEqual(0);
}

async function account(): Promise<{ key: string; client: Client }> {
  const { account: a, client } = await createAccount(sandbox, undefined, { name: 'Loja Console' });
  return { key: a.secretKey, client };
}

describe('console: payouts', () => {
  it('shows the balance, credits it with the form, and lists a cash-out as it happens', async () => {
    const { key, client } = await account();
    for (const [name, width] of Object.entries(WIDTHS)) {
      const page = await signedIn(key, width, '#/withdrawals');
      await page.getByRole('heading', { name: 'Payouts' }).waitFor();
      if (name === 'desktop') {
        await page.getByLabel('Credit (centavos)').fill('100000');
        await page.getByRole('button', { name: 'Credit', exact: true }).click();
        await page.locator('[data-figure="balance"]', { hasText: 'R$ 1.000,00' }).waitFor();
        expect((await balanceOf(client)).balance).toBe(100_000);
        const w = await cashedOut(client, cashOutBody({ amount: 25_000, externalId: 'seller-console-1' }));
        const row = page.locator(`tr[data-withdrawal="${w.id}"]`);
        await row.waitFor();
        expect(await row.textContent()).toContain('seller-console-1');
        expect(await row.textContent()).toContain('WITHDRAW_REQUEST');
        await page.locator('[data-figure="balance"]', { hasText: 'R$ 749,00' }).waitFor();
        await page.locator('tr[data-ledger="cashout_hold"]').waitFor();
        // A long reference without spaces: an id, which alone may break, and only where it cannot fit.
        const long = await cashedOut(client, cashOutBody({ amount: 1_000, externalId: 'repasse_semanal_loja_centro_2026_000042' }));
        await page.locator(`tr[data-withdrawal="${long.id}"]`).waitFor();
      } else {
        await page.locator('tr[data-withdrawal]').first().waitFor();
        expect(await overflow(page)).toBeLessThanOrEqual(0);
      }
      await expectLayout(page, width);
      await screenshot(page, `console-payouts-${name}`);
      await page.close();
    }
  });

  it('a withdrawal detail rejects it with a message, then shows the cashout.failed delivery and the timeline', async () => {
    const { key, client } = await account();
    const hook = await receiver(200);
    await fund(client, 50_000);
    const w = await cashedOut(client, cashOutBody({ amount: 10_000, postbackUrl: hook.url, pixType: 'CPF', pixKey: MAGIC.return.CPF }));
    for (const [name, width] of Object.entries(WIDTHS)) {
      const page = await signedIn(key, width, `#/withdrawals/${w.id}`);
      await page.getByRole('heading', { name: /^Withdrawal/ }).waitFor();
      if (name === 'desktop') {
        expect(await page.getByRole('button', { name: 'Return' }).isDisabled()).toBe(true);
        await page.getByLabel('Message for reject / fail / return (optional)').fill('Conta destino encerrada');
        await page.getByRole('button', { name: 'Reject' }).click();
        await page.locator('h1 .badge', { hasText: 'WITHDRAW_REJECTED' }).waitFor();
        expect(await collect(client, w.id)).toMatchObject({ status: 'WITHDRAW_REJECTED', errorMessage: 'Conta destino encerrada' });
        const delivery = page.locator('article.delivery', { has: page.locator('.badge', { hasText: 'delivered' }) });
        await delivery.waitFor();
        expect(await delivery.textContent()).toContain('cashout.failed');
        await page.locator('li[data-event="withdrawal.rejected"]').waitFor();
        for (const action of ['Approve (paid out)', 'Reject', 'Fail', 'Return']) expect(await page.getByRole('button', { name: action }).isDisabled()).toBe(true);
        expect(hook.requests).toHaveLength(1);
      } else {
        await page.locator('h1 .badge', { hasText: 'WITHDRAW_REJECTED' }).waitFor();
        expect(await overflow(page)).toBeLessThanOrEqual(0);
      }
      await expectLayout(page, width);
      await screenshot(page, `console-withdrawal-${name}`);
      await page.close();
    }
  });

  it('an MXN transaction shows its CLABE and links its SPEI page, which a payer can approve', async () => {
    const { key, client } = await account();
    const tx = await created(client, {
      name: 'Sofía Hernández',
      email: 'sofia@example.com',
      amount: 125_050,
      currency: 'MXN',
      description: 'Pedido 55',
      responsibleDocument: 'XAXX010101000',
      responsibleExternalId: 'mx-1',
    });
    const page = await signedIn(key, WIDTHS.desktop, `#/transactions/${tx.id}`);
    await page.locator('dd span.mono', { hasText: String(tx.clabe) }).waitFor();
    const link = page.getByRole('link', { name: 'SPEI payer page' });
    // The link carries the charge's payer token: without it the page is a 404.
    const href = String(await link.getAttribute('href'));
    expect(href).toMatch(new RegExp(`/_sandbox/spei/${tx.id}\\?token=[A-Za-z0-9_-]{24}$`));
    const spei = new URL(href);
    await page.close();

    // Phone first: the desktop visit pays, and a paid charge no longer shows its CLABE.
    for (const [name, width] of [['phone', WIDTHS.phone], ['desktop', WIDTHS.desktop]] as const) {
      const payer = await chromium.context.newPage();
      await payer.setViewportSize({ width, height: 860 });
      await payer.goto(`${sandbox.url}${spei.pathname}${spei.search}`);
      await payer.getByText('$1,250.50 MXN').first().waitFor();
      expect(await payer.getByText(/^646 180 \d{11} \d$/).count()).toBe(1);
      expect(await overflow(payer)).toBeLessThanOrEqual(0);
      await screenshot(payer, `spei-page-${name}`);
      if (name === 'desktop') {
        await payer.getByRole('button', { name: /Simular transferencia/ }).click();
        await payer.getByText('Transferencia recibida').waitFor();
        await screenshot(payer, 'spei-page-paid-desktop');
      }
      await payer.close();
    }
  });
});
