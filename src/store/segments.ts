import { open, readdir } from 'node:fs/promises';
import path from 'node:path';
import { decodeStoredLine } from './codec.js';
import type { StoredOp } from './types.js';

const SEQ_DIGITS = 6;
const READ_CHUNK = 4 * 1024 * 1024;
const NEWLINE = 0x0a;

export function segmentPath(file: string, seq: number): string {
  return `${file}.journal.${String(seq).padStart(SEQ_DIGITS, '0')}`;
}

/** Sequence numbers of the journal segments beside `file`, ascending. */
export async function listSegments(file: string): Promise<number[]> {
  const prefix = `${path.basename(file)}.journal.`;
  const seqs: number[] = [];
  for (const name of await readdir(path.dirname(file))) {
    if (!name.startsWith(prefix)) continue;
    const suffix = name.slice(prefix.length);
    if (/^\d+$/.test(suffix)) seqs.push(Number(suffix));
  }
  return seqs.sort((a, b) => a - b);
}

export interface ScanResult {
  /** bytes up to the end of the last intact line */
  validBytes: number;
  totalBytes: number;
}

/**
 * Feeds every intact change to `onOp` and stops at the first torn or corrupt line: lines after
 * it cannot be trusted to be ordered after what was lost. The changes of a unit of work (a
 * header line, then its lines) are fed only once the last of them is read intact, and
 * `validBytes` never ends inside a unit: a unit cut short by a crash is dropped whole, and the
 * truncation at open removes it. Reads in chunks so a segment as big as a large snapshot never
 * becomes one string.
 */
export async function scanSegment(file: string, onOp: (op: StoredOp) => void): Promise<ScanResult> {
  const fh = await open(file, 'r');
  try {
    const totalBytes = (await fh.stat()).size;
    let validBytes = 0;
    /** Bytes read past validBytes: the lines of a unit whose last line has not come yet. */
    let unitBytes = 0;
    let unit: StoredOp[] = [];
    let unitLeft = 0;
    let carry = Buffer.alloc(0);
    for (;;) {
      // The unfinished last line of the previous chunk goes first, so no chunk is copied again.
      const chunk = Buffer.allocUnsafe(carry.length + READ_CHUNK);
      carry.copy(chunk, 0);
      const { bytesRead } = await fh.read(chunk, carry.length, READ_CHUNK, null);
      if (bytesRead === 0) break;
      const data = chunk.subarray(0, carry.length + bytesRead);
      let start = 0;
      for (let nl = data.indexOf(NEWLINE, start); nl !== -1; nl = data.indexOf(NEWLINE, start)) {
        const decoded = decodeStoredLine(data.subarray(start, nl));
        if (decoded === undefined) return { validBytes, totalBytes };
        const lineBytes = nl + 1 - start;
        start = nl + 1;
        if ('unit' in decoded) {
          // A header inside a unit: the writer never nests them, so the bytes are not ours.
          if (unitLeft > 0) return { validBytes, totalBytes };
          unitLeft = decoded.unit;
          unitBytes = lineBytes;
          continue;
        }
        if (unitLeft === 0) {
          onOp(decoded);
          validBytes += lineBytes;
          continue;
        }
        unit.push(decoded);
        unitBytes += lineBytes;
        if (--unitLeft === 0) {
          for (const op of unit) onOp(op);
          unit = [];
          validBytes += unitBytes;
          unitBytes = 0;
        }
      }
      carry = data.subarray(start);
    }
    return { validBytes, totalBytes };
  } finally {
    await fh.close();
  }
}

export async function truncateFile(file: string, length: number): Promise<void> {
  const fh = await open(file, 'r+');
  try {
    await fh.truncate(length);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * Data files hold secret keys and webhook secrets in clear: snapshots, journal segments and the
 * lock are created readable by their owner only, and a data directory the store creates too.
 */
export const DATA_FILE_MODE = 0o600;
export const DATA_DIR_MODE = 0o700;

/** Makes creations, renames and deletions in `dir` survive a power loss, not only their contents. */
export async function fsyncDir(dir: string): Promise<void> {
  // Windows cannot open a directory to fsync it and offers no equivalent, so there it is best effort.
  if (process.platform === 'win32') return;
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
