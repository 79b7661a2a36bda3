import { rm } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import type { Journal } from './journal.js';
import { listSegments, segmentPath } from './segments.js';
import type { Logger } from './types.js';
import { scriptUrl } from '../package-paths.js';

export interface CompactRequest {
  file: string;
  /** last closed segment to fold into the snapshot */
  uptoSeq: number;
}

export interface CompactResult {
  snapshotBytes: number;
  records: number;
  /** bytes of torn or corrupt segment tails that were skipped */
  droppedBytes: number;
}

/** The compaction worker's script (src/worker-url.ts). */
export function compactWorkerUrl(): URL {
  return scriptUrl('store/compact-worker.js');
}

/**
 * Folds closed journal segments into the snapshot in a worker thread, so
 * serialising a large state never blocks the event loop. Triggered when the
 * current segment outgrows both a floor and the last snapshot, which keeps
 * the rewriting cost amortised against the bytes appended.
 */
export class Compactor {
  private running: Promise<void> | undefined;
  private stopped = false;
  count = 0;

  constructor(
    private readonly file: string,
    private readonly journal: Journal,
    private readonly minBytes: number,
    public snapshotBytes: number,
    /** closed segments not yet folded into the snapshot: seq -> bytes */
    readonly closedSegments: Map<number, number>,
    private readonly logger?: Logger,
  ) {}

  maybeStart(): void {
    if (this.running || this.stopped) return;
    if (this.journal.bytes <= Math.max(this.minBytes, this.snapshotBytes)) return;
    this.track(
      this.run().catch((err: unknown) => this.logger?.warn({ err }, 'journal compaction failed; segments kept for the next attempt')),
    );
  }

  async compact(): Promise<void> {
    await this.idle();
    // A background trigger may have started one while we waited: two runs would share the temp file.
    while (this.running) await this.idle();
    const run = this.run();
    this.track(run.catch(() => undefined));
    return run;
  }

  /** Stops background triggers and waits for a running compaction. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.idle();
  }

  private async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private track(task: Promise<void>): void {
    const tracked = task.finally(() => {
      if (this.running === tracked) this.running = undefined;
    });
    this.running = tracked;
  }

  private async run(): Promise<void> {
    const closed = await this.journal.rotate();
    this.closedSegments.set(closed.seq, closed.bytes);
    const result = await runWorker({ file: this.file, uptoSeq: closed.seq });
    for (const seq of await listSegments(this.file)) {
      if (seq <= closed.seq) await rm(segmentPath(this.file, seq), { force: true });
    }
    for (const seq of this.closedSegments.keys()) {
      if (seq <= closed.seq) this.closedSegments.delete(seq);
    }
    this.snapshotBytes = result.snapshotBytes;
    this.count++;
    if (result.droppedBytes > 0) this.logger?.warn({ droppedBytes: result.droppedBytes }, 'compaction skipped corrupt journal tails');
    this.logger?.info({ journalSeq: closed.seq, ...result }, 'journal compacted');
  }
}

function runWorker(request: CompactRequest): Promise<CompactResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(compactWorkerUrl(), { workerData: request });
    let result: CompactResult | undefined;
    worker.once('message', (message: unknown) => {
      result = parseResult(message);
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (result) resolve(result);
      else reject(new Error(`compaction worker exited with code ${code} without a result`));
    });
  });
}

function parseResult(message: unknown): CompactResult | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const { snapshotBytes, records, droppedBytes } = message as { [key: string]: unknown };
  if (typeof snapshotBytes !== 'number' || typeof records !== 'number' || typeof droppedBytes !== 'number') return undefined;
  return { snapshotBytes, records, droppedBytes };
}
