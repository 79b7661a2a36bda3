import { crc32, deflateSync } from 'node:zlib';
import { correction, generate, mode, type Mode } from 'lean-qr';

/**
 * Level M is what the central bank's manual recommends for BR Codes: enough redundancy for a
 * phone camera on a printed or on-screen code without growing the symbol much. Mask 0 is as
 * valid a QR as the one a mask search picks (the mask only evens out dark and light areas) and
 * saves the search. The level is both the least and the most allowed: the encoder would
 * otherwise raise it when the data leaves room, which changes the symbol.
 */
export const QR_OPTIONS = { errorCorrectionLevel: 'M', maskPattern: 0 } as const;
const SYMBOL_OPTIONS = { minCorrectionLevel: correction.M, maxCorrectionLevel: correction.M, mask: 0 } as const;
/** Quiet zone, in modules, and the target width in pixels of the image. */
const MARGIN = 2;
const TARGET_PX = 300;

/** A run of a BR Code and the QR mode it is written in. */
export interface QrSegment {
  data: string;
  mode: 'byte' | 'alphanumeric' | 'numeric';
}

/**
 * The Pix QR as a PNG: every Pix response carries one (`qrCode`), so it sits on the purchase's
 * hot path, and is the larger part of a purchase's CPU. The symbol comes from lean-qr (the same
 * symbol qrcode builds for the same segments, level and mask, at under half its cost: a test
 * holds the two equal); the PNG is a 1-bit greyscale image of whole-pixel modules drawn here,
 * byte for byte what the sandbox has always answered. The text goes in as segments
 * (pixQrSegments) rather than as a string, which an encoder would split by a costlier search;
 * answers about a known Pix take the image from src/http/present-transaction.ts's cache.
 */
export async function pixQrPng(code: string): Promise<Buffer> {
  if (code.length === 0) throw new RangeError('a Pix QR needs a non-empty BR Code');
  const symbol = generate(mode.multi(...pixQrSegments(code).map(modeOf)), SYMBOL_OPTIONS);
  return modulesPng(symbol);
}

const modeOf = (segment: QrSegment): Mode =>
  segment.mode === 'numeric' ? mode.numeric(segment.data)
  : segment.mode === 'alphanumeric' ? mode.alphaNumeric(segment.data)
  // Byte mode holds the text's UTF-8 bytes with no ECI, as qrcode writes it.
  : mode.bytes(Buffer.from(segment.data, 'utf8'));

/**
 * A BR Code split into QR segments the way its layout suggests: runs of QR's alphanumeric
 * characters (digits, A-Z, space, $%*+-./: — tags, lengths, amount, city, merchant name) as
 * alphanumeric (5.5 bits a character instead of byte mode's 8), long digit runs inside them as
 * numeric (3.3 bits), the rest (the lowercase key or URL) as bytes. A run is worth a segment
 * of its own only when what it saves beats the ~20 bits of header a segment switch costs,
 * hence the minimum lengths. On the sandbox's codes this gives the version an optimal split
 * gives, at a quarter of its cost; any split is a valid QR of the same text.
 */
export function pixQrSegments(code: string): QrSegment[] {
  const segments: QrSegment[] = [];
  const add = (data: string, mode: QrSegment['mode']): void => {
    if (data.length > 0) segments.push({ data, mode });
  };
  let last = 0;
  for (const run of code.matchAll(ALPHANUMERIC_RUN)) {
    add(code.slice(last, run.index), 'byte');
    let inRun = 0;
    for (const digits of run[0].matchAll(DIGIT_RUN)) {
      add(run[0].slice(inRun, digits.index), 'alphanumeric');
      add(digits[0], 'numeric');
      inRun = digits.index + digits[0].length;
    }
    add(run[0].slice(inRun), 'alphanumeric');
    last = run.index + run[0].length;
  }
  add(code.slice(last), 'byte');
  return segments;
}
const ALPHANUMERIC_RUN = /[0-9A-Z $%*+\-./:]{10,}/g;
const DIGIT_RUN = /[0-9]{8,}/g;

/**
 * A square 1-bit greyscale PNG: dark modules black, the rest and the quiet zone white. The
 * symbol is read through its own `get` (its public API), called here directly: every symbol
 * brings its own `get`, so V8 cannot inline it, and a wrapper around it doubled the cost of the
 * ~2,500 reads.
 */
