import { getPriority } from 'node:os';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';

/** src/store/background-priority.ts, as the compaction worker runs it: from the built module, on a worker thread. */
const built = new URL('../../dist/store/background-priority.js', import.meta.url).href;

function inWorker(): Promise<{ tid: number | null; nice: number | null; mainNice: number }> {
  const code = [
    "import { parentPort } from 'node:worker_threads';",
    "import { getPriority } from 'node:os';",
    `const { lowerThreadPriority } = await import(${JSON.stringify(built)});`,
    'const tid = lowerThreadPriority() ?? null;',
    'parentPort.postMessage({ tid, nice: tid === null ? null : getPriority(tid), mainNice: getPriority(process.pid) });',
  ].join('\n');
  const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(code)}`));
  return new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

describe('lowerThreadPriority', () => {
  it('gives the calling worker thread the lowest priority and leaves the main thread, which answers requests, as it was', async () => {
    const before = getPriority(process.pid);
    const seen = await inWorker();
    if (process.platform !== 'linux') {
      expect(seen.tid).toBeNull();
      return;
    }
    expect(seen.tid).not.toBe(process.pid);
    expect(seen.nice).toBe(19);
    expect(seen.mainNice).toBe(before);
    expect(getPriority(process.pid)).toBe(before);
  });
});
