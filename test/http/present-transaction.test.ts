import { createRequire } from 'node:module';
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { presentTransaction } from '../../src/http/present-transaction.js';
import type { Transaction } from '../../src/spec/types.js';

const jsQR = createRequire(import.meta.url)('jsqr') as typeof import('jsqr').default;

const CODE = '00020126580014br.gov.bcb.pix01363de12b26-3bac-4a92-a131-662026b11e035204000053039865406150.005802BR5915Default account6009SAO PAULO62160512SBX10000000263046060';
const view = (pixCode: string): Transaction => ({ id: '100000002', status: 'PENDING', pixCode }) as unknown as Transaction;

describe('presentTransaction', () => {
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

  it('leaves a transaction without a Pix code (or with an empty one) as it is', async () => {
    const empty = view('');
    expect(await presentTransaction(empty)).toBe(empty);
    const card = { id: '100000003', status: 'PENDING' } as unknown as Transaction;
    expect(await presentTransaction(card)).toBe(card);
  });
});
