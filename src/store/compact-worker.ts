import { parentPort, workerData } from 'node:worker_threads';
import type { CompactRequest, CompactResult } from './compaction.js';
import { listSegments, scanSegment, segmentPath } from './segments.js';
import { readSnapshot, writeSnapshot } from './snapshot.js';
import { applyOp } from './state.js';
import { lowerThreadPriority } from './background-priority.js';

/** Rebuilds the state from disk rather than from the main thread's memory, so nothing large crosses threads. */
async function compact({ file, uptoSeq }: CompactRequest): Promise<CompactResult> {
  const { state, journalSeq } = await readSnapshot(file);
  let droppedBytes = 0;
  for (const seq of await listSegments(file)) {
    if (seq <= journalSeq || seq > uptoSeq) continue;
    const { validBytes, totalBytes } = await scanSegment(segmentPath(file, seq), (op) => applyOp(state, op));
    droppedBytes += totalBytes - validBytes;
  }
  const snapshotBytes = await writeSnapshot(file, state, uptoSeq);
  let records = 0;
  for (const collection of state.values()) records += collection.size;
  return { snapshotBytes, records, droppedBytes };
}

function parseRequest(data: unknown): CompactRequest {
  const { file, uptoSeq } = (data ?? {}) as { [key: string]: unknown };
  if (typeof file !== 'string' || typeof uptoSeq !== 'number') throw new Error('compact-worker: bad workerData');
  return { file, uptoSeq };
}

if (parentPort === null) throw new Error('compact-worker must run in a worker thread');
// Compaction is never waited for by a request: the thread answering them goes first.
lowerThreadPriority();
parentPort.postMessage(await compact(parseRequest(workerData)));
