import { setImmediate } from 'node:timers';
import { Worker } from 'node:worker_threads';
import { pixQrPng } from './pix-qr.js';
import type { QrJob, QrResult } from './qr-worker.js';
import { scriptUrl } from '../package-paths.js';


interface Waiting {
  code: string;
  resolve: (base64: string) => void;
  reject: (error: Error) => void;
}

const drawHere = (code: string): Promise<string> => pixQrPng(code).then((png) => png.toString('base64'));

/**
 * Draws Pix QR images on the thread that asks. For the shared store: its instances scale as
 * processes, and nothing of theirs waits on a local fsync to overlap with; a worker thread
 * per instance only competes with them and PostgreSQL for the cores: drawn here, purchases
 * were faster and cheaper (docs/benchmarks.md, "Figures behind choices in the code").
 */
export class InlineQrDrawer {
  render(code: string): Promise<string> {
    return drawHere(code);
  }
}

/**
 * Draws Pix QR images (base64 PNG) on a worker thread. Every new Pix answer carries one and
 * drawing it was about a third of a purchase's CPU, on the one thread that also answers
 * every request; the worker draws it on the other core while the main thread goes on (and
 * while the purchase's fdatasync runs). The codes a turn of the event loop asks for go to the
 * worker in one message at the end of the turn, and come back in one: a message each way per
 * image cost both threads more than the batching's wait of the rest of a turn. If the worker
 * cannot start or dies, images are drawn on the main thread as before: the same bytes either way.
 */
export class QrRenderer {
  private worker: Worker | undefined;
  private failed = false;
  private nextId = 0;
  private readonly waiting = new Map<number, Waiting>();
  private batch: QrJob[] = [];

  /** `url`: the worker script (tests give one that fails). */
  constructor(private readonly url: URL = scriptUrl('pages/qr-worker.js')) {}

  render(code: string): Promise<string> {
    const worker = this.failed ? undefined : (this.worker ?? this.start());
    if (!worker) return drawHere(code);
    const id = this.nextId++;
    return new Promise<string>((resolve, reject) => {
      this.waiting.set(id, { code, resolve, reject });
      if (this.waiting.size === 1) worker.ref();
      this.batch.push({ id, code });
      // node:timers' own setImmediate, so that a test's fake timers cannot hold images back.
      if (this.batch.length === 1) setImmediate(this.send);
    });
  }

  private readonly send = (): void => {
    const jobs = this.batch;
    this.batch = [];
    // A worker lost meanwhile has handed its jobs, these included, to the main thread.
    if (this.worker && jobs.length > 0) this.worker.postMessage(jobs);
  };

  private start(): Worker | undefined {
    let worker: Worker;
    try {
      worker = new Worker(this.url);
    } catch {
      this.failed = true;
      return undefined;
    }
    // Idle, it holds no process open; a job in flight holds it (ref) until answered.
    worker.unref();
    worker.on('message', (results: QrResult[]) => {
      for (const result of results) {
        const waiting = this.waiting.get(result.id);
        if (!waiting) continue;
        this.waiting.delete(result.id);
        if ('base64' in result) waiting.resolve(result.base64);
        else waiting.reject(new Error(result.error));
      }
      if (this.waiting.size === 0) worker.unref();
    });
    const lost = (): void => {
      if (this.worker !== worker) return;
      this.failed = true;
      this.worker = undefined;
      // The jobs it had are drawn here instead.
      const pending = [...this.waiting.values()];
      this.waiting.clear();
      this.batch = [];
      for (const { code, resolve, reject } of pending) drawHere(code).then(resolve, reject);
    };
    worker.on('error', lost);
    worker.on('exit', lost);
    this.worker = worker;
    return worker;
  }
}
