import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectTransactionError } from '../helpers/catalog.js';
import { localPath, payerPages } from '../helpers/payer-pages.js';
import { boletoBody, copBody, created, hybridBody, lookup, pixBody } from '../helpers/purchases.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';

/** The payer pages' buttons and errors over real HTTP, as a form post and as an API client, with the links' tokens. */
let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.stop();
});

const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

function post(link: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(new URL(localPath(link), sandbox.url), { method: 'POST', redirect: 'manual', headers });
}

describe('payer page buttons', () => {
  it('Pix: pay by the PIX rail, reject to BLOCKED, each back to the page with the outcome', async () => {
    const hybrid = await created(sandbox.client, hybridBody());
    const hybridPix = (await payerPages(sandbox.client, hybrid.id)).pix!;
    const paid = await post(hybridPix.approveUrl, BROWSER);
    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toBe(`${localPath(hybridPix.url)}&result=approved`);
    expect(await lookup(sandbox.client, hybrid.id)).toMatchObject({ status: 'APPROVED', paidRail: 'PIX' });
    const pix = await created(sandbox.client, pixBody());
    const pixPage = (await payerPages(sandbox.client, pix.id)).pix!;
    expect((await post(pixPage.rejectUrl)).headers.get('location')).toBe(`${localPath(pixPage.url)}&result=rejected`);
    expect((await lookup(sandbox.client, pix.id)).status).toBe('BLOCKED');
  });

  it('boleto: pay by the BOLETO rail', async () => {
    const boleto = await created(sandbox.client, boletoBody());
    expect((await post((await payerPages(sandbox.client, boleto.id)).boleto!.approveUrl)).status).toBe(303);
    expect(await lookup(sandbox.client, boleto.id)).toMatchObject({ status: 'APPROVED', paidRail: 'BOLETO' });
  });

  it('a second click is a 409: a page for a browser, the JSON error for an API client', async () => {
    const pix = await created(sandbox.client, pixBody());
    const page = (await payerPages(sandbox.client, pix.id)).pix!;
    await post(page.approveUrl);
    const again = await post(page.rejectUrl, BROWSER);
    expect(again.status).toBe(409);
    expect(again.headers.get('content-type')).toMatch(/^text\/html/);
    const text = await again.text();
    expect(text).toContain('Esta cobrança já foi encerrada');
    // The person sees why (the hint), not only the short message a client matches.
    expect(text).toMatch(new RegExp(`transaction ${pix.id} is APPROVED \\(paid by PIX\\); only a PENDING transaction can be declined`));
    expectTransactionError(await sandbox.clientFor(undefined).post(localPath(page.rejectUrl)), 409);
  });

  it('pages and buttons of the wrong kind are 404 and change nothing, the token notwithstanding', async () => {
    const cop = await created(sandbox.client, copBody());
    const boleto = await created(sandbox.client, boletoBody());
    const copToken = new URL((await payerPages(sandbox.client, cop.id)).checkout!.url).search;
    const boletoToken = new URL((await payerPages(sandbox.client, boleto.id)).boleto!.url).search;
    const anonymous = sandbox.clientFor(undefined);
    expectTransactionError(await anonymous.get(`/_sandbox/pix/${cop.id}${copToken}`), 404, /has no Pix/);
    expectTransactionError(await anonymous.get(`/_sandbox/pix/${boleto.id}${boletoToken}`), 404, /has no Pix/);
    expectTransactionError(await anonymous.post(`/_sandbox/pix/${boleto.id}/approve${boletoToken}`), 404, /has no Pix/);
    expectTransactionError(await anonymous.post(`/_sandbox/boletos/${cop.id}/approve${copToken}`), 404, /has no boleto/);
    const page = await fetch(new URL(`/_sandbox/checkout/${boleto.id}${boletoToken}`, sandbox.url), { headers: BROWSER });
    expect(page.status).toBe(404);
    expect(await page.text()).toContain(`transaction ${boleto.id} has no checkout page (only COP does)`);
    expect((await lookup(sandbox.client, cop.id)).status).toBe('PENDING');
    expect((await lookup(sandbox.client, boleto.id)).status).toBe('PENDING');
  });

  it("says 404 in the payer's language: Spanish on the Colombian checkout, Portuguese on the Brazilian pages", async () => {
    const checkout = await fetch(new URL('/_sandbox/checkout/999999999', sandbox.url), { headers: BROWSER });
    expect(checkout.status).toBe(404);
    const es = await checkout.text();
    expect(es).toContain('<html lang="es">');
    expect(es).toContain('<h1>Página no encontrada</h1>');
    expect(es).toContain('Revisa el enlace que te dio el comercio.');
    expect(es).not.toMatch(/não|Confira/);
    const boleto = await fetch(new URL('/_sandbox/boletos/999999999', sandbox.url), { headers: BROWSER });
    const pt = await boleto.text();
    expect(pt).toContain('<html lang="pt-BR">');
    expect(pt).toContain('<h1>Página não encontrada</h1>');
    expect(pt).toContain('Confira o link recebido do lojista.');
  });
});
