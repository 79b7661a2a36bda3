import { open, readFile, rename, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Low, type Adapter } from 'lowdb';
import { DATA_FILE_MODE, fsyncDir } from './segments.js';
import { isRecord } from './state.js';
import { LoadedRecords } from './loaded-records.js';
import { RawRecord, type State } from './types.js';

/** What the snapshot file holds: every record, and the last journal segment they include. */
export interface SnapshotData {
  journalSeq: number;
  state: State;
}

const FORMAT = 2;
const HEADER = /^\{"format":2,"journalSeq":(\d+),"collections":\{$/;
const READ_CHUNK = 4 * 1024 * 1024;
const WRITE_CHUNK = 1024 * 1024;
const NEWLINE = 0x0a;

/**
 * lowdb adapter for the snapshot, which may hold more records than V8 can put
 * in one string: it is written and read one record per line, yet the file is
 * still one JSON document (`{"format":2,"journalSeq":n,"collections":{"name":[
 * record,\n ...]}}`) that JSON.parse, jq or an editor reads whole.
 *
 * lowdb's JSONFile (steno) renames a temp file but never fsyncs, so a power
 * loss could leave an empty snapshot after the journal it replaced is gone:
 * this one fsyncs the temp file and the directory around the rename.
 */
export class StreamingSnapshotFile implements Adapter<SnapshotData> {
  constructor(private readonly file: string) {}

  async read(): Promise<SnapshotData | null> {
    let fh: FileHandle;
    try {
      fh = await open(this.file, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    try {
      const streamed = await readLines(fh);
      if (streamed !== undefined) return streamed;
    } finally {
      await fh.close();
    }
    // Format 1 (one JSON string), or a file someone reformatted or wrote by hand.
    return parseWhole(JSON.parse(await readFile(this.file, 'utf8')));
  }

  async write(data: SnapshotData): Promise<void> {
    const tmp = tempPath(this.file);
    // Keys and webhook secrets are stored in clear: readable by the owner only.
    const fh = await open(tmp, 'w', DATA_FILE_MODE);
    try {
      const out = new ChunkedWriter(fh);
      await out.text(`{"format":${FORMAT},"journalSeq":${data.journalSeq},"collections":{`);
      let firstCollection = true;
      for (const [name, records] of data.state) {
        if (records.size === 0) continue;
        await out.text(`${firstCollection ? '' : ','}\n${JSON.stringify(name)}:[`);
        firstCollection = false;
        let first = true;
        for (const record of records.values()) {
          if (record instanceof RawRecord) {
            // Unparsed records go back as the bytes they were read as, neighbours in one piece.
            if (!first && out.extendRun(record)) continue;
            await out.text(first ? '\n' : ',\n');
            out.startRun(record);
          } else {
            await out.text(`${first ? '\n' : ',\n'}${JSON.stringify(record)}`);
          }
          first = false;
        }
        await out.text('\n]');
      }
      await out.text('\n}}\n');
      await out.flush();
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, this.file);
    await fsyncDir(path.dirname(this.file));
  }
}

/** Buffers text and runs of unparsed records' bytes, and writes them about a megabyte at a time. */
class ChunkedWriter {
  private texts: string[] = [];
  private parts: Buffer[] = [];
  private size = 0;
  private run: { chunk: Buffer; start: number; end: number } | undefined;

  constructor(private readonly fh: FileHandle) {}

  async text(value: string): Promise<void> {
    this.endRun();
    this.texts.push(value);
    this.size += value.length;
    if (this.size >= WRITE_CHUNK) await this.flush();
  }

  startRun(record: RawRecord): void {
    this.endRun();
    this.run = { chunk: record.chunk, start: record.start, end: record.end };
  }

  /** True when `record` follows the current run in its chunk, separated by exactly `,\n`, as the reader found it. */
  extendRun(record: RawRecord): boolean {
    const run = this.run;
    if (run === undefined || run.chunk !== record.chunk || run.end + 2 !== record.start) return false;
    run.end = record.end;
    return true;
  }

  async flush(): Promise<void> {
    this.endRun();
    this.endTexts();
    if (this.parts.length > 0) await this.fh.writeFile(Buffer.concat(this.parts));
    this.parts = [];
    this.size = 0;
  }

  private endRun(): void {
    if (this.run === undefined) return;
    this.endTexts();
    const { chunk, start, end } = this.run;
    this.parts.push(chunk.subarray(start, end));
    this.size += end - start;
    this.run = undefined;
  }

  private endTexts(): void {
    if (this.texts.length === 0) return;
    this.parts.push(Buffer.from(this.texts.join('')));
    this.texts = [];
  }
}

export function tempPath(file: string): string {
  return `${file}.tmp`;
}

/** A record line that starts with its id needs no parse to be stored: `{"id":"<id>",...`. */
const ID_PREFIX = Buffer.from('{"id":"');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const CLOSE_BRACE = 0x7d;

/**
 * The id of a record line `{"id":"<id>",…}` (or `…}` for a record that is only an id),
 * read from the bytes; undefined when the line does not start so simply (then it is parsed).
 */
function leadingId(data: Buffer, start: number, end: number): string | undefined {
  if (end - start < ID_PREFIX.length + 2 || data.compare(ID_PREFIX, 0, ID_PREFIX.length, start, start + ID_PREFIX.length) !== 0) return undefined;
  const from = start + ID_PREFIX.length;
  for (let i = from; i < end; i++) {
    const byte = data[i];
    // An escape is left to JSON.parse, which knows what it spells.
    if (byte === BACKSLASH) return undefined;
    if (byte !== QUOTE) continue;
    if (i === from || (data[i + 1] !== COMMA && data[i + 1] !== CLOSE_BRACE) || data[end - 1] !== CLOSE_BRACE) return undefined;
    return data.toString('utf8', from, i);
  }
  return undefined;
}

/** undefined: not the line-per-record layout this adapter writes, read it whole instead. */
async function readLines(fh: FileHandle): Promise<SnapshotData | undefined> {
  const state: State = new Map();
  let journalSeq: number | undefined;
  let records: LoadedRecords | undefined;
  let ended = false;
  let carry = Buffer.alloc(0);
  // false: leave the layout for the whole-file reader; throw: the layout is ours but a record is bad.
  // An unparsed record points into the chunk it was read in; a chunk is freed once none of its records is left unparsed.
  const line = (data: Buffer, start: number, end: number): boolean => {
    if (records !== undefined && data[start] === 0x7b /* { */) {
      const stop = data[end - 1] === COMMA ? end - 1 : end;
      const id = leadingId(data, start, stop);
      if (id !== undefined) {
        records.push(data, id, start, stop);
        return true;
      }
      const value: unknown = JSON.parse(data.toString('utf8', start, stop));
      if (!isRecord(value)) throw new Error('invalid snapshot: a record without a string id');
      records.pushParsed(value);
      return true;
    }
    const text = data.toString('utf8', start, end);
    if (ended) return text.length === 0;
    if (journalSeq === undefined) {
      const match = HEADER.exec(text);
      if (match === null) return false;
      journalSeq = Number(match[1]);
      return true;
    }
    if (records === undefined && text.startsWith('"') && text.endsWith(':[')) {
      const name: unknown = JSON.parse(text.slice(0, -2));
      if (typeof name !== 'string') return false;
      records = new LoadedRecords();
      state.set(name, records);
      return true;
    }
    if (records !== undefined && (text === ']' || text === '],')) {
      records = undefined;
      return true;
    }
    if (records === undefined && text === '}}') {
      ended = true;
      return true;
    }
    return false;
  };
  for (;;) {
    // The unfinished last line of the previous chunk goes first, so no chunk is copied again.
    const chunk = Buffer.allocUnsafe(carry.length + READ_CHUNK);
    carry.copy(chunk, 0);
    const { bytesRead } = await fh.read(chunk, carry.length, READ_CHUNK, null);
    if (bytesRead === 0) break;
    const data = chunk.subarray(0, carry.length + bytesRead);
    let start = 0;
    for (let nl = data.indexOf(NEWLINE, start); nl !== -1; nl = data.indexOf(NEWLINE, start)) {
      if (!line(data, start, nl)) return undefined;
      start = nl + 1;
    }
    // A header longer than a chunk is not ours: never carry an unbounded line.
    if (journalSeq === undefined && data.length - start > 4096) return undefined;
    carry = Buffer.from(data.subarray(start));
  }
  if (carry.length > 0 && !line(carry, 0, carry.length)) return undefined;
  if (journalSeq === undefined) return undefined;
  if (!ended) throw new Error('invalid snapshot: the file ends before its last collection is closed');
  return { journalSeq, state };
}

function parseWhole(raw: unknown): SnapshotData {
  const fail = (why: string): never => {
    throw new Error(`invalid snapshot: ${why}`);
  };
  if (typeof raw !== 'object' || raw === null) return fail('not an object');
  const { format, journalSeq, collections } = raw as { [key: string]: unknown };
  if (format !== 1 && format !== FORMAT) return fail(`unsupported format ${String(format)}`);
  if (typeof journalSeq !== 'number' || !Number.isInteger(journalSeq)) return fail('bad journalSeq');
  if (typeof collections !== 'object' || collections === null) return fail('bad collections');
  const state: State = new Map();
  for (const [name, records] of Object.entries(collections)) {
    if (!Array.isArray(records) || !records.every(isRecord)) return fail(`bad collection ${name}`);
    state.set(name, new Map(records.map((record) => [record.id, record])));
  }
  return { journalSeq, state };
}

function snapshotDb(file: string): Low<SnapshotData> {
  return new Low(new StreamingSnapshotFile(file), { journalSeq: 0, state: new Map() });
}

export interface LoadedSnapshot {
  state: State;
  journalSeq: number;
  bytes: number;
}

export async function readSnapshot(file: string): Promise<LoadedSnapshot> {
  const db = snapshotDb(file);
  await db.read();
  const bytes = await stat(file).then(
    (s) => s.size,
    () => 0,
  );
  return { state: db.data.state, journalSeq: db.data.journalSeq, bytes };
}

/** Returns the snapshot's size, which sets the next compaction threshold. */
export async function writeSnapshot(file: string, state: State, journalSeq: number): Promise<number> {
  const db = snapshotDb(file);
  db.data = { journalSeq, state };
  await db.write();
  return (await stat(file)).size;
}
