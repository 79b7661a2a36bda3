import QRCode from 'qrcode';

/**
 * The Pix QR as a PNG. Level M is what the central bank's manual recommends for BR Codes: enough
 * redundancy for a phone camera on a printed or on-screen code without growing the symbol much.
 */
export async function pixQrPng(code: string): Promise<Buffer> {
  if (code.length === 0) throw new RangeError('a Pix QR needs a non-empty BR Code');
  return QRCode.toBuffer(code, { type: 'png', errorCorrectionLevel: 'M', margin: 2, width: 300 });
}
