// MXN SPEI: the integration's own body, a CLABE in the 201 that an independent validator
// (clabe-validator) accepts, unique per charge, the same on lookup; limits, fee, payer page.
import { clabe } from 'clabe-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, expectTransactionError } from '../helpers/catalog.js';
import { control, created, lookup, mxnBody, purchase } from '../helpers/purchases.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';
import { localPath, payerPages, payerPost } from '../helpers/payer-pages.js';

let sb: TestSandbox;
let client: Client;
beforeAll(async () => {
  sb = await startSandbox({ instructionDelayMs: 600_000 });
  ({ client } = await createAccount(sb, undefined, { name: 'Tienda Mx' }));
});
afterAll(() => sb.stop());

describe('POST /transactions/v2/purchase in MXN (SPEI)', () => {
  it('answers 201 with a valid CLABE, the fee and the rest of the transaction', async () => {
    const tx = await created(client, mxnBody());
    expect(tx).toMatchObject({ currency: 'MXN', method: 'SPEI', status: 'PENDING', amount: 25_000, costFee: 700, externalId: 'mx-order-1', installments: null, expiresAt: null });
    const check = clabe.validate(String(tx.clabe));
    expect(check, JSON.stringify(check)).toMatchObject({ ok: true, error: null, tag: 'STP' });
    expect(tx.clabe).toMatch(/^646180\d{12}$/);
  });

  it('gives every charge its own CLABE, and the lookup (by id and by externalId) the same one', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const tx = await created(client, mxnBody({ externalId: `mx-unique-${i}`, ...(i % 2 ? { phone: '5512345678' } : {}) }));
      expect(clabe.validate(String(tx.clabe)).ok).toBe(true);
      seen.add(String(tx.clabe));
      expect((await lookup(client, tx.id)).clabe).toBe(tx.clabe);
      const byExternal = await client.get<{ clabe: string }>(`/transactions/mx-unique-${i}?searchBy=externalId`);
      expect(byExternal.body.clabe).toBe(tx.clabe);
    }
    expect(seen.size).toBe(20);
  });

  it('SPEI is the default method in MXN; an RFC works as the responsible document', async () => {
    const tx = await created(client, mxnBody({ paymentMethod: undefined, responsibleDocument: 'XAXX010101000' }));
    expect(tx.method).toBe('SPEI');
  });

  it('takes a phone with the country code, +52 and 10 digits, as COP takes +57 (or the bare 8 to 12 digits)', async () => {
    for (const phone of ['+525512345678', '5512345678', '525512345678']) {
      expect((await created(client, mxnBody({ externalId: `mx-phone-${phone}`, phone }))).currency, phone).toBe('MXN');
    }
  });

  it.each([
    [mxnBody({ amount: 999 }), /^Sale value below minimum$/],
    [mxnBody({ amount: 100_000_001 }), /^Sale value exceeds maximum$/],
    [mxnBody({ paymentMethod: 'PIX' }), /paymentMethod must be SPEI in MXN/],
    [mxnBody({ phone: '+52 55 1234 5678' }), /^phone must be 8 to 12 digits, or \+52 and 10 digits, in MXN$/],
    [mxnBody({ phone: '+5255123456' }), /^phone must be 8 to 12 digits, or \+52 and 10 digits, in MXN$/],
    [mxnBody({ phone: '+575512345678' }), /^phone must be 8 to 12 digits, or \+52 and 10 digits, in MXN$/],
    [mxnBody({ responsibleDocument: 'ABC' }), /responsibleDocument must be the merchant's RFC/],
    [mxnBody({ currency: 'BRL' }), /is required in BRL/],
  ])('refuses %j: 400', async (body, message) => {
    expectTransactionError(await purchase(client, body), 400, message);
  });

  it('is paid through the control API and the payer page; cashin.paid follows as for any charge', async () => {
    const tx = await created(client, mxnBody({ externalId: 'mx-paid' }));
    const paid = await control(client, tx.id, 'pay');
    expect(paid.body).toMatchObject({ status: 'APPROVED', clabe: tx.clabe });
    const page = await created(client, mxnBody({ externalId: 'mx-page' }));
    const links = await payerPages(client, page.id);
    expect(links.spei).not.toBeNull();
    const spei = links.spei!;
    // The link is the payer's key: without its token the page is as unknown as a wrong id.
    expect((await fetch(`${sb.url}/_sandbox/spei/${page.id}`, { headers: { accept: 'application/json' } })).status).toBe(404);
    const html = await fetch(new URL(localPath(spei.url), sb.url));
    expect(html.status).toBe(200);
    const text = await html.text();
    expect(text).toContain('646 180');
    expect(text).toContain('$250.00 MXN');
    expect(text).toContain('Tienda Mx');
    const approve = await payerPost(sb.url, spei.approveUrl);
    expect(approve.status).toBe(303);
    expect(approve.headers.get('location')).toBe(`/_sandbox/spei/${page.id}?token=${links.token}&result=approved`);
    expect((await lookup(client, page.id)).status).toBe('APPROVED');
    const done = await (await fetch(new URL(`${localPath(spei.url)}&result=approved`, sb.url))).text();
    expect(done).toContain('Transferencia recibida');
  });

  it('has no other payer page, and other currencies have no SPEI page', async () => {
    const tx = await created(client, mxnBody({ externalId: 'mx-pages' }));
    expect((await fetch(`${sb.url}/_sandbox/checkout/${tx.id}`, { headers: { accept: 'application/json' } })).status).toBe(404);
    const brl = await created(client, { ...mxnBody(), currency: undefined, paymentMethod: 'PIX', phone: '11987654321', cpf: '52998224725', responsibleDocument: '11222333000181', externalId: 'br' });
    expect((await fetch(`${sb.url}/_sandbox/spei/${brl.id}`, { headers: { accept: 'application/json' } })).status).toBe(404);
    expect((await payerPages(client, brl.id)).spei).toBeNull();
    const reject = await payerPost(sb.url, (await payerPages(client, tx.id)).spei!.rejectUrl);
    expect(reject.status).toBe(303);
    expect((await lookup(client, tx.id)).status).toBe('BLOCKED');
  });
});
