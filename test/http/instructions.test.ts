// Payment instructions: empty at creation, filled by the scheduler after the delay (or by the clock
// and the control API), valid per the independent validators the rails tests use, and served by
// the hosted pages.
import { createRequire } from 'node:module';
import boletoUtils from '@mrmgomes/boleto-utils';
import cbuValidator from 'arg.js/src/cbu.js';
import cuitValidator from 'arg.js/src/cuit.js';
import boletoValidator from 'boleto-brasileiro-validator';
import { hasError, isStaticPix, parsePix } from 'pix-utils';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/spec/types.js';
import { createAccount, expectConflict, expectTransactionError } from '../helpers/catalog.js';
import {
  arsBody,
  boletoBody,
  brazilDay,
  control,
  copBody,
  created,
  hybridBody,
  isFilledTx,
  lookup,
  pixBody,
  pollUntil,
  type Body,
  type Tx,
} from '../helpers/purchases.js';
import { localPath, payerAction, payerPages, tokenOf } from '../helpers/payer-pages.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';
import { clockNow } from '../helpers/webhooks.js';

const jsQR = createRequire(import.meta.url)('jsqr') as typeof import('jsqr').default;

const DELAY = 200;
let quick: TestSandbox;
/** Instructions due only after a minute: filled by the clock or the control API. */
let slow: TestSandbox;
/** Plain Pix filled later like the hybrid (`--pix-instruction delayed`), to test a client's polling. */
let quickDelayedPix: TestSandbox;
beforeAll(async () => {
  [quick, slow, quickDelayedPix] = await Promise.all([
    startSandbox({ instructionDelayMs: DELAY }),
    startSandbox({ instructionDelayMs: 60_000 }),
    startSandbox({ instructionDelayMs: DELAY, pixInstruction: 'delayed' }),
  ]);
  // The first purchase and lookup of a sandbox compile their response schemas, slower than DELAY on a busy machine.
  for (const sb of [quick, quickDelayedPix]) {
    const { client } = await createAccount(sb);
    await lookup(client, (await created(client, copBody())).id);
  }
});
afterAll(() => Promise.all([quick.stop(), slow.stop(), quickDelayedPix.stop()]));

const VARIANTS: [string, () => Body][] = [
  ['COP', () => copBody()],
  ['ARS', () => arsBody()],
  ['PIX', () => pixBody()],
  ['BOLETO', () => boletoBody()],
  ['PIX_BOLETO', () => hybridBody()],
];
/** What is empty at creation by default: everything but a plain Pix. */
const DELAYED_VARIANTS = VARIANTS.filter(([label]) => label !== 'PIX');

/** A sandbox URL as the sandbox emits it (http://localhost:<port>/...), fetched at the address it listens on. */
function onSandbox(sb: TestSandbox, url: string): string {
  const emitted = new URL(url);
  const real = new URL(sb.url);
  expect(emitted.protocol).toBe('http:');
  expect(['localhost', '127.0.0.1']).toContain(emitted.hostname);
  expect(emitted.port).toBe(real.port);
  return new URL(`${emitted.pathname}${emitted.search}`, real).toString();
}

const dueDateFactor = (isoDate: string): number => (Date.parse(`${isoDate}T00:00:00Z`) - Date.UTC(2025, 1, 22)) / 86_400_000 + 1000;