function modulesPng(symbol: { readonly size: number; get(x: number, y: number): boolean }): Buffer {
  const { size } = symbol;
  const { scale, px, line, firstByte, byteIndex, byteMask } = layoutOf(size);
  // Each scanline: a filter byte, then the pixels; bit 1 is white in 1-bit greyscale. Only
  // the first scanline of each module row is drawn: the ones below it repeat it, and PNG's
  // Up filter (2) writes a repeated scanline as zeros, which deflate packs in a fraction of
  // the time the drawn copies take (same size), and which need no drawing here.
  const raw = scratchOf(line * px);
  for (let y = 0; y < px; y += scale) {
    const first = y * line;
    raw.fill(0xff, first + 1, first + line);
    for (let s = 1; s < scale; s++) raw[first + s * line] = 2;
    const my = y / scale - MARGIN;
    if (my < 0 || my >= size) continue;
    for (let mx = 0; mx < size; mx++) {
      if (!symbol.get(mx, my)) continue;
      for (let k = firstByte[mx]!, end = firstByte[mx + 1]!; k < end; k++) raw[first + byteIndex[k]!]! &= byteMask[k]!;
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(px, 0);
  header.writeUInt32BE(px, 4);
  header.set([1, 0, 0, 0, 0], 8); // bit depth 1, greyscale, deflate, adaptive filtering, no interlace
  return Buffer.concat([PNG_SIGNATURE, chunk('IHDR', header), chunk('IDAT', deflateSync(raw, DEFLATE)), chunk('IEND', Buffer.alloc(0))]);
}

/**
 * Where a module's pixels fall in a scanline, worked out once per symbol size (there are 40):
 * module `mx` clears `byteMask[k]` in byte `byteIndex[k]` of its row's scanline for k from
 * `firstByte[mx]` up to `firstByte[mx + 1]` (one to three bytes). Drawing is then a masked AND
 * per dark module instead of a bit loop per pixel, which took more CPU than the symbol itself.
 */
interface Layout {
  scale: number;
  px: number;
  line: number;
  firstByte: Int32Array;
  byteIndex: Int32Array;
  byteMask: Uint8Array;
}
const layouts = new Map<number, Layout>();

function layoutOf(size: number): Layout {
  const known = layouts.get(size);
  if (known) return known;
  const side = size + 2 * MARGIN;
  const scale = Math.max(1, Math.round(TARGET_PX / side));
  const px = side * scale;
  const line = Math.ceil(px / 8) + 1;
  const firstByte = new Int32Array(size + 1);
  const index: number[] = [];
  const mask: number[] = [];
  for (let mx = 0; mx < size; mx++) {
    firstByte[mx] = index.length;
    for (let x = (mx + MARGIN) * scale, end = x + scale; x < end; ) {
      const bit = x & 7;
      const take = Math.min(8 - bit, end - x);
      index.push(1 + (x >> 3));
      mask.push(~((0xff >> bit) & (0xff << (8 - bit - take))) & 0xff);
      x += take;
    }
  }
  firstByte[size] = index.length;
  const layout = { scale, px, line, firstByte, byteIndex: Int32Array.from(index), byteMask: Uint8Array.from(mask) };
  layouts.set(size, layout);
  return layout;
}

/**
 * One zeroed buffer for the raw image, reused: deflateSync reads it before returning, and a
 * fresh 12 KB buffer per image was garbage the collector then chased on every purchase.
 */
let scratch = new Uint8Array(0);
function scratchOf(length: number): Uint8Array {
  if (scratch.length !== length) scratch = new Uint8Array(length);
  else scratch.fill(0);
  return scratch;
}

/**
 * The image is ~12 KB before compression: a 4 KB window and small hash tables find the same
 * repeats while zlib sets up and clears a fraction of the default's ~260 KB of state on every
 * image. Level 3 is zlib's last "fast" level (no lazy matching): a third of the default
 * level's CPU for a PNG ~10 % larger (~870 bytes instead of ~780 for a typical BR Code).
 */
const DEFLATE = { windowBits: 12, memLevel: 4, level: 3 } as const;

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}
