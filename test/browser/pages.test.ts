import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { boletoBody, copBody, created, hybridBody, lookup, pixBody } from '../helpers/purchases.js';
import { localPath, payerPages } from '../helpers/payer-pages.js';
import { type TestSandbox } from '../helpers/sandbox.js';
import { brokenWords, sandboxAndChromium, screenshot, type TestBrowser, WIDTHS } from './chromium.js';

/** The hosted payer pages in headless Chromium, at desktop and phone widths and printed. */
let sandbox: TestSandbox;
let chromium: TestBrowser;

sandboxAndChromium({ instructionDelayMs: 60_000 }, (started, browser) => {
  sandbox = started;
  chromium = browser;
});

/** A4 less the page's 10 mm margins, at CSS's 96 px per inch: the width print layout gets. */
const A4_PRINTABLE_PX = Math.floor(((210 - 20) / 25.4) * 96);

async function filled(body: Record<string, unknown>): Promise<string> {
  const tx = await created(sandbox.client, body);
  const res = await sandbox.client.post(`/_sandbox/transactions/${tx.id}/fill`);
  expect(res.status).toBe(200);
  return tx.id;
}

/** The path and query of a transaction's payer page link, with its token, as its owner is given it. */
async function pageOf(id: string, kind: 'checkout' | 'boleto' | 'pix'): Promise<string> {
  return localPath((await payerPages(sandbox.client, id))[kind]!.url);
}

async function open(path: string, width: number): Promise<Page> {
  const page = await chromium.context.newPage();
  await page.setViewportSize({ width, height: 900 });
  const res = await page.goto(`${sandbox.url}${path}`);
  expect(res?.status()).toBe(200);
  return page;
}

/** Nothing wider than the viewport: no sideways scrolling on a phone. */
async function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}

/** The element shows all of its content: what a payer must type is never cut off. */
async function clipping(page: Page, selector: string): Promise<{ scrollWidth: number; clientWidth: number; right: number; viewport: number }> {
  return page.locator(selector).evaluate((el) => ({
    scrollWidth: el.scrollWidth,
    clientWidth: el.clientWidth,
    right: Math.ceil(el.getBoundingClientRect().right),
    viewport: document.documentElement.clientWidth,
  }));
}

describe('boleto page', () => {
  it('shows the whole digitable line at 1280 and 390 px and when printed', async () => {
    const id = await filled(boletoBody());
    const line = (await lookup(sandbox.client, id)).paymentInstruction as { boletoDigitableLine: string };
    for (const [name, width] of Object.entries(WIDTHS)) {
      const page = await open(await pageOf(id, 'boleto'), width);
      const m = await clipping(page, '.slip .line');
      expect(m.scrollWidth, `${name}: ${JSON.stringify(m)}`).toBeLessThanOrEqual(m.clientWidth);
      expect(m.right, `${name}: ${JSON.stringify(m)}`).toBeLessThanOrEqual(m.viewport);
      expect((await page.locator('.slip .line').textContent())?.replace(/\D/g, '')).toBe(line.boletoDigitableLine);
      expect(await horizontalOverflow(page), name).toBeLessThanOrEqual(0);
      await screenshot(page, `boleto-${name}`);
      await page.close();
    }
    const page = await open(await pageOf(id, 'boleto'), A4_PRINTABLE_PX);
    await page.emulateMedia({ media: 'print' });
    const m = await clipping(page, '.slip .line');
    expect(m.scrollWidth, `print: ${JSON.stringify(m)}`).toBeLessThanOrEqual(m.clientWidth);
    expect(m.right, `print: ${JSON.stringify(m)}`).toBeLessThanOrEqual(m.viewport);
    expect(await page.locator('.payer-actions').isVisible()).toBe(false);
    await screenshot(page, 'boleto-print');
    await page.close();
  });

  it('pays with its Pay button and says so', async () => {
    const id = await filled(boletoBody());
    const page = await open(await pageOf(id, 'boleto'), WIDTHS.phone);
    await page.getByRole('button', { name: /Pagar boleto/ }).click();
    await page.getByText('Pronto: pagamento aprovado.').waitFor();
    await page.locator('.stamp', { hasText: 'Pago' }).waitFor();
    const tx = await lookup(sandbox.client, id);
    expect(tx.status).toBe('APPROVED');
    expect(tx.paidRail).toBe('BOLETO');
    await page.close();
  });

  it('rejects with its Reject button', async () => {
    const id = await filled(hybridBody());
    const page = await open(await pageOf(id, 'boleto'), WIDTHS.desktop);
    await page.getByRole('button', { name: /Recusar/ }).click();
    await page.getByText('Pronto: pagamento recusado.').waitFor();
    expect((await lookup(sandbox.client, id)).status).toBe('BLOCKED');
    await page.close();
  });
});

