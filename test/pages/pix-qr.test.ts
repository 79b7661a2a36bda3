import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { crc32, deflateSync } from 'node:zlib';
import fc from 'fast-check';
import { PNG } from 'pngjs';
import QRCode, { type QRCodeSegment } from 'qrcode';
import { describe, expect, it } from 'vitest';
import { QR_OPTIONS, pixQrPng, pixQrSegments as segmentsOf, type QrSegment } from '../../src/pages/pix-qr.js';

/** The segments as qrcode's types take them: byte mode as the text's UTF-8 bytes (what qrcode encodes a string to). */
const asQrcode = (segments: QrSegment[]): QRCodeSegment[] =>
  segments.map((s) => (s.mode === 'byte' ? { mode: 'byte', data: Buffer.from(s.data, 'utf8') } : s.mode === 'numeric' ? { mode: 'numeric', data: s.data } : { mode: 'alphanumeric', data: s.data }));
const pixQrSegments = (code: string): QRCodeSegment[] => asQrcode(segmentsOf(code));

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
      const segments = segmentsOf(code);
      expect(segments.map((s) => s.data).join('')).toBe(code);
      for (const s of segments) {
        if (s.mode === 'numeric') expect(s.data).toMatch(/^[0-9]+$/);
        if (s.mode === 'alphanumeric') expect(s.data).toMatch(/^[0-9A-Z $%*+\-./:]+$/);
      }
      expect(QRCode.create(asQrcode(segments), QR_OPTIONS).version, code).toBeLessThanOrEqual(QRCode.create(code, QR_OPTIONS).version);
    }
  });

  it('answers the same PNG bytes as before the encoder changed (qrcode 1.5, mask 0, level M)', async () => {
    // sha256 of the images the sandbox answered when qrcode built the symbol: integrations that
    // stored or compared a qrCode see the same bytes.
    const before: [string, string][] = [
      [SAMPLE, 'ebf7d354116e7be20b41d22e58b57c4a4ef16c3cd0a850c4e8e0aacc2ef151f4'],
      ['00020101021226810014br.gov.bcb.pix2559pix.example.com/qr/v2/cobv/9d36b84fc70b478fb95c12729b90ca255204000053039865406150.005802BR5917LOJA EXEMPLO LTDA6009SAO PAULO62070503***63046BF1', '031571605d7d2f4c7f10584f34254ac005c543b5d61aacb544acdc497a49df8c'],
      ['São Paulo ção 123456789012 abc', '335a3beacb887cf0b33b8c3c9abd92140d0801d8371c56275cc8bfbbff849b7e'],
      ['ab', '38712f182960588256f0cd497f193ef41eba7917f30038e2c92caa47d8508936'],
      ['12345678', '50d16bb1ca06e0db7c071dfffd31750f88fcd79dadcc33e39a216368c6bf9873'],
      ['X'.repeat(900), '7d163be741b547361b3e2c4412f60fe0325c664511c95c2417a77a5b9d259a3b'],
    ];
    for (const [code, sha256] of before) {
      expect(createHash('sha256').update(await pixQrPng(code)).digest('hex'), code.slice(0, 40)).toBe(sha256);
    }
  });

  it('draws the symbol qrcode builds for the same segments, level and mask, whatever the text', async () => {
    const brCodeLike = fc.array(
      fc.oneof(
        fc.stringMatching(/^[0-9]{1,20}$/),
        fc.stringMatching(/^[0-9A-Z $%*+\-.\/:]{1,30}$/),
        fc.string({ minLength: 1, maxLength: 30 }),
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 10 }),
      ),
      { minLength: 1, maxLength: 12 },
    ).map((parts) => parts.join(''));
    await fc.assert(
      fc.asyncProperty(brCodeLike, async (code) => {
        const image = PNG.sync.read(await pixQrPng(code));
        const { modules } = QRCode.create(pixQrSegments(code), QR_OPTIONS);
        const scale = image.width / (modules.size + 4);
        expect(Number.isInteger(scale)).toBe(true);
        // The centre pixel of every module, quiet zone included, is the module's colour.
        for (let my = -2; my < modules.size + 2; my++) {
          for (let mx = -2; mx < modules.size + 2; mx++) {
            const inside = mx >= 0 && my >= 0 && mx < modules.size && my < modules.size;
            const x = Math.floor((mx + 2 + 0.5) * scale);
            const y = Math.floor((my + 2 + 0.5) * scale);
            const black = image.data[(y * image.width + x) * 4] === 0;
            if (black !== (inside && modules.get(my, mx) === 1)) throw new Error(`module ${mx},${my} of ${JSON.stringify(code)}`);
          }
        }
      }),
      { numRuns: 150 },
    );
  });

  it('answers, for texts of every length a QR version holds, the bytes a plain per-pixel drawing of qrcode\'s symbol gives', async () => {
    // The drawing works a byte mask per module, laid out once per symbol size; this oracle
    // sets each pixel on its own, so a mask wrong for one size (a module across 1, 2 or 3 bytes) shows.
    // size 'max': lengths spread up to 1,200 (fast-check's default keeps strings to a dozen characters).
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1, maxLength: 1200, size: 'max' }), async (code) => {
        expect((await pixQrPng(code)).equals(plainPng(QRCode.create(pixQrSegments(code), QR_OPTIONS).modules))).toBe(true);
      }),
      { numRuns: 120 },
    );
  });

  it('refuses an empty code', async () => {
    await expect(pixQrPng('')).rejects.toThrow(RangeError);
  });
});

/** The PNG drawn pixel by pixel: 2-module quiet zone, ~300 px, each module row's first scanline unfiltered, the rest Up-filtered. */
function plainPng(modules: { size: number; get(row: number, col: number): number }): Buffer {
  const side = modules.size + 4;
  const scale = Math.max(1, Math.round(300 / side));
  const px = side * scale;
  const line = Math.ceil(px / 8) + 1;
  const raw = Buffer.alloc(line * px);
  for (let y = 0; y < px; y++) {
    if (y % scale !== 0) {
      raw[y * line] = 2;
      continue;
    }
    // Bits past the last pixel (padding to a whole byte) are white too.
    for (let x = 0; x < (line - 1) * 8; x++) {
      const mx = Math.floor(x / scale) - 2;
      const my = Math.floor(y / scale) - 2;
      const black = mx >= 0 && my >= 0 && mx < modules.size && my < modules.size && modules.get(my, mx) === 1;
      if (!black) raw[y * line + 1 + (x >> 3)]! |= 0x80 >> (x & 7);
    }
  }
  const chunk = (type: string, data: Buffer): Buffer => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const out = Buffer.alloc(8 + body.length);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), 4 + body.length);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(px, 0);
  header.writeUInt32BE(px, 4);
  header.set([1, 0, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw, { windowBits: 12, memLevel: 4, level: 3 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
