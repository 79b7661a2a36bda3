import { RawRecord, type Record } from './types.js';

/**
 * One collection as the snapshot held it: its records' ids and where each line is in the chunk
 * it was read in, entered into the map only when something uses the collection, or a slice at
 * a time by `settleSome` (the store's background pass). Entering a million records (a Map
 * insert and a RawRecord each) was two thirds of reading a 1M-record snapshot, and most of a
 * large start; a start now ends once the lines are read, and answers from the map as it fills.
 *
 * Every Map method enters what still waits first, so a reader sees every record, in file order.
 * `size` does not: a snapshot holds each id once, so it is the entered and the waiting.
 */
export class LoadedRecords extends Map<string, Record | RawRecord> {
  private parts: { chunk: Buffer; ids: string[]; starts: number[]; ends: number[] }[] = [];
  private part = 0;
  private line = 0;
  private waiting = 0;

  /** A record's line, `start`..`end` of `chunk`, its id read already (the snapshot's own order). */
  push(chunk: Buffer, id: string, start: number, end: number): void {
    let last = this.parts.at(-1);
    if (last === undefined || last.chunk !== chunk) {
      last = { chunk, ids: [], starts: [], ends: [] };
      this.parts.push(last);
    }
    last.ids.push(id);
    last.starts.push(start);
    last.ends.push(end);
    this.waiting++;
  }

  /** A record the snapshot held already parsed (a line that did not start with its id), in its place in the order. */
  pushParsed(record: Record): void {
    if (this.waiting === 0) {
      super.set(record.id, record);
      return;
    }
    // After lines still waiting: entered in its turn, after them.
    this.settle();
    super.set(record.id, record);
  }

  /** How many records wait to be entered. */
  get unsettled(): number {
    return this.waiting;
  }

  /** Enters up to `count` waiting records; true while more wait. */
  settleSome(count: number): boolean {
    let left = count;
    while (left > 0 && this.part < this.parts.length) {
      const { chunk, ids, starts, ends } = this.parts[this.part]!;
      const stop = Math.min(ids.length, this.line + left);
      for (let i = this.line; i < stop; i++) super.set(ids[i]!, new RawRecord(chunk, starts[i]!, ends[i]!));
      left -= stop - this.line;
      this.waiting -= stop - this.line;
      this.line = stop;
      if (this.line === ids.length) {
        // Its chunk is now held only by its records' RawRecords.
        this.parts[this.part] = { chunk: EMPTY, ids: [], starts: [], ends: [] };
        this.part++;
        this.line = 0;
      }
    }
    if (this.waiting === 0) this.parts = [];
    return this.waiting > 0;
  }

  private settle(): void {
    if (this.waiting > 0) this.settleSome(Number.POSITIVE_INFINITY);
  }

  override get size(): number {
    return super.size + this.waiting;
  }

  override get(key: string): Record | RawRecord | undefined {
    this.settle();
    return super.get(key);
  }

  override has(key: string): boolean {
    this.settle();
    return super.has(key);
  }

  override set(key: string, value: Record | RawRecord): this {
    this.settle();
    return super.set(key, value);
  }

  override delete(key: string): boolean {
    this.settle();
    return super.delete(key);
  }

  override clear(): void {
    this.parts = [];
    this.waiting = 0;
    super.clear();
  }

  override forEach(callback: (value: Record | RawRecord, key: string, map: Map<string, Record | RawRecord>) => void, thisArg?: unknown): void {
    this.settle();
    super.forEach(callback, thisArg);
  }

  override keys(): MapIterator<string> {
    this.settle();
    return super.keys();
  }

  override values(): MapIterator<Record | RawRecord> {
    this.settle();
    return super.values();
  }

  override entries(): MapIterator<[string, Record | RawRecord]> {
    this.settle();
    return super.entries();
  }

  override [Symbol.iterator](): MapIterator<[string, Record | RawRecord]> {
    this.settle();
    return super[Symbol.iterator]();
  }
}

const EMPTY = Buffer.alloc(0);

/** Records entered per turn of the event loop by the background pass: ~10 ms of one, so answers wait little behind it. */
const SLICE = 8_192;

/**
 * Enters what the snapshot's collections still hold waiting, a slice per turn of the event loop
 * after a start, so a large store's map is whole soon without the start waiting for it. A
 * collection used meanwhile enters the rest at once (LoadedRecords), and the pass finds it done.
 */
export function settleInBackground(state: ReadonlyMap<string, Map<string, Record | RawRecord>>, slice: number = SLICE): { stop(): void } {
  let timer: NodeJS.Immediate | undefined;
  const step = (): void => {
    timer = undefined;
    for (const records of state.values()) {
      if (!(records instanceof LoadedRecords) || records.unsettled === 0) continue;
      records.settleSome(slice);
      timer = setImmediate(step);
      return;
    }
  };
  timer = setImmediate(step);
  return {
    stop() {
      if (timer !== undefined) clearImmediate(timer);
      timer = undefined;
    },
  };
}
