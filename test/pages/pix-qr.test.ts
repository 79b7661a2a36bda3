import { createRequire } from 'node:module';
import { PNG } from 'pngjs';
import QRCode from 'qrcode';
import { describe, expect, it } from 'vitest';
import { pixQrPng } from '../../src/pages/pix-qr.js';

// jsqr ships a UMD bundle whose typings claim an ES default export; require gets the function itself.
const jsQR = createRequire(import.meta.url)('jsqr') as typeof import('jsqr').default;

const SAMPLE =
  '00020126360014br.gov.bcb.pix0114112223330001815204000053039865406150.005802BR5917LOJA EXEMPLO LTDA6009SAO PAULO62150511PEDIDO1234563045150';

describe('pixQrPng', () => {
  it('returns a ~300 px PNG that decodes back to the BR Code', async () => {
    const png = await pixQrPng(SAMPLE);
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    const image = PNG.sync.read(png);
    expect(image.width).toBe(image.height);
    expect(image.width).toBeGreaterThanOrEqual(280);
    expect(image.width).toBeLessThanOrEqual(320);
    const decoded = jsQR(new Uint8ClampedArray(image.data), image.width, image.height);
    expect(decoded?.data).toBe(SAMPLE);
  });

  it('has the pixels of the default PNG of qrcode', async () => {
    const defaults = await QRCode.toBuffer(SAMPLE, { type: 'png', errorCorrectionLevel: 'M', margin: 2, width: 300 });
    const png = await pixQrPng(SAMPLE);
    const image = PNG.sync.read(png);
    const reference = PNG.sync.read(defaults);
    expect([image.width, image.height]).toEqual([reference.width, reference.height]);
    expect(Buffer.compare(image.data, reference.data)).toBe(0);
  });

  it('refuses an empty code', async () => {
    await expect(pixQrPng('')).rejects.toThrow(RangeError);
  });
});
