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
  constructor(readonly json: string) {}
}

/** Every record of every collection, keyed by collection name then id, in insertion order. */
export type State = Map<string, Map<string, Record | RawRecord>>;

/** One journal entry; a null value is a delete. */
export interface Op {
  collection: string;
  id: string;
  value: Record | null;
}
