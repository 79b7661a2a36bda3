import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { encodeLines, unitHeaderJson } from './codec.js';
import { DATA_FILE_MODE, fsyncDir, segmentPath } from './segments.js';

/** What the journal does with a segment file: the seam through which tests observe or fail it. */
export type JournalFile = Pick<FileHandle, 'write' | 'datasync' | 'close' | 'stat'>;

export interface JournalFs {
  /** Opens a segment for appending (flags 'a'). */
  open(file: string, flags: 'a'): Promise<JournalFile>;
}

export const nodeJournalFs: JournalFs = { open: (file, flags) => open(file, flags, DATA_FILE_MODE) };

const KEPT_BUFFER_BYTES = 1024 * 1024;

interface Waiter {
  seq: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

/**
 * Append-only writer for the current journal segment with group commit:
 * lines appended while a flush is in progress wait for the next one, so
 * any number of concurrent commits share one write + one fdatasync.
 */
export class Journal {
  private pending: string[] = [];
  /** The last batch's buffer, kept for the next one unless a burst made it large. */
  private buffer: Buffer = Buffer.alloc(0);
  private appended = 0;
  private durable = 0;
  private waiters: Waiter[] = [];
  /** flushes and rotations never overlap, so every batch lands in exactly one segment */
  private chain: Promise<void> = Promise.resolve();
  private flushScheduled = false;
  private failure: Error | undefined;
  private closed = false;
  private closing: Promise<void> | undefined;
  /** number of write + fdatasync batches so far */
  flushes = 0;

  private constructor(
    private readonly file: string,
    private fh: JournalFile,
    private seqValue: number,
    private bytesValue: number,
    private readonly onFlushed: () => void,
    private readonly fs: JournalFs,
  ) {}

  /** Appends to segment `seq` of `file`, creating it if missing. */
  static async open(file: string, seq: number, onFlushed: () => void, fs: JournalFs = nodeJournalFs): Promise<Journal> {
    const { fh, bytes } = await openSegment(fs, file, seq);
    return new Journal(file, fh, seq, bytes, onFlushed, fs);
  }

  /** The write or datasync error that stopped the journal, if one did. */
  get failed(): Error | undefined {
    return this.failure;
  }

  get seq(): number {
    return this.seqValue;
  }

  /** size of the current segment */
  get bytes(): number {
    return this.bytesValue;
  }

  /** Queues one op (its opJson text), written as one line by the next flush. */
  append(op: string): void {
    this.appendUnit([op]);
  }

  /**
   * Queues the changes of one unit of work: one flush writes them all (they are queued in one
   * go), behind a header line when there are several, so that replay applies all or none.
   */
  appendUnit(ops: readonly string[]): void {
    if (this.closed) throw new Error('store is closed');
    // After a failed write the segment may end in a torn line, and anything appended
    // behind it would be dropped on replay, so nothing more is accepted as durable.
    if (this.failure || ops.length === 0) return;
    if (ops.length > 1) this.pending.push(unitHeaderJson(ops.length));
    for (const op of ops) this.pending.push(op);
    this.appended++;
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => {
        this.flushScheduled = false;
        void this.serial(() => this.flush());
      });
    }
  }

  commit(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.durable === this.appended) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.push({ seq: this.appended, resolve, reject }));
  }

  /** Closes the current segment once everything appended so far is in it. */
  rotate(): Promise<{ seq: number; bytes: number }> {
    return this.serial(async () => {
      await this.flush();
      if (this.failure) throw this.failure;
      const closed = { seq: this.seqValue, bytes: this.bytesValue };
      const next = await openSegment(this.fs, this.file, closed.seq + 1);
      const old = this.fh;
      this.fh = next.fh;
      this.seqValue = closed.seq + 1;
      this.bytesValue = next.bytes;
      await old.close();
      return closed;
    });
  }

  close(): Promise<void> {
    this.closed = true;
    this.closing ??= this.serial(async () => {
      await this.flush();
      await this.fh.close();
      if (this.failure) throw this.failure;
    });
    return this.closing;
  }

  private serial<R>(task: () => Promise<R>): Promise<R> {
    const result = this.chain.then(task);
    this.chain = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  private async flush(): Promise<void> {
    if (this.pending.length === 0 || this.failure) return;
    // One buffer, reused: flushes never overlap (serial), and a write is done with it when it returns.
    const { bytes: batch, buffer } = encodeLines(this.pending, this.buffer);
    this.buffer = buffer.length <= KEPT_BUFFER_BYTES ? buffer : Buffer.alloc(0);
    this.pending = [];
    const upto = this.appended;
    try {
      await writeAll(this.fh, batch);
      await this.fh.datasync();
    } catch (err) {
      this.fail(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    this.bytesValue += batch.length;
    this.flushes++;
    this.durable = upto;
    const covered = this.waiters.findIndex((w) => w.seq > upto);
    for (const waiter of this.waiters.splice(0, covered === -1 ? this.waiters.length : covered)) waiter.resolve();
    this.onFlushed();
  }

  private fail(err: Error): void {
    this.failure = err;
    this.pending = [];
    for (const waiter of this.waiters.splice(0)) waiter.reject(err);
  }
}

async function openSegment(fs: JournalFs, file: string, seq: number): Promise<{ fh: JournalFile; bytes: number }> {
  const fh = await fs.open(segmentPath(file, seq), 'a');
  const bytes = (await fh.stat()).size;
  // A new segment's directory entry must be durable before any line in it is acknowledged.
  await fsyncDir(path.dirname(file));
  return { fh, bytes };
}

async function writeAll(fh: JournalFile, data: Buffer): Promise<void> {
  let offset = 0;
  while (offset < data.length) {
    const { bytesWritten } = await fh.write(data, offset, data.length - offset, null);
    offset += bytesWritten;
  }
}
