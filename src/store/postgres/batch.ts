import DataLoader from 'dataloader';

/** Keys of one batched statement: the first array parameter and the second, pairwise. */
export type PairKey = readonly [string, string];

/** Most keys one statement carries; more wait for the next. */
const MAX_BATCH = 128;
/** Batches of one kind awaiting their answers at once. */
const MAX_IN_FLIGHT = 2;

/**
 * Point reads of one kind made in autocommit at the same moment go to PostgreSQL as one
 * statement: those of the requests that arrived in one turn of the event loop (the batch is
 * sent from `setImmediate`, after every connection that was readable has been read). Each
 * read still starts after its request arrived and sees what was committed by then; under
 * load, a request's authentication and a GET's read then cost a fraction of a round trip.
 * Nothing is cached: `cache: false` makes the loader a batcher only.
 *
 * `read` answers the keys in their order (undefined for none); a failure fails every read of
 * the batch, as each would have failed alone.
 */
export function pointReads<R>(read: (keys: readonly PairKey[]) => Promise<readonly (R | undefined)[]>): DataLoader<PairKey, R | undefined> {
  let inFlight = 0;
  const held: (() => void)[] = [];
  const sent = (send: () => void): void => {
    inFlight += 1;
    send();
  };
  return new DataLoader<PairKey, R | undefined>(
    async (keys) => {
      try {
        return await read(keys);
      } finally {
        inFlight -= 1;
        const next = held.shift();
        if (next) sent(next);
      }
    },
    {
      cache: false,
      maxBatchSize: MAX_BATCH,
      // With MAX_IN_FLIGHT batches awaiting their answers, the next one waits for one of them and
      // gathers what arrives meanwhile: under load, fewer and larger statements.
      batchScheduleFn: (send) => setImmediate(() => (inFlight < MAX_IN_FLIGHT ? sent(send) : held.push(send))),
    },
  );
}

/** A batch's answers in the order of its keys, from rows that carry their key (`a`, `b`). */
export function inKeyOrder<Row extends { a: string; b: string }, R>(keys: readonly PairKey[], rows: readonly Row[], value: (row: Row) => R): (R | undefined)[] {
  const found = new Map<string, R>();
  for (const row of rows) found.set(`${row.a}\0${row.b}`, value(row));
  return keys.map(([a, b]) => found.get(`${a}\0${b}`));
}