describe('Pix page', () => {
  it('shows the QR and the code, copies it, and pays', async () => {
    const id = await filled(pixBody());
    const code = (await lookup(sandbox.client, id)).pixCode as string;
    for (const [name, width] of Object.entries(WIDTHS)) {
      const page = await open(await pageOf(id, 'pix'), width);
      const qr = page.getByRole('img', { name: /QR Code Pix/ });
      await qr.waitFor();
      expect(await qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
      expect(await page.getByLabel(/Pix copia e cola/).inputValue()).toBe(code);
      expect(await horizontalOverflow(page), name).toBeLessThanOrEqual(0);
      await screenshot(page, `pix-${name}`);
      await page.close();
    }
    const page = await open(await pageOf(id, 'pix'), WIDTHS.phone);
    await page.getByRole('button', { name: /Copiar código/ }).click();
    await page.getByText('Código copiado.').waitFor();
    await page.getByRole('button', { name: /Pagar no sandbox/ }).click();
    await page.getByText('Pronto: pagamento aprovado.').waitFor();
    const tx = await lookup(sandbox.client, id);
    expect(tx.status).toBe('APPROVED');
    expect(tx.paidRail).toBe('PIX');
    await page.close();
  });
});

describe('COP checkout', () => {
  it('fits a 390 px phone for every method', async () => {
    for (const method of ['PSE', 'NEQUI', 'BREB', 'BANK_TRANSFER']) {
      const id = await filled(copBody({ paymentMethod: method }));
      const page = await open(await pageOf(id, 'checkout'), WIDTHS.phone);
      expect(await horizontalOverflow(page), method).toBeLessThanOrEqual(0);
      for (const button of await page.getByRole('button').all()) {
        const box = await button.boundingBox();
        expect(box && box.x >= 0 && box.x + box.width <= WIDTHS.phone, `${method} button inside the screen`).toBe(true);
      }
      if (method === 'PSE') await screenshot(page, 'checkout-pse-phone');
      await page.close();
    }
  });
});

describe('COP checkout words', () => {
  it('breaks no word mid-way at 390 and 1280 px (Bancolombia, ids, account numbers): reproduction of issue 22', async () => {
    for (const method of ['BANK_TRANSFER', 'BREB', 'NEQUI', 'PSE']) {
      const tx = await created(sandbox.client, copBody({ paymentMethod: method }));
      const filledTx = (await sandbox.client.post<{ redirectUrl: string }>(`/_sandbox/transactions/${tx.id}/fill`)).body;
      const link = new URL(filledTx.redirectUrl);
      for (const [name, width] of Object.entries(WIDTHS)) {
        const page = await open(`${link.pathname}${link.search}`, width);
        expect(await brokenWords(page, '.card'), `${method} at ${width} px`).toEqual([]);
        // What the payer types (account number, NIT, reference, Bre-B key) sits on one line, hyphens included.
        const wrapped = await page.locator('.facts dd.mono').evaluateAll((els) =>
          els
            .filter((el) => {
              const range = document.createRange();
              range.selectNodeContents(el);
              return new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top))).size > 1;
            })
            .map((el) => el.textContent),
        );
        expect(wrapped, `${method} at ${width} px`).toEqual([]);
        expect(await horizontalOverflow(page), `${method} at ${width} px`).toBeLessThanOrEqual(0);
        if (method === 'BANK_TRANSFER') await screenshot(page, `checkout-transfer-${name}`);
        await page.close();
      }
    }
  });
});

describe('framing', () => {
  it('a page of another origin cannot frame a payer page (CSP frame-ancestors none)', async () => {
    const id = await filled(pixBody());
    const page = await chromium.context.newPage();
    const blocked = new Promise<boolean>((resolve) => {
      page.on('console', (message) => {
        if (/frame-ancestors/.test(message.text())) resolve(true);
      });
      setTimeout(() => resolve(false), 5_000).unref();
    });
    await page.setContent(`<iframe id="f" src="${sandbox.url}${await pageOf(id, 'pix')}" width="390" height="600"></iframe>`);
    expect(await blocked).toBe(true);
    const frame = page.frames().find((f) => f !== page.mainFrame());
    expect(await frame?.locator('.card').count().catch(() => 0)).toBe(0);
    await page.close();
  });
});

describe('page routes', () => {
  it('answer a browser with an HTML 404 page, and API clients with the JSON error', async () => {
    const page = await chromium.context.newPage();
    const res = await page.goto(`${sandbox.url}/_sandbox/boletos/999999999999`);
    expect(res?.status()).toBe(404);
    expect(res?.headers()['content-type']).toMatch(/^text\/html/);
    await page.getByRole('heading', { name: 'Página não encontrada' }).waitFor();
    const cop = await created(sandbox.client, copBody());
    const copToken = new URL((await payerPages(sandbox.client, cop.id)).checkout!.url).search;
    expect((await page.goto(`${sandbox.url}/_sandbox/pix/${cop.id}${copToken}`))?.status()).toBe(404);
    await page.getByText(`transaction ${cop.id} has no Pix`).waitFor();
    await page.close();
    const api = await sandbox.clientFor(undefined).get('/_sandbox/boletos/999999999999');
    expect(api.status).toBe(404);
    // The API's exact message for an unknown transaction; the id is in the hint (contract v2).
    expect(api.body).toMatchObject({ statusCode: 404, message: 'Transaction not found' });
    expect(api.headers.get('x-sandbox-hint')).toContain('999999999999');
  });
});
