/**
 * Pix QR images of BR Codes like the one given, drawn by a build's own drawing code (its
 * dist/pages/pix-qr.js: the symbol, the PNG, then base64 as the purchase answers it), in this
 * one thread: the floor under the worker-thread column of the purchase's CPU.
 *   node bench/lib/qr-alone.mjs <dist dir> <BR Code>  →  {"usPerImage":…,"count":…,…}
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { deflateSync, inflateSync } from 'node:zlib';

const [dist, code] = process.argv.slice(2);
if (!dist || !code) throw new Error('usage: qr-alone.mjs <dist dir> <BR Code>');
const { pixQrPng } = await import(pathToFileURL(path.join(dist, 'pages', 'pix-qr.js')).href);
const COUNT = 2000;
/**
 * COUNT codes like it, its last run of digits before the CRC (the txid's number) counting up:
 * one code drawn over and over measured ~40 % less, the CPU learning that one image's
 * branches, which no purchase repeats.
 */
const digits = /[0-9]{6,}(?=6304[0-9A-F]{4}$)/.exec(code) ?? /[0-9]{4,}/.exec(code);
const codes = Array.from({ length: COUNT }, (_, i) =>
  digits === null ? code : `${code.slice(0, digits.index)}${String((Number(digits[0].slice(-9)) + i) % 10 ** Math.min(9, digits[0].length)).padStart(digits[0].length, '0')}${code.slice(digits.index + digits[0].length)}`,
);
const runs = [];
// The first round warms the JIT up; the median of the other three is reported.
for (let round = 0; round < 4; round++) {
  const before = process.cpuUsage();
  for (let i = 0; i < COUNT; i++) (await pixQrPng(codes[i])).toString('base64');
  const used = process.cpuUsage(before);
  runs.push((used.user + used.system) / COUNT);
}

/**
 * The PNG's own scanlines (its IDAT, inflated) compressed again by zlib alone: the share of
 * the image that is deflate, at zlib's fastest level that compresses (1) and stored (0).
 */
const pngs = await Promise.all(codes.map((c) => pixQrPng(c)));
const raws = pngs.map((png) => {
  const idat = png.indexOf('IDAT', 8, 'latin1');
  return inflateSync(png.subarray(idat + 4, idat + 4 + png.readUInt32BE(idat - 4)));
});
/** @param {number} level */
const deflateUs = (level) => {
  const rounds = [];
  for (let round = 0; round < 4; round++) {
    const before = process.cpuUsage();
    for (let i = 0; i < COUNT; i++) deflateSync(raws[i], { level });
    const used = process.cpuUsage(before);
    rounds.push((used.user + used.system) / COUNT);
  }
  return median(rounds.slice(1));
};
/** @param {number[]} values */
function median(values) {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
}
process.stdout.write(`${JSON.stringify({ usPerImage: median(runs.slice(1)), count: COUNT, pngBytes: median(pngs.map((p) => p.length)), rawBytes: raws[0]?.length ?? 0, deflateLevel1Us: deflateUs(1), storedUs: deflateUs(0) })}\n`);
