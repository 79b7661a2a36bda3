import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { DATA_DIR_MODE, listSegments, scanSegment, segmentPath, truncateFile } from './segments.js';
import { readSnapshot, tempPath } from './snapshot.js';
import { applyOp } from './state.js';
import type { Logger, State } from './types.js';

export interface Loaded {
  state: State;
  snapshotBytes: number;
  /** bytes of every replayed segment except the last, by seq */
  closedSegments: Map<number, number>;
  /** segment to keep appending to */
  currentSeq: number;
}

/**
 * Snapshot first, then the segments written after it in order. Segments the
 * snapshot already includes are leftovers of a compaction that crashed before
 * deleting them; replaying them would be harmless, deleting them saves work.
 */
export async function loadFromDisk(file: string, logger?: Logger): Promise<Loaded> {
  await mkdir(path.dirname(file), { recursive: true, mode: DATA_DIR_MODE });
  await rm(tempPath(file), { force: true });
  const { state, journalSeq, bytes: snapshotBytes } = await readSnapshot(file);
  const replayed = new Map<number, number>();
  for (const seq of await listSegments(file)) {
    const segment = segmentPath(file, seq);
    if (seq <= journalSeq) {
      await rm(segment, { force: true });
      continue;
    }
    replayed.set(seq, await replaySegment(segment, state, logger));
  }
  const currentSeq = Math.max(journalSeq + 1, ...replayed.keys());
  replayed.delete(currentSeq);
  return { state, snapshotBytes, closedSegments: replayed, currentSeq };
}

/** Truncates a torn tail so that later appends are not stranded behind it. */
async function replaySegment(segment: string, state: State, logger?: Logger): Promise<number> {
  const { validBytes, totalBytes } = await scanSegment(segment, (op) => applyOp(state, op));
  if (validBytes < totalBytes) {
    logger?.warn({ segment, validBytes, droppedBytes: totalBytes - validBytes }, 'journal segment has a torn or corrupt tail; truncating it');
    await truncateFile(segment, validBytes);
  }
  return validBytes;
}
