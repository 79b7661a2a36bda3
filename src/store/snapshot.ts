import { open, readFile, rename, stat } from 'node:fs/promises';
import path from 'node:path';
import { Low, type Adapter } from 'lowdb';
import { fsyncDir } from './segments.js';
import { isRecord } from './state.js';
import type { Record, State } from './types.js';

export interface Snapshot {
  format: 1;
  /** last journal segment whose ops are included */
  journalSeq: number;
  collections: { [name: string]: Record[] };
}

/**
 * lowdb's JSONFile (steno) renames a temp file but never fsyncs, so a power
 * loss can leave an empty snapshot after the journal it replaced is gone.
 */
export class DurableJsonFile<T> implements Adapter<T> {
  constructor(
    private readonly file: string,
    private readonly parse: (raw: unknown) => T,
  ) {}

  async read(): Promise<T | null> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    return this.parse(JSON.parse(text));
  }

  async write(data: T): Promise<void> {
    const tmp = tempPath(this.file);
    const fh = await open(tmp, 'w');
    try {
      await fh.writeFile(JSON.stringify(data));
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, this.file);
    await fsyncDir(path.dirname(this.file));
  }
}

export function tempPath(file: string): string {
  return `${file}.tmp`;
}

function parseSnapshot(raw: unknown): Snapshot {
  const fail = (why: string): never => {
    throw new Error(`invalid snapshot: ${why}`);
  };
  if (typeof raw !== 'object' || raw === null) return fail('not an object');
  const { format, journalSeq, collections } = raw as { [key: string]: unknown };
  if (format !== 1) return fail(`unsupported format ${String(format)}`);
  if (typeof journalSeq !== 'number' || !Number.isInteger(journalSeq)) return fail('bad journalSeq');
  if (typeof collections !== 'object' || collections === null) return fail('bad collections');
  for (const [name, records] of Object.entries(collections)) {
    if (!Array.isArray(records) || !records.every(isRecord)) return fail(`bad collection ${name}`);
  }
  return raw as Snapshot;
}

function snapshotDb(file: string): Low<Snapshot> {
  return new Low(new DurableJsonFile(file, parseSnapshot), { format: 1, journalSeq: 0, collections: {} });
}

export interface LoadedSnapshot {
  state: State;
  journalSeq: number;
  bytes: number;
}

export async function readSnapshot(file: string): Promise<LoadedSnapshot> {
  const db = snapshotDb(file);
  await db.read();
  const state: State = new Map();
  for (const [name, records] of Object.entries(db.data.collections)) {
    const byId = new Map<string, Record>();
    for (const record of records) byId.set(record.id, record);
    state.set(name, byId);
  }
  const bytes = await stat(file).then(
    (s) => s.size,
    () => 0,
  );
  return { state, journalSeq: db.data.journalSeq, bytes };
}

/** Returns the snapshot's size, which sets the next compaction threshold. */
export async function writeSnapshot(file: string, state: State, journalSeq: number): Promise<number> {
  const db = snapshotDb(file);
  const collections: Snapshot['collections'] = {};
  for (const [name, records] of state) {
    if (records.size > 0) collections[name] = Array.from(records.values());
  }
  db.data = { format: 1, journalSeq, collections };
  await db.write();
  return (await stat(file)).size;
}
