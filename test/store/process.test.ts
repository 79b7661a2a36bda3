import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { ensureBuilt, useTmpDirs } from './helpers.js';

const tmpDir = useTmpDirs();
const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

beforeAll(ensureBuilt, 180_000);

interface Written {
  id: string;
  burst: number;
  payload: string;
}

const COMPACTIONS = /^#compactions (\d+)$/;

/**
 * Runs the writer until it has acknowledged `atLeast` ids and finished at least one
 * compaction, then SIGKILLs it mid-burst. Waiting for the compaction's own report rather
 * than for a number of writes keeps "across compactions" true however slow the machine is.
 */
function writeUntilKilled(file: string, prefix: string, atLeast: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fixture('writer.mjs'), file, String(64 * 1024), prefix], { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    let acked = 0;
    let compacted = false;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      const complete = (output + chunk).split('\n');
      const seen = output.split('\n').length - 1;
      output += chunk;
      for (const line of complete.slice(seen, -1)) {
        const match = COMPACTIONS.exec(line);
        if (match === null) acked++;
        else if (Number(match[1]) > 0) compacted = true;
      }
      if (acked >= atLeast && compacted) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('exit', (_code, signal) => {
      if (signal !== 'SIGKILL') return reject(new Error(`writer exited without being killed (${String(signal)})`));
      // Only complete lines were acknowledged; a partial one may have been cut by the kill.
      resolve(output.split('\n').slice(0, -1).filter((line) => !line.startsWith('#')));
    });
  });
}

const original = 'y'.repeat(300);

/**
 * Burst b+1 deletes `<b>_1` before committing `<b+1>_0` and rewrites `<b>_2`
 * before committing `<b+1>_1`; if that later commit was not acknowledged the
 * change may or may not have reached the disk.
 */
function allowedPayloads(id: string, acked: Set<string>): string[] {
  const match = /^(.+\.)(\d+)_(\d+)$/.exec(id);
  if (match === null) throw new Error(`unexpected id ${id}`);
  const [, prefix, burst, index] = match;
  const next = (i: number) => `${prefix}${Number(burst) + 1}_${i}`;
  if (index === '1') return acked.has(next(0)) ? ['deleted'] : ['deleted', original];
  if (index === '2') return acked.has(next(1)) ? ['updated'] : ['updated', original];
  return [original];
}

describe('process crashes', () => {
  it('keeps every acknowledged write after kill -9, across compactions', async () => {
    const file = path.join(tmpDir(), 'sandbox.json');
    const acked = new Set<string>();
    for (let round = 1; round <= 3; round++) {
      const ids = await writeUntilKilled(file, `k${round}.`, 3000);
      expect(ids.length).toBeGreaterThanOrEqual(3000);
      for (const id of ids) acked.add(id);

      const store = await Store.open({ file });
      const rows = store.collection<Written>('rows');
      for (const id of acked) expect(rows.get(id)?.payload ?? 'deleted', id).toBeOneOf(allowedPayloads(id, acked));
      await store.close();
    }
    // The last clean close folded everything into the data file.
    const files = readdirSync(path.dirname(file));
    expect(files).toEqual(['sandbox.json']);
    const snapshot = JSON.parse(readFileSync(file, 'utf8')) as { collections: { rows: Written[] } };
    const stored = new Set(snapshot.collections.rows.map((r) => r.id));
    const mustExist = [...acked].filter((id) => !allowedPayloads(id, acked).includes('deleted'));
    expect(mustExist.filter((id) => !stored.has(id))).toEqual([]);
  }, 60_000);

  it('keeps nothing on disk in memory mode', () => {
    const cwd = tmpDir();
    const out = execFileSync(process.execPath, [fixture('in-memory.mjs')], { cwd, encoding: 'utf8' });
    expect(JSON.parse(out)).toMatchObject({ records: 1000, journalBytes: 0, snapshotBytes: 0, compactions: 0 });
    expect(readdirSync(cwd)).toEqual([]);
  });
});
