import { createRequire } from 'node:module';
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { JsonTexts } from '../../src/http/json-text.js';
import { PRESENTED_CACHE_ENTRIES, TransactionPresenter } from '../../src/http/present-transaction.js';
import { QrRenderer } from '../../src/pages/qr-renderer.js';
import type { Transaction } from '../../src/spec/types.js';

const jsQR = createRequire(import.meta.url)('jsqr') as typeof import('jsqr').default;

const CODE = '00020126580014br.gov.bcb.pix01363de12b26-3bac-4a92-a131-662026b11e035204000053039865406150.005802BR5915Default account6009SAO PAULO62160512SBX10000000263046060';
const view = (pixCode: string): Transaction => ({ id: '100000002', status: 'PENDING', pixCode }) as unknown as Transaction;

const presenter = new TransactionPresenter(new QrRenderer(), new JsonTexts());
const presentTransaction = (view: Transaction): Promise<Transaction> => presenter.present(view);

describe('TransactionPresenter', () => {
  it('adds the PNG of the Pix code as qrCode, the same image on every answer about it', async () => {
    const first = (await presentTransaction(view(CODE))) as Transaction & { qrCode: string };
    const image = PNG.sync.read(Buffer.from(first.qrCode, 'base64'));
    expect(jsQR(new Uint8ClampedArray(image.data), image.width, image.height)?.data).toBe(CODE);
    const again = (await presentTransaction({ ...view(CODE), status: 'APPROVED' } as unknown as Transaction)) as Transaction & { qrCode: string };
    expect(again.qrCode).toBe(first.qrCode);
    expect(again.status).toBe('APPROVED');
  });

  it('gives each code its own image, however many codes were drawn since', async () => {
    const other = `${CODE.slice(0, -8)}99996060`;
    const images = new Map<string, string>();
    for (const code of [CODE, other]) images.set(code, ((await presentTransaction(view(code))) as Transaction & { qrCode: string }).qrCode);
    expect(images.get(CODE)).not.toBe(images.get(other));
    for (const code of [other, CODE]) expect(((await presentTransaction(view(code))) as Transaction & { qrCode: string }).qrCode).toBe(images.get(code));
  });

  it('answers the same stored view with the same frozen object (its JSON text kept), and a replaced view with a new one', async () => {
    const stored = view(CODE);
    const first = await presentTransaction(stored);
    expect(await presentTransaction(stored)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    const paid = { ...stored, status: 'APPROVED' } as unknown as Transaction;
    const after = await presentTransaction(paid);
    expect(after).not.toBe(first);
    expect(after.status).toBe('APPROVED');
    expect(first.status).toBe('PENDING');
  });

  it('keeps at most PRESENTED_CACHE_ENTRIES answers: the least recently asked for is presented anew', async () => {
    const oldest = view(CODE);
    const first = await presentTransaction(oldest);
    const kept = view(CODE);
    const keptAnswer = await presentTransaction(kept);
    for (let i = 0; i < PRESENTED_CACHE_ENTRIES - 1; i++) {
      await presentTransaction(view(CODE));
      if (i === 100) expect(await presentTransaction(kept)).toBe(keptAnswer); // asked for again: now among the newest
    }
    expect(await presentTransaction(kept)).toBe(keptAnswer);
    const again = await presentTransaction(oldest);
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });

  it('leaves a transaction without a Pix code (or with an empty one) as it is', async () => {
    const empty = view('');
    expect(await presentTransaction(empty)).toBe(empty);
    const card = { id: '100000003', status: 'PENDING' } as unknown as Transaction;
    expect(await presentTransaction(card)).toBe(card);
  });
});
