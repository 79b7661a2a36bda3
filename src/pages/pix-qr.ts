import QRCode from 'qrcode';

/**
 * The Pix QR as a PNG. Level M is what the central bank's manual recommends for BR Codes: enough
 * redundancy for a phone camera on a printed or on-screen code without growing the symbol much.
 */
export async function pixQrPng(code: string): Promise<Buffer> {
  if (code.length === 0) throw new RangeError('a Pix QR needs a non-empty BR Code');
  return QRCode.toBuffer(code, { type: 'png', errorCorrectionLevel: 'M', margin: 2, width: 300, rendererOpts: PNG_ENCODING });
}

/**
 * The same pixels and PNG colour type as pngjs's defaults, encoded for half the CPU: every Pix
 * 201 renders one. The defaults try all five PNG filters on every row (~8 ms of CPU, some 25
 * times the rest of a purchase); Paeth alone on every row takes ~4 ms,
 * for a file within a few per cent of the same size. qrcode hands rendererOpts to pngjs
 * as they are; its typings name only the deflate options (9 is pngjs's default level).
 */
const PNG_ENCODING = { filterType: 4, deflateLevel: 9 };
