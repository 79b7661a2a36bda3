import { pixQrPng } from '../pages/pix-qr.js';
import type { Transaction } from '../spec/types.js';

/**
 * Recent QR images by BR Code: a client polling a transaction does not re-render its PNG each time.
 * Rendering one costs ~9 ms of CPU, 30 times the rest of a lookup, so the cache covers a few
 * thousand Pix being polled at once (~5 KB of base64 each, ~10 MB at most): with 256, a
 * thousand polled transactions missed on every lookup.
 */
const QR_CACHE_SIZE = 2048;
const qrCache = new Map<string, string>();

async function qrBase64(code: string): Promise<string> {
  const cached = qrCache.get(code);
  if (cached !== undefined) return cached;
  const base64 = (await pixQrPng(code)).toString('base64');
  if (qrCache.size >= QR_CACHE_SIZE) qrCache.delete(qrCache.keys().next().value as string);
  qrCache.set(code, base64);
  return base64;
}

/**
 * A transaction as the API answers it: the stored view plus `qrCode`, the base64 PNG of
 * its Pix code, wherever the code is there. The image is derived, not stored: it would
 * multiply the size of every Pix record for something rebuilt in a millisecond.
 */
export async function presentTransaction(view: Transaction): Promise<Transaction> {
  const code = 'pixCode' in view ? view.pixCode : undefined;
  if (!code) return view;
  return { ...view, qrCode: await qrBase64(code) } as Transaction;
}
