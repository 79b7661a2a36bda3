import { readlinkSync } from 'node:fs';
import { constants, setPriority } from 'node:os';

/**
 * Lowers the CPU priority of the calling thread (not its process) to the lowest, and returns
 * its thread id; undefined where that cannot be done (not Linux, or not permitted), and the
 * thread then runs as before. For background work such as compaction: on a small machine it
 * competed for a core with the thread that answers requests, and every answer waited for it.
 * Linux gives each thread its own nice value, addressed by thread id, which
 * /proc/thread-self names.
 */
export function lowerThreadPriority(): number | undefined {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isInteger(tid) || tid <= 0) return undefined;
    setPriority(tid, constants.priority.PRIORITY_LOW);
    return tid;
  } catch {
    return undefined;
  }
}
