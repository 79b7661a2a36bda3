import type { Transaction } from '../spec/types.js';
import type { JsonTexts } from './json-text.js';

/** Draws a Pix code's QR image as base64 PNG (src/pages/qr-renderer.ts, on a worker thread). */
export interface QrDrawer {
  render(code: string): Promise<string>;
}

/**
 * QR images by BR Code, least recently used dropped first, bounded by their size rather than
 * their number. A Pix gets its image in the 201, and the same image again on every lookup and
 * transition answer (GET, pay, expire...), usually within minutes: kept here, those answers
 * cost no rendering (most of such an answer's CPU: docs/benchmarks.md). An entry is ~1.3 KB
 * (a ~150-character code and a ~1 KB base64 PNG), so 32 MiB keeps the last ~25,000 Pix —
 * a webhook storm paying ten thousand recent charges at 500/s hits every time — while a store
 * of a million transactions costs no more memory than that: older ones are drawn again when
 * asked for, which an integration seldom does.
 */
export const QR_CACHE_BYTES = 32 * 1024 * 1024;

/**
 * The last presented Pix answers, by the stored view they present (views are replaced, never
 * changed, by a transition): a transaction polled while nothing happens to it is answered
 * with the same object, whose JSON text is kept (src/http/json-text.ts). Bounded by count;
 * an entry is ~3 KB (the object and its text).
 */
export const PRESENTED_CACHE_ENTRIES = 4096;

// V8 keeps these ASCII strings one byte per character; the Map entry itself ~100 bytes more.
const entryBytes = (code: string, base64: string): number => code.length + base64.length + 100;

/**
 * A transaction as the API answers it: the stored view plus `qrCode`, the base64 PNG of its
 * Pix code, wherever the code is there. The image is derived, not stored: it would multiply
 * the size of every Pix record for something rebuilt in half a millisecond. One presenter
 * per sandbox, with its own caches.
 */
export class TransactionPresenter {
  private readonly qrCache = new Map<string, string>();
  private qrCacheBytes = 0;
  private readonly presented = new Map<Transaction, Transaction>();

  constructor(
    private readonly drawer: QrDrawer,
    /** The sandbox's kept JSON texts: a presented answer is sent as the bytes of its first send. */
    private readonly texts: JsonTexts,
  ) {}

  async present(view: Transaction): Promise<Transaction> {
    const code = 'pixCode' in view ? view.pixCode : undefined;
    if (!code) return view;
    const known = this.presented.get(view);
    if (known !== undefined) {
      this.presented.delete(view);
      this.presented.set(view, known);
      return known;
    }
    const withImage = { ...view, qrCode: await this.qrBase64(code) };
    const answer: Transaction = withImage;
    this.texts.keep(answer);
    this.presented.set(view, answer);
    if (this.presented.size > PRESENTED_CACHE_ENTRIES) this.presented.delete(this.presented.keys().next().value as Transaction);
    return answer;
  }

  private async qrBase64(code: string): Promise<string> {
    const cached = this.qrCache.get(code);
    if (cached !== undefined) {
      // Re-inserted: a Map iterates in insertion order, so its first key is the least recently used.
      this.qrCache.delete(code);
      this.qrCache.set(code, cached);
      return cached;
    }
    const base64 = await this.drawer.render(code);
    // Two answers rendering the same code concurrently: keep one entry.
    if (!this.qrCache.has(code)) {
      this.qrCache.set(code, base64);
      this.qrCacheBytes += entryBytes(code, base64);
    }
    while (this.qrCacheBytes > QR_CACHE_BYTES) {
      const [oldest, image] = this.qrCache.entries().next().value as [string, string];
      this.qrCache.delete(oldest);
      this.qrCacheBytes -= entryBytes(oldest, image);
    }
    return base64;
  }
}
