import { QrRenderer } from '../pages/qr-renderer.js';
import type { Transaction } from '../spec/types.js';
import { keepJsonText } from './json-text.js';

/**
 * QR images by BR Code, least recently used dropped first, bounded by their size rather than
 * their number. A Pix gets its image in the 201, and the same image again on every lookup and
 * transition answer (GET, pay, expire...), usually within minutes: kept here, those answers
 * cost no rendering (~0.4 ms of CPU each, most of such an answer's cost). An entry is ~1.3 KB
 * (a ~150-character code and a ~1 KB base64 PNG), so 32 MiB keeps the last ~25,000 Pix —
 * a webhook storm paying ten thousand recent charges at 500/s hits every time — while a store
 * of a million transactions costs no more memory than that: older ones are drawn again when
 * asked for, which an integration seldom does.
 */
export const QR_CACHE_BYTES = 32 * 1024 * 1024;
const qrCache = new Map<string, string>();
const renderer = new QrRenderer();
let qrCacheBytes = 0;
// V8 keeps these ASCII strings one byte per character; the Map entry itself ~100 bytes more.
const entryBytes = (code: string, base64: string): number => code.length + base64.length + 100;

async function qrBase64(code: string): Promise<string> {
  const cached = qrCache.get(code);
  if (cached !== undefined) {
    // Re-inserted: a Map iterates in insertion order, so its first key is the least recently used.
    qrCache.delete(code);
    qrCache.set(code, cached);
    return cached;
  }
  const base64 = await renderer.render(code);
  // Two answers rendering the same code concurrently: keep one entry.
  if (!qrCache.has(code)) {
    qrCache.set(code, base64);
    qrCacheBytes += entryBytes(code, base64);
  }
  while (qrCacheBytes > QR_CACHE_BYTES) {
    const [oldest, image] = qrCache.entries().next().value as [string, string];
    qrCache.delete(oldest);
    qrCacheBytes -= entryBytes(oldest, image);
  }
  return base64;
}

/**
 * The last presented Pix answers, by the stored view they present (views are replaced, never
 * changed, by a transition): a transaction polled while nothing happens to it is answered
 * with the same object, whose JSON text is kept (src/http/json-text.ts). Bounded by count;
 * an entry is ~3 KB (the object and its text).
 */
export const PRESENTED_CACHE_ENTRIES = 4096;
const presented = new Map<Transaction, Transaction>();

/**
 * A transaction as the API answers it: the stored view plus `qrCode`, the base64 PNG of
 * its Pix code, wherever the code is there. The image is derived, not stored: it would
 * multiply the size of every Pix record for something rebuilt in half a millisecond.
 */
export async function presentTransaction(view: Transaction): Promise<Transaction> {
  const code = 'pixCode' in view ? view.pixCode : undefined;
  if (!code) return view;
  const known = presented.get(view);
  if (known !== undefined) {
    presented.delete(view);
    presented.set(view, known);
    return known;
  }
  const answer = keepJsonText({ ...view, qrCode: await qrBase64(code) } as Transaction);
  presented.set(view, answer);
  if (presented.size > PRESENTED_CACHE_ENTRIES) presented.delete(presented.keys().next().value as Transaction);
  return answer;
}