async function fill(client: Client, id: string): Promise<Tx> {
  const res = await control(client, id, 'fill');
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

describe('filling after the delay', () => {
  it.each([
    ...DELAYED_VARIANTS.map(([label, body]) => [label, body, () => quick] as const),
    ['PIX with --pix-instruction delayed', () => pixBody(), () => quickDelayedPix] as const,
  ])('%s: empty at creation and on early reads, filled when read after the delay', async (_label, body, sandbox) => {
    const { client } = await createAccount(sandbox());
    const tx = await created(client, body());
    expect(isFilledTx(tx)).toBe(false);
    const due = Date.parse(tx.createdAt) + DELAY;
    // Poll right away and keep every read with the instant its answer arrived.
    const reads: { at: number; filled: boolean }[] = [];
    const filled = await pollUntil(client, tx.id, (read) => {
      reads.push({ at: Date.now(), filled: isFilledTx(read) });
      return isFilledTx(read);
      // A deadline far past the delay: only a fill that never comes may fail here.
    }, 20_000);
    // Judged by when each answer arrived, never by how soon the first read came: a read
    // answered before the due instant cannot have seen the fill, however busy the machine.
    for (const read of reads) {
      if (read.at < due) expect(read.filled, `read ${read.at - due} ms before due`).toBe(false);
    }
    expect(reads.at(-1)!.at).toBeGreaterThanOrEqual(due - 5);
    expect(filled.status).toBe('PENDING');
    // Filling touches the instruction fields only.
    const { redirectUrl: _r, cvu: _c, pixCode: _p, qrCode: _q, paymentInstruction: _i, ...rest } = filled;
    const { redirectUrl: _r2, cvu: _c2, pixCode: _p2, paymentInstruction: _i2, ...restAtCreation } = tx;
    expect(rest).toEqual(restAtCreation);
    expect(tx).not.toHaveProperty('qrCode');
    if (filled.pixCode) expect(filled.qrCode).toMatch(/^iVBORw0KGgo/);
  });

  it('PIX (default, immediate): the 201 carries pixCode, qrCode and expiresAt; nothing changes at the fill time', async () => {
    const { client } = await createAccount(quick);
    const tx = await created(client, pixBody());
    expect(isFilledTx(tx)).toBe(true);
    expect(tx.pixCode).toMatch(/^000201/);
    expect(tx.qrCode).toMatch(/^iVBORw0KGgo/);
    expect(Date.parse(String(tx.expiresAt)) - Date.parse(tx.createdAt)).toBe(86_400_000);
    await new Promise((resolve) => setTimeout(resolve, DELAY * 2));
    expect(await lookup(client, tx.id)).toEqual(tx);
  });
});

describe('the account clock', () => {
  it("advancing by the delay fills at once; another account's clock and transactions do not move", async () => {
    const { client } = await createAccount(slow);
    const { client: other } = await createAccount(slow);
    const mine = [await created(client, hybridBody()), await created(client, copBody()), await created(client, arsBody())];
    const theirs = await created(other, hybridBody());

    // Due instants from the recorded createdAt: creating them may have taken seconds of real time.
    const createdAt = mine.map((tx) => Date.parse(tx.createdAt));
    const firstDue = Math.min(...createdAt) + 60_000;
    const lastDue = Math.max(...createdAt) + 60_000;
    // Ten seconds short of the first fill on the account clock (real time keeps running meanwhile).
    const short = firstDue - (await clockNow(client)) - 10_000;
    const partly = await client.post<Clock>('/_sandbox/clock/advance', { ms: short });
    expect(partly.status).toBe(200);
    for (const tx of mine) expect(isFilledTx(await lookup(client, tx.id))).toBe(false);

    const rest = lastDue - (await clockNow(client)) + 1;
    const advanced = await client.post<Clock>('/_sandbox/clock/advance', { ms: rest });
    expect(advanced.status).toBe(200);
    expect(advanced.body.offsetMs).toBe(short + rest);
    for (const tx of mine) expect(isFilledTx(await lookup(client, tx.id)), tx.currency).toBe(true);

    expect((await other.get<Clock>('/_sandbox/clock')).body.offsetMs).toBe(0);
    const untouched = await lookup(other, theirs.id);
    expect(untouched.pixCode).toBe('');
    expect(untouched.paymentInstruction).toEqual({});
  });
});

describe('POST /_sandbox/transactions/:id/fill', () => {
  it.each(VARIANTS)('%s: fills now (a plain Pix already is), and a second call changes nothing', async (_label, body) => {
    const { client } = await createAccount(slow);
    const tx = await created(client, body());
    const first = await fill(client, tx.id);
    expect(isFilledTx(first)).toBe(true);
    expect(await fill(client, tx.id)).toEqual(first);
    expect(await lookup(client, tx.id)).toEqual(first);
  });

  it("answers 404 for another account's transaction and an unknown id", async () => {
    const { client } = await createAccount(slow);
    const { client: other } = await createAccount(slow);
    const tx = await created(client, hybridBody());
    expectTransactionError(await control(other, tx.id, 'fill'), 404);
    expectTransactionError(await control(client, '999999999999', 'fill'), 404);
    expect((await lookup(client, tx.id)).pixCode).toBe('');
  });
});

describe('filled artifacts pass the independent validators', () => {
  let client: Client;
  const MERCHANT = 'Loja Sandbox Teste';
  beforeAll(async () => {
    client = (await createAccount(slow, undefined, { name: MERCHANT })).client;
  });

  it('PIX and PIX_BOLETO: a static BR Code for the amount, read by pix-utils', async () => {
    for (const body of [pixBody({ amount: 12_345 }), hybridBody({ amount: 12_345 })]) {
      const tx = await fill(client, (await created(client, body)).id);
      const pix = parsePix(String(tx.pixCode));
      if (hasError(pix) || !isStaticPix(pix)) throw new Error(`pix-utils rejected ${String(tx.pixCode)}`);
      expect(pix.transactionAmount).toBe(123.45);
      expect(pix.txid).toBe(`SBX${tx.id}`);
      expect(pix.merchantName).toBe(MERCHANT);
      expect(pix.merchantCity).toBe('SAO PAULO');
      expect(pix.pixKey).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
  });

  it('BOLETO and PIX_BOLETO: barcode and line valid, with the amount and the due-date factor', async () => {
    for (const body of [boletoBody({ amount: 987_654, dueDate: '2027-03-10' }), hybridBody({ amount: 987_654, dueDate: '2027-03-10' })]) {
      const tx = await fill(client, (await created(client, body)).id);
      const instruction = tx.paymentInstruction as Record<string, string>;
      const { boletoBarcode: barcode, boletoDigitableLine: line } = instruction;
      expect(instruction.type).toBe('BOLETO');
      expect(instruction.dueDate).toBe('2027-03-10T00:00:00.000Z');
      expect(boletoValidator.boletoBancarioCodigoBarras(barcode!), barcode).toBe(true);
      expect(boletoValidator.boletoBancarioLinhaDigitavel(line!, true), line).toBe(true);
      expect(boletoUtils.linhaDigitavel2CodBarras(line!)).toBe(barcode);
      expect(barcode!.slice(0, 4)).toBe('3419');
      expect(Number(barcode!.slice(5, 9))).toBe(dueDateFactor('2027-03-10'));
      expect(Number(barcode!.slice(9, 19))).toBe(987_654);
      expect(boletoUtils.identificarValor(barcode!, 'CODIGO_DE_BARRAS')).toBe(9876.54);
      expect(boletoUtils.identificarDataComNovoFator2025(barcode!, 'CODIGO_DE_BARRAS').toISOString().slice(0, 10)).toBe('2027-03-10');
      expect(onSandbox(slow, instruction.boletoUrl!)).toMatch(new RegExp(`^${slow.url}/_sandbox/boletos/${tx.id}\\?token=[A-Za-z0-9_-]{24}$`));
    }
  });

  it('the default due date (today + 3 days in Brazil) is in the barcode factor', async () => {
    const tx = await fill(client, (await created(client, hybridBody())).id);
    const expected = brazilDay(Date.parse(tx.createdAt), 3);
    const instruction = tx.paymentInstruction as Record<string, string>;
    expect(instruction.dueDate).toBe(`${expected}T00:00:00.000Z`);
    expect(Number(instruction.boletoBarcode!.slice(5, 9))).toBe(dueDateFactor(expected));
  });

  it('ARS: a valid CVU, repeated in the beneficiary with a valid CUIT and an alias', async () => {
    const tx = await fill(client, (await created(client, arsBody())).id);
    const cvu = String(tx.cvu);
    expect(cbuValidator.isValid(cvu), cvu).toBe(true);
    expect(cvu).toMatch(/^000\d{19}$/);
    const { beneficiary } = tx.paymentInstruction as { beneficiary: Record<string, string> };
    expect(beneficiary).toEqual({ name: MERCHANT, cuit: expect.any(String), cvu, alias: expect.any(String), bank: 'Sandbox PSP' });
    expect(cuitValidator.isValid(beneficiary.cuit!), beneficiary.cuit).toBe(true);
    expect(beneficiary.cuit).toMatch(/^3[034]/);
    expect(beneficiary.alias).toMatch(/^[A-Za-z0-9.-]{6,20}$/);
  });

  it('COP: redirectUrl is the absolute hosted checkout page of the transaction, with its token', async () => {
    const tx = await fill(client, (await created(client, copBody())).id);
    expect(onSandbox(slow, String(tx.redirectUrl))).toMatch(new RegExp(`^${slow.url}/_sandbox/checkout/${tx.id}\\?token=[A-Za-z0-9_-]{24}$`));
  });
});

describe('hosted pages', () => {
  let client: Client;
  beforeAll(async () => {
    client = (await createAccount(slow, undefined, { name: 'Tienda Sandbox' })).client;
  });

  const getPage = async (url: string): Promise<{ status: number; type: string; text: string }> => {
    const res = await fetch(onSandbox(slow, url));
    return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
  };
  /** A payer's form post: the 303 is not followed. */
  const submit = (url: string): Promise<Response> => fetch(onSandbox(slow, url), { method: 'POST', redirect: 'manual' });
  const filledCop = async (body: Body): Promise<Tx> => fill(client, (await created(client, copBody(body))).id);

  const SPECIFICS: [string, (tx: Tx) => string[], string[]][] = [
    ['PSE', () => ['name="bank"', '<option value="1007">Bancolombia</option>', '<option value="1051">Davivienda</option>', 'name="personType"'], ['@sandbox']],
    ['NEQUI', () => ['+57 321 123 4567', 'Nequi'], ['name="bank"', 'personType']],
    ['BREB', (tx) => [`@sandbox${tx.id}`, 'Tienda Sandbox'], ['name="bank"', 'personType']],
    ['BANK_TRANSFER', (tx) => ['Bancolombia', 'Cuenta de ahorros', `>${tx.id}<`, 'Tienda Sandbox'], ['name="bank"', '@sandbox']],
  ];

  it.each(SPECIFICS)('COP %s: the redirectUrl page shows the method specifics and the amount', async (method, shown, absent) => {
    const tx = await filledCop({ paymentMethod: method, amount: 1_234_500 });
    const page = await getPage(String(tx.redirectUrl));
    expect(page.status).toBe(200);
    expect(page.type).toMatch(/^text\/html/);
    for (const text of shown(tx)) expect(page.text, text).toContain(text);
    for (const text of absent) expect(page.text, text).not.toContain(text);
    expect(page.text).toContain('12.345,00');
    const token = tokenOf(String(tx.redirectUrl));
    expect(page.text).toContain(`action="/_sandbox/checkout/${tx.id}/approve?token=${token}"`);
    expect(page.text).toContain(`action="/_sandbox/checkout/${tx.id}/reject?token=${token}"`);
  });

  it('approve: 303 back to the page, the transaction APPROVED; approving again is 409', async () => {
    const tx = await filledCop({ paymentMethod: 'PSE' });
    const link = String(tx.redirectUrl);
    const res = await submit(payerAction(link, 'approve'));
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`/_sandbox/checkout/${tx.id}?token=${tokenOf(link)}&result=approved`);
    const paid = await lookup(client, tx.id);
    expect(paid.status).toBe('APPROVED');
    expect(paid.paidAt).not.toBeNull();
    const after = await getPage(`${link}&result=approved`);
    expect(after.status).toBe(200);
    expect(after.text).toContain('Pago aprobado');
    expect(after.text).not.toContain('/approve?token=');

    expectConflict(await slow.clientFor(undefined).post(localPath(payerAction(link, 'approve'))), 'Transaction already processed', /APPROVED/);
    expectConflict(await slow.clientFor(undefined).post(localPath(payerAction(link, 'reject'))), 'Transaction already processed', /APPROVED/);
    expect((await lookup(client, tx.id)).status).toBe('APPROVED');
  });

  it('reject: 303, the transaction BLOCKED; approving it then is 409', async () => {
    const tx = await filledCop({ paymentMethod: 'NEQUI' });
    const link = String(tx.redirectUrl);
    const res = await submit(payerAction(link, 'reject'));
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`/_sandbox/checkout/${tx.id}?token=${tokenOf(link)}&result=rejected`);
    expect((await lookup(client, tx.id)).status).toBe('BLOCKED');
    expectConflict(await slow.clientFor(undefined).post(localPath(payerAction(link, 'approve'))), 'Transaction already processed', /BLOCKED/);
    expect((await lookup(client, tx.id)).status).toBe('BLOCKED');
  });

  it('the boleto page shows the formatted digitable line', async () => {
    for (const body of [boletoBody(), hybridBody()]) {
      const tx = await fill(client, (await created(client, body)).id);
      const instruction = tx.paymentInstruction as Record<string, string>;
      const page = await getPage(instruction.boletoUrl!);
      expect(page.status).toBe(200);
      expect(page.type).toMatch(/^text\/html/);
      const formatted = boletoUtils.codBarras2LinhaDigitavel(instruction.boletoBarcode!, true);
      expect(formatted).toMatch(/^\d{5}\.\d{5} \d{5}\.\d{6} \d{5}\.\d{6} \d \d{14}$/);
      expect(page.text).toContain(formatted);
    }
  });

  it('the Pix QR is a PNG that decodes to the pixCode', async () => {
    for (const body of [pixBody(), hybridBody()]) {
      const tx = await fill(client, (await created(client, body)).id);
      const res = await fetch(onSandbox(slow, (await payerPages(client, tx.id)).pix!.qrUrl));
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/png');
      const image = PNG.sync.read(Buffer.from(await res.arrayBuffer()));
      expect(jsQR(new Uint8ClampedArray(image.data), image.width, image.height)?.data).toBe(tx.pixCode);
    }
  });

  it('qrCode is the base64 PNG (no data: prefix) of the pixCode, in the 201 and in lookups', async () => {
    for (const tx of [await created(client, pixBody()), await fill(client, (await created(client, hybridBody())).id)]) {
      const qrCode = String(tx.qrCode);
      expect(qrCode).not.toMatch(/^data:/);
      const image = PNG.sync.read(Buffer.from(qrCode, 'base64'));
      expect(jsQR(new Uint8ClampedArray(image.data), image.width, image.height)?.data).toBe(tx.pixCode);
      expect((await lookup(client, tx.id)).qrCode).toBe(qrCode);
    }
  });

  it('pages of unknown ids are 404', async () => {
    const anonymous = slow.clientFor(undefined);
    for (const path of ['/_sandbox/checkout/999999999999', '/_sandbox/boletos/999999999999', '/_sandbox/pix/999999999999/qr.png']) {
      expectTransactionError(await anonymous.get(path), 404);
    }
    for (const action of ['approve', 'reject']) {
      expectTransactionError(await anonymous.post(`/_sandbox/checkout/999999999999/${action}`), 404);
    }
  });

  /** `?token=…` of a transaction's own links: with it, only the kind of page is wrong. */
  const tokenQuery = async (id: string): Promise<string> => {
    const pages = await payerPages(client, id);
    const any = pages.checkout ?? pages.boleto ?? pages.pix;
    return any ? new URL(any.url).search : '';
  };

  it('pages of the wrong kind are 404 even with the token: no checkout for BRL, no boleto for COP or PIX, no QR for a plain boleto', async () => {
    const anonymous = slow.clientFor(undefined);
    const pix = await fill(client, (await created(client, pixBody())).id);
    const boleto = await fill(client, (await created(client, boletoBody())).id);
    const cop = await filledCop({});
    expectTransactionError(await anonymous.get(`/_sandbox/checkout/${pix.id}${await tokenQuery(pix.id)}`), 404, /has no checkout page/);
    expectTransactionError(await anonymous.get(`/_sandbox/boletos/${cop.id}${await tokenQuery(cop.id)}`), 404, /has no boleto/);
    expectTransactionError(await anonymous.get(`/_sandbox/boletos/${pix.id}${await tokenQuery(pix.id)}`), 404, /has no boleto/);
    expectTransactionError(await anonymous.get(`/_sandbox/pix/${boleto.id}/qr.png${await tokenQuery(boleto.id)}`), 404, /has no Pix code/);
    expectTransactionError(await anonymous.get(`/_sandbox/pix/${cop.id}/qr.png${await tokenQuery(cop.id)}`), 404, /has no Pix code/);
  });

  it('the checkout buttons act on COP transactions only, even with the token', async () => {
    const anonymous = slow.clientFor(undefined);
    const pix = await created(client, pixBody());
    const ars = await created(client, arsBody());
    for (const tx of [pix, ars]) {
      for (const action of ['approve', 'reject']) {
        // An ARS transfer has no payer page, hence no token at all.
        expectTransactionError(await anonymous.post(`/_sandbox/checkout/${tx.id}/${action}${await tokenQuery(tx.id)}`), 404, tx === pix ? /has no checkout page/ : /Transaction not found/);
      }
      expect((await lookup(client, tx.id)).status).toBe('PENDING');
    }
  });
});
