export interface Record {
  id: string;
}

export interface CollectionOptions<T extends Record> {
  /** keeps an insertion-ordered sub-map per group key, e.g. per account id */
  groupBy?: (value: T) => string;
  /** unique secondary indexes: name -> key function (undefined = not indexed) */
  unique?: { [index: string]: (value: T) => string | undefined };
}

export interface Logger {
  warn(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
}

export interface StoreOptions {
  /** undefined => in-memory */
  file?: string;
  /** default 64 MiB */
  compactMinBytes?: number;
  logger?: Logger;
}

/**
 * A record as the snapshot holds it, not parsed yet: most stored records are never read
 * during a process's life, and parsing millions of them at start is what made it slow.
 */
export class RawRecord {
  /** Bytes `start`..`end` of a chunk read from the snapshot: no string exists until the record is used. */
  constructor(
    readonly chunk: Buffer,
    readonly start: number,
    readonly end: number,
  ) {}

  get json(): string {
    return this.chunk.toString('utf8', this.start, this.end);
  }

  get bytes(): Buffer {
    return this.chunk.subarray(this.start, this.end);
  }
}

/** Every record of every collection, keyed by collection name then id, in insertion order. */
export type State = Map<string, Map<string, Record | RawRecord>>;

/** One journal entry; a null value is a delete. */
export interface Op {
  collection: string;
  id: string;
  value: Record | null;
}

/** A journal entry as replay reads it: a put's value may still be its bytes. */
export interface StoredOp {
  collection: string;
  id: string;
  value: Record | RawRecord | null;
}

/** A journal line that opens a unit: the `unit` lines after it are applied together or not at all. */
export interface UnitHeader {
  unit: number;
}
