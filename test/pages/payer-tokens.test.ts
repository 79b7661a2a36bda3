import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, expectTransactionError } from '../helpers/catalog.js';
import { BOLETO_ADDRESS, DOCS, boletoBody, control, copBody, created, hybridBody, lookup, pixBody } from '../helpers/purchases.js';
import { payerPages, payerPost } from '../helpers/payer-pages.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';

/**
 * Payer pages are reached by the link the merchant hands the payer, which carries a token
 * per transaction (contract v3, Shared use): ids are global and sequential, so an id alone
 * must open nothing, and a page of another site must not be able to press its buttons.
 */
let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ instructionDelayMs: 600_000 });
});
afterAll(async () => {
  await sandbox?.stop();
});

const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

const raw = (path: string, init: RequestInit = {}): Promise<Response> => fetch(new URL(path, sandbox.url), { redirect: 'manual', ...init });

/** The path and query of a URL the sandbox emitted (its public URL may name another host than the test's). */
const local = (url: string): string => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};

describe('reproductions (issue 22)', () => {
  it("GET /_sandbox/boletos/<another account's id> without the link's token shows nothing of the payer", async () => {
    const a = await createAccount(sandbox);
    const boleto = await created(a.client, boletoBody({ name: 'Joana Payer', cpf: DOCS.cpf }));
    await control(a.client, boleto.id, 'fill');
    for (const accept of [BROWSER.accept, 'application/json']) {
      const res = await raw(`/_sandbox/boletos/${boleto.id}`, { headers: { accept } });
      const text = await res.text();
      expect(res.status, accept).toBe(404);
      expect(text).not.toContain('Joana Payer');
      expect(text).not.toContain(DOCS.cpf);
      expect(text).not.toContain('529.982.247-25');
      expect(text).not.toContain(BOLETO_ADDRESS.address);
    }
  });

  it('POST /_sandbox/pix/<id>/approve from https://evil.example does not approve another account\'s charge', async () => {
    const b = await createAccount(sandbox);
    const pix = await created(b.client, pixBody());
    const res = await raw(`/_sandbox/pix/${pix.id}/approve`, { method: 'POST', headers: { origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.status).not.toBe(303);
    expect([403, 404]).toContain(res.status);
    expect((await lookup(b.client, pix.id)).status).toBe('PENDING');
    // Not even with the token: the page's own buttons post from the sandbox's origin, never another site's.
    const pages = await payerPages(b.client, pix.id);
    const withToken = await raw(local(pages.pix!.approveUrl), { method: 'POST', headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' } });
    expect(withToken.status).toBe(403);
    expect((await lookup(b.client, pix.id)).status).toBe('PENDING');
  });
});

describe('links with tokens', () => {
  it('redirectUrl, boletoUrl and the Pix page carry an unguessable token per transaction', async () => {
    const cop = await created(sandbox.client, copBody());
    const hybrid = await created(sandbox.client, hybridBody());
    const filledCop = (await control(sandbox.client, cop.id, 'fill')).body;
    const filledHybrid = (await control(sandbox.client, hybrid.id, 'fill')).body;
    const redirect = new URL(String(filledCop.redirectUrl));
    const boletoUrl = new URL((filledHybrid.paymentInstruction as { boletoUrl: string }).boletoUrl);
    expect(redirect.pathname).toBe(`/_sandbox/checkout/${cop.id}`);
    expect(boletoUrl.pathname).toBe(`/_sandbox/boletos/${hybrid.id}`);
    const tokens = [redirect.searchParams.get('token'), boletoUrl.searchParams.get('token')];
    for (const token of tokens) expect(token).toMatch(/^[A-Za-z0-9_-]{24,}$/);
    expect(tokens[0]).not.toBe(tokens[1]);
    const pages = await payerPages(sandbox.client, hybrid.id);
    expect(pages.checkout).toBeNull();
    expect(new URL(pages.boleto!.url).search).toBe(boletoUrl.search);
    expect(new URL(pages.pix!.url).pathname).toBe(`/_sandbox/pix/${hybrid.id}`);
    expect(new URL(pages.pix!.url).searchParams.get('token')).toBe(tokens[1]);
    for (const url of [filledCop.redirectUrl as string, pages.boleto!.url, pages.pix!.url, pages.pix!.qrUrl]) {
      expect((await raw(local(url), { headers: BROWSER })).status, url).toBe(200);
    }
  });

  it('without the token, or with a wrong one, every page, QR and button is 404 and changes nothing', async () => {
    const cop = await created(sandbox.client, copBody());
    const hybrid = await created(sandbox.client, hybridBody());
    await control(sandbox.client, hybrid.id, 'fill');
    const anonymous = sandbox.clientFor(undefined);
    const wrong = `?token=${'A'.repeat(24)}`;
    for (const query of ['', wrong, '?token=', `?token=${encodeURIComponent('../../')}`]) {
      for (const path of [`/_sandbox/checkout/${cop.id}`, `/_sandbox/boletos/${hybrid.id}`, `/_sandbox/pix/${hybrid.id}`, `/_sandbox/pix/${hybrid.id}/qr.png`]) {
        expectTransactionError(await anonymous.get(`${path}${query}`), 404);
      }
      for (const path of [`/_sandbox/checkout/${cop.id}`, `/_sandbox/boletos/${hybrid.id}`, `/_sandbox/pix/${hybrid.id}`]) {
        for (const action of ['approve', 'reject']) expectTransactionError(await anonymous.post(`${path}/${action}${query}`), 404);
      }
    }
    // The token of one transaction opens no other.
    const other = await payerPages(sandbox.client, (await created(sandbox.client, copBody())).id);
    const stolen = new URL(other.checkout!.url).search;
    expectTransactionError(await anonymous.get(`/_sandbox/checkout/${cop.id}${stolen}`), 404);
    expect((await lookup(sandbox.client, cop.id)).status).toBe('PENDING');
    expect((await lookup(sandbox.client, hybrid.id)).status).toBe('PENDING');
  });

  it('a wrong token answers exactly like an unknown id: the 404 tells nothing about the transaction', async () => {
    const pix = await created(sandbox.client, pixBody());
    const a = await raw(`/_sandbox/pix/${pix.id}?token=${'B'.repeat(24)}`);
    const b = await raw(`/_sandbox/pix/999999999999?token=${'B'.repeat(24)}`);
    expect(a.status).toBe(404);
    expect(b.status).toBe(404);
    expect(await a.json()).toEqual(await b.json());
    expect(a.headers.get('x-sandbox-hint')?.replace(pix.id, 'ID')).toBe(b.headers.get('x-sandbox-hint')?.replace('999999999999', 'ID'));
  });

  it('the pages endpoint is the owner\'s: another account gets 404', async () => {
    const pix = await created(sandbox.client, pixBody());
    const other = await createAccount(sandbox);
    expectTransactionError(await other.client.get(`/_sandbox/transactions/${pix.id}/payer-pages`), 404);
    expectTransactionError(await sandbox.clientFor(undefined).get(`/_sandbox/transactions/${pix.id}/payer-pages`), 401);
  });

  it('tokens survive a restart', async () => {
    const sb = await startSandbox({ instructionDelayMs: 600_000 });
    try {
      const cop = await created(sb.client, copBody());
      const before = await payerPages(sb.client, cop.id);
      await sb.running.stop();
      const again = await startSandbox({ dataFile: sb.config.dataFile, instructionDelayMs: 600_000 });
      try {
        // The links name the public URL, which follows the port: the tokens are what must survive.
        const tokens = (pages: typeof before) => [pages.checkout!.url, pages.checkout!.approveUrl].map((u) => new URL(u).search);
        expect(tokens(await payerPages(again.client, cop.id))).toEqual(tokens(before));
        const page = await fetch(new URL(local(before.checkout!.url), again.url), { headers: BROWSER });
        expect(page.status).toBe(200);
        const filled = (await control(again.client, cop.id, 'fill')).body;
        expect(new URL(String(filled.redirectUrl)).search).toBe(new URL(before.checkout!.url).search);
      } finally {
        await again.running.stop();
      }
    } finally {
      await sb.stop().catch(() => undefined);
    }
  });
});

describe('records stored before tokens existed', () => {
  it('get a token when filled or when their owner asks for their links; the old tokenless link opens nothing', async () => {
    const sb = await startSandbox({ instructionDelayMs: 600_000 });
    try {
      const pending = await created(sb.client, copBody());
      const listed = await created(sb.client, pixBody());
      await sb.running.stop();
      // What an older version stored: no payerToken on the records.
      const file = sb.config.dataFile;
      writeFileSync(file, readFileSync(file, 'utf8').replace(/,"payerToken":"[A-Za-z0-9_-]+"/g, ''));
      expect(readFileSync(file, 'utf8')).not.toContain('payerToken');
      const again = await startSandbox({ dataFile: file, instructionDelayMs: 600_000 });
      try {
        expectTransactionError(await again.clientFor(undefined).get(`/_sandbox/checkout/${pending.id}?token=`), 404);
        const filled = (await control(again.client, pending.id, 'fill')).body;
        const link = new URL(String(filled.redirectUrl));
        expect(link.searchParams.get('token')).toMatch(/^[A-Za-z0-9_-]{24}$/);
        expect((await fetch(new URL(`${link.pathname}${link.search}`, again.url))).status).toBe(200);
        const pages = await payerPages(again.client, listed.id);
        expect(pages.token).toMatch(/^[A-Za-z0-9_-]{24}$/);
        expect((await payerPages(again.client, listed.id)).token).toBe(pages.token);
        expect((await fetch(new URL(local(pages.pix!.url), again.url))).status).toBe(200);
      } finally {
        await again.running.stop();
      }
    } finally {
      await sb.stop().catch(() => undefined);
    }
  });
});

describe('buttons', () => {
  it('approve and reject with the token from the page itself: 303 back to the page (token kept) with the outcome', async () => {
    const pix = await created(sandbox.client, pixBody());
    const pages = await payerPages(sandbox.client, pix.id);
    const page = await raw(local(pages.pix!.url), { headers: BROWSER });
    const html = await page.text();
    const token = new URL(pages.pix!.url).searchParams.get('token')!;
    expect(html).toContain(`action="/_sandbox/pix/${pix.id}/approve?token=${token}"`);
    expect(html).toContain(`src="/_sandbox/pix/${pix.id}/qr.png?token=${token}"`);
    const origin = new URL(sandbox.url).origin;
    const res = await payerPost(sandbox.url, pages.pix!.approveUrl, { origin, 'sec-fetch-site': 'same-origin' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`/_sandbox/pix/${pix.id}?token=${token}&result=approved`);
    expect((await lookup(sandbox.client, pix.id)).status).toBe('APPROVED');

    // The PSE form posts its fields (bank, person type) form-encoded, as a browser does.
    const pse = await created(sandbox.client, copBody({ paymentMethod: 'PSE' }));
    const pp = await payerPages(sandbox.client, pse.id);
    const u = new URL(pp.checkout!.approveUrl);
    const form = await raw(`${u.pathname}${u.search}`, { method: 'POST', headers: { origin, 'content-type': 'application/x-www-form-urlencoded' }, body: 'bank=1007&personType=N' });
    expect(form.status).toBe(303);
    expect((await lookup(sandbox.client, pse.id)).status).toBe('APPROVED');

    const boleto = await created(sandbox.client, boletoBody());
    const bp = await payerPages(sandbox.client, boleto.id);
    expect((await payerPost(sandbox.url, bp.boleto!.rejectUrl, { origin })).status).toBe(303);
    expect((await lookup(sandbox.client, boleto.id)).status).toBe('BLOCKED');
  });

  it('a same-origin POST is needed: another origin, a null origin or a cross-site fetch is 403', async () => {
    const cop = await created(sandbox.client, copBody());
    const pages = await payerPages(sandbox.client, cop.id);
    const port = new URL(sandbox.url).port;
    for (const headers of <Record<string, string>[]>[
      { origin: 'https://evil.example' },
      { origin: 'null' },
      // Same site, other port: another origin all the same.
      { origin: `http://127.0.0.1:${Number(port) + 1}` },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
    ]) {
      const res = await payerPost(sandbox.url, pages.checkout!.approveUrl, { ...headers, accept: 'application/json' });
      expect(res.status, JSON.stringify(headers)).toBe(403);
    }
    expect((await lookup(sandbox.client, cop.id)).status).toBe('PENDING');
    // curl or a test without browser headers, holding the link, is the payer.
    expect((await payerPost(sandbox.url, pages.checkout!.approveUrl)).status).toBe(303);
    expect((await lookup(sandbox.client, cop.id)).status).toBe('APPROVED');
  });

  it('a GET never acts: approve and reject are POSTs', async () => {
    const pix = await created(sandbox.client, pixBody());
    const pages = await payerPages(sandbox.client, pix.id);
    expect((await raw(local(pages.pix!.approveUrl))).status).toBe(405);
    expect((await lookup(sandbox.client, pix.id)).status).toBe('PENDING');
  });
});

describe('headers', () => {
  it('pages, their error pages and the QR forbid framing (CSP frame-ancestors none) and are not cached', async () => {
    const pix = await created(sandbox.client, pixBody());
    const pages = await payerPages(sandbox.client, pix.id);
    for (const [path, accept] of [
      [local(pages.pix!.url), BROWSER.accept],
      [local(pages.pix!.qrUrl), 'image/png'],
      [`/_sandbox/pix/${pix.id}`, BROWSER.accept],
    ] as const) {
      const res = await raw(path, { headers: { accept } });
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(csp, path).toMatch(/default-src 'none'/);
      expect(res.headers.get('x-frame-options'), path).toBe('DENY');
      expect(res.headers.get('cache-control'), path).toBe('no-store');
      expect(res.headers.get('referrer-policy'), path).toBe('same-origin');
    }
  });
});
