import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { basic } from '../helpers/sandbox.js';
import { spawnSandbox, type SandboxProcess } from '../helpers/process.js';

let dir: string;
const procs: SandboxProcess[] = [];
afterEach(() => {
  for (const p of procs.splice(0)) p.child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const auth = { authorization: basic('sk_test_sandbox'), 'content-type': 'application/json' };

describe('kill -9 during a burst of creates', () => {
  it('keeps every product whose 201 was sent', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sandbox-crash-'));
    const file = join(dir, 'sandbox.json');
    // A tiny compaction threshold makes compactions run during the burst as well.
    const first = await spawnSandbox(['--data', file], { SANDBOX_COMPACT_MIN_BYTES: '20000' });
    procs.push(first);
    const acknowledged: string[] = [];
    let killed = false;
    const worker = async (w: number): Promise<void> => {
      for (let i = 0; !killed; i++) {
        try {
          const res = await fetch(`${first.url}/v2/products`, {
            method: 'POST',
            headers: auth,
            body: JSON.stringify({ name: `Burst ${w}-${i}`, externalId: `burst-${w}-${i}`, metadata: { w, i } }),
          });
          if (res.status === 201) acknowledged.push(((await res.json()) as { id: string }).id);
        } catch {
          return; // the process is gone: requests without an answer prove nothing either way
        }
        if (acknowledged.length >= 400 && !killed) {
          killed = true;
          first.child.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, (_, w) => worker(w)));
    expect(await first.exited).toBeNull();
    expect(acknowledged.length).toBeGreaterThanOrEqual(400);

    const second = await spawnSandbox(['--data', file]);
    procs.push(second);
    const missing: string[] = [];
    for (const id of acknowledged) {
      const res = await fetch(`${second.url}/v2/products/${id}`, { headers: auth });
      if (res.status !== 200) missing.push(id);
    }
    expect(missing).toEqual([]);
    // The store still takes writes after recovery.
    const after = await fetch(`${second.url}/v2/products`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'After crash' }) });
    expect(after.status).toBe(201);
  });
});
