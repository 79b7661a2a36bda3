// Style: the client creates a Pix charge and shows its code and QR straight from the 201,
// never reading the transaction again (five public clients do this).
import { createRequire } from 'node:module';
import { hasError, isStaticPix, parsePix } from 'pix-utils';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../helpers/catalog.js';
import { pixBody } from '../helpers/purchases.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';

const jsQR = createRequire(import.meta.url)('jsqr') as typeof import('jsqr').default;

interface PixCharge {
  id: string;
  pixCode: string;
  qrCodePng: Buffer;
  expiresAt: Date;
}

/** What such a client does with the creation answer: any field missing is a failed charge for it. */
function pixChargeFrom(body: Record<string, unknown>): PixCharge {
  const { id, pixCode, qrCode, expiresAt } = body;
  if (typeof id !== 'string' || typeof pixCode !== 'string' || pixCode === '' || typeof qrCode !== 'string' || typeof expiresAt !== 'string') {
    throw new Error(`the Pix charge has no code to show: ${JSON.stringify(body)}`);
  }
  return { id, pixCode, qrCodePng: Buffer.from(qrCode, 'base64'), expiresAt: new Date(expiresAt) };
}

let sb: TestSandbox;
let client: Client;
beforeAll(async () => {
  // A long instruction delay: whatever the client shows can only come from the 201.
  sb = await startSandbox({ instructionDelayMs: 600_000 });
  client = (await createAccount(sb, undefined, { name: 'Loja Integração' })).client;
});
afterAll(() => sb.stop());

describe('a client that reads the Pix from the 201', () => {
  it('gets a valid BR Code for the amount, a QR image of it and its expiry, without polling', async () => {
    const res = await client.post<Record<string, unknown>>('/transactions/v2/purchase', pixBody({ amount: 4_990 }));
    expect(res.status).toBe(201);
    const charge = pixChargeFrom(res.body);
    const pix = parsePix(charge.pixCode);
    if (hasError(pix) || !isStaticPix(pix)) throw new Error(`not a static Pix: ${charge.pixCode}`);
    expect(pix.transactionAmount).toBe(49.9);
    expect(pix.merchantName).toBe('Loja Integracao');
    const image = PNG.sync.read(charge.qrCodePng);
    expect(jsQR(new Uint8ClampedArray(image.data), image.width, image.height)?.data).toBe(charge.pixCode);
    expect(charge.expiresAt.getTime()).toBeGreaterThan(Date.parse(String(res.body.createdAt)));
  });

  it('the same code is what a later lookup shows', async () => {
    const charge = pixChargeFrom((await client.post<Record<string, unknown>>('/transactions/v2/purchase', pixBody())).body);
    const read = await client.get<Record<string, unknown>>(`/transactions/${charge.id}`);
    expect(pixChargeFrom(read.body)).toEqual(charge);
  });
});
