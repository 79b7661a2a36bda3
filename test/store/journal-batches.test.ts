import { readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeOp, opJson } from '../../src/store/codec.js';
import { Journal, nodeJournalFs, type JournalFile, type JournalFs } from '../../src/store/journal.js';
import { segmentPath } from '../../src/store/segments.js';
import { useTmpDirs } from './helpers.js';

const tmpDir = useTmpDirs();

/**
 * The real file system, except that each datasync waits until the test lets it through,
 * writes land at most `maxWrite` bytes at a time, and a write can be made to fail.
 */
function gatedFs(maxWrite = Infinity) {
  const gates: (() => void)[] = [];
  let syncsStarted = 0;
  let failNext: unknown;
  const opened: string[] = [];
  const writes: number[] = [];
  const fs: JournalFs = {
    async open(file, flags) {
      opened.push(path.basename(file));
      const fh = await nodeJournalFs.open(file, flags);
      const handle: JournalFile = {
        write: (async (buffer: Buffer, offset: number, length: number, position: number | null) => {
          if (failNext !== undefined) {
            const err = failNext;
            failNext = undefined;
            throw err;
          }
          writes.push(Math.min(length, maxWrite));
          return fh.write(buffer, offset, Math.min(length, maxWrite), position);
        }) as unknown as JournalFile['write'],
        datasync: async () => {
          syncsStarted++;
          await new Promise<void>((resolve) => gates.push(resolve));
          await fh.datasync();
        },
        close: () => fh.close(),
        stat: ((...args: Parameters<JournalFile['stat']>) => fh.stat(...args)) as JournalFile['stat'],
      };
      return handle;
    },
  };
  return {
    fs,
    opened,
    writes,
    get syncsStarted() {
      return syncsStarted;
    },
    failNextWrite(err: unknown) {
      failNext = err;
    },
    /** Waits for the next datasync to start, then lets it finish. */
    async releaseSync(): Promise<void> {
      while (gates.length === 0) await new Promise((resolve) => setImmediate(resolve));
      gates.shift()?.();
    },
  };
}

function settled(promise: Promise<unknown>): () => boolean {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  return () => done;
}

async function ticks(n = 20): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** What is appended for a put of { id }, and the line the journal writes for it. */
const op = (id: string): string => opJson('rows', id, { id });
const line = (id: string): string => encodeOp('rows', id, { id });

describe('Journal batches', () => {
  it('resolves a commit only when the batch holding its lines is synced, not a later one', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    const disk = gatedFs();
    let flushed = 0;
    const journal = await Journal.open(file, 1, () => flushed++, disk.fs);

    journal.append(op('a'));
    const first = journal.commit();
    const firstDone = settled(first);
    while (disk.syncsStarted === 0) await ticks(1);
    // Appended while the first batch is being synced: it must wait for the next batch.
    journal.append(op('b'));
    const second = journal.commit();
    const secondDone = settled(second);
    await ticks();
    expect(firstDone()).toBe(false);

    await disk.releaseSync();
    await first;
    await ticks();
    expect(secondDone()).toBe(false);
    expect(journal.flushes).toBe(1);
    expect(flushed).toBe(1);
    expect(journal.bytes).toBe(line('a').length);

    await disk.releaseSync();
    await second;
    expect(journal.flushes).toBe(2);
    expect(flushed).toBe(2);
    expect(journal.bytes).toBe(line('a').length + line('b').length);
    expect(readFileSync(segmentPath(file, 1), 'utf8')).toBe(line('a') + line('b'));

    // Nothing pending: resolves without another sync.
    await journal.commit();
    const closing = journal.close();
    await closing;
    expect(journal.flushes).toBe(2);
  });

  it('writes a batch completely even when the file system takes it a few bytes at a time', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    const disk = gatedFs(7);
    const journal = await Journal.open(file, 1, () => undefined, disk.fs);
    const lines = ['a', 'b', 'c'].map(line);
    for (const id of ['a', 'b', 'c']) journal.append(op(id));
    const committed = journal.commit();
    await disk.releaseSync();
    await committed;
    expect(readFileSync(segmentPath(file, 1), 'utf8')).toBe(lines.join(''));
    expect(disk.writes.every((n) => n <= 7)).toBe(true);
    expect(journal.bytes).toBe(lines.join('').length);
    const closing = journal.close();
    await closing;
  });

  it('continues an existing segment, counting its bytes, and refuses appends once closed', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    writeFileSync(segmentPath(file, 4), line('old'));
    const journal = await Journal.open(file, 4, () => undefined);
    expect(journal.seq).toBe(4);
    expect(journal.bytes).toBe(line('old').length);
    journal.append(op('new'));
    await journal.close();
    expect(() => journal.append(op('late'))).toThrow('store is closed');
    expect(readFileSync(segmentPath(file, 4), 'utf8')).toBe(line('old') + line('new'));
    // Closing again is the same close.
    await journal.close();
  });

  it('rotates to the next segment after writing what was appended, and reports the closed one', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    writeFileSync(segmentPath(file, 3), line('there'));
    const journal = await Journal.open(file, 2, () => undefined);
    journal.append(op('a'));
    const closed = await journal.rotate();
    expect(closed).toEqual({ seq: 2, bytes: line('a').length });
    expect(readFileSync(segmentPath(file, 2), 'utf8')).toBe(line('a'));
    expect(journal.seq).toBe(3);
    expect(journal.bytes).toBe(line('there').length);
    journal.append(op('b'));
    await journal.commit();
    expect(readFileSync(segmentPath(file, 3), 'utf8')).toBe(line('there') + line('b'));
    expect(statSync(segmentPath(file, 2)).size).toBe(line('a').length);
    await journal.close();
  });

  it('after a failed write rejects every commit with that error, drops later appends, and refuses to rotate', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    const disk = gatedFs();
    const journal = await Journal.open(file, 1, () => undefined, disk.fs);
    journal.append(op('a'));
    const ok = journal.commit();
    await disk.releaseSync();
    await ok;

    journal.append(op('b'));
    const waiting = journal.commit();
    // Not an Error: it is wrapped, keeping its text.
    disk.failNextWrite('disk on fire');
    await expect(waiting).rejects.toThrow('disk on fire');
    journal.append(op('c'));
    await expect(journal.commit()).rejects.toThrow('disk on fire');
    await expect(journal.rotate()).rejects.toThrow('disk on fire');
    await expect(journal.close()).rejects.toThrow('disk on fire');
    expect(readFileSync(segmentPath(file, 1), 'utf8')).toBe(line('a'));
    expect(journal.flushes).toBe(1);
    expect(disk.opened).toEqual(['sandbox.json.journal.000001']);
  });
});
