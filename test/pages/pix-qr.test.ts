import { createRequire } from 'node:module';
import { PNG } from 'pngjs';
import QRCode from 'qrcode';
import { describe, expect, it } from 'vitest';
import { QR_OPTIONS, pixQrPng, pixQrSegments } from '../../src/pages/pix-qr.js';

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

  it('draws every module of the symbol qrcode builds as a square of whole pixels, in a white quiet zone', async () => {
    const png = await pixQrPng(SAMPLE);
    const image = PNG.sync.read(png);
    const { modules } = QRCode.create(pixQrSegments(SAMPLE), QR_OPTIONS);
    const side = modules.size + 4;
    expect(image.width % side).toBe(0);
    const scale = image.width / side;
    const black = (x: number, y: number): boolean => image.data[(y * image.width + x) * 4] === 0;
    for (let y = 0; y < image.height; y++) {
      for (let x = 0; x < image.width; x++) {
        const mx = Math.floor(x / scale) - 2;
        const my = Math.floor(y / scale) - 2;
        const inside = mx >= 0 && my >= 0 && mx < modules.size && my < modules.size;
        const expected = inside && modules.get(my, mx) === 1;
        if (black(x, y) !== expected) throw new Error(`pixel ${x},${y} (module ${mx},${my}) should be ${expected ? 'black' : 'white'}`);
      }
    }
  });

  it('decodes back to the code for codes of many lengths (every QR version a Pix uses)', async () => {
    for (const extra of [0, 20, 60, 120, 200]) {
      const code = `${SAMPLE.slice(0, -4)}${'X'.repeat(extra)}`;
      const image = PNG.sync.read(await pixQrPng(code));
      // Whole pixels per module: as close to 300 px as an integer scale allows (within half a module's row).
      const side = QRCode.create(pixQrSegments(code), QR_OPTIONS).modules.size + 4;
      expect(Math.abs(image.width - 300), `${side} modules wide`).toBeLessThanOrEqual(side / 2);
      expect(jsQR(new Uint8ClampedArray(image.data), image.width, image.height)?.data).toBe(code);
    }
  });

  it('splits a BR Code into segments that spell it, as small a symbol as qrcode\'s optimal split on Pix codes', () => {
    const codes = [
      SAMPLE,
      '00020126580014br.gov.bcb.pix01363de12b26-3bac-4a92-a131-662026b11e035204000053039865406150.005802BR5915Default account6009SAO PAULO62160512SBX10000000263046060',
      '00020101021226810014br.gov.bcb.pix2559pix.example.com/qr/v2/cobv/9d36b84fc70b478fb95c12729b90ca255204000053039865406150.005802BR5917LOJA EXEMPLO LTDA6009SAO PAULO62070503***63046BF1',
      '00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D',
      'São Paulo ção 123456789012 abc',
      '12345678',
      'ab',
    ];
    for (const code of codes) {
      const segments = pixQrSegments(code);
      expect(segments.map((s) => s.data).join('')).toBe(code);
      for (const s of segments) {
        if (s.mode === 'numeric') expect(s.data).toMatch(/^[0-9]+$/);
        if (s.mode === 'alphanumeric') expect(s.data).toMatch(/^[0-9A-Z $%*+\-./:]+$/);
      }
      expect(QRCode.create(segments, QR_OPTIONS).version, code).toBeLessThanOrEqual(QRCode.create(code, QR_OPTIONS).version);
    }
  });

  it('refuses an empty code', async () => {
    await expect(pixQrPng('')).rejects.toThrow(RangeError);
  });
});
