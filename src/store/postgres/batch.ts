import DataLoader from 'dataloader';

/** Keys of one batched statement: the first array parameter and the second, pairwise. */
export type PairKey = readonly [string, string];

/** Most keys one statement carries; more wait for the next. */
const MAX_BATCH = 128;
/** Batches of one kind awaiting their answers at once. */
const MAX_IN_FLIGHT = 2;

/**
 * How long a batch may hold its place among those in flight: one that has not answered by
 * then (a connection gone silent) no longer keeps the next from being sent.
 */
const IN_FLIGHT_MS = 2_000;

/**
 * Point reads of one kind made in autocommit at the same moment go to PostgreSQL as one
 * statement: those of the requests that arrived in one turn of the event loop (the batch is
 * sent from `setImmediate`, after every connection that was readable has been read). Each
 * read still starts after its request arrived and sees what was committed by then; under
 * load, a request's authentication and a GET's read then cost a fraction of a round trip.
 * Nothing is cached: `cache: false` makes the loader a batcher only.
 *
 * `read` answers the keys in their order (undefined for none); a failure fails every read of
 * the batch, as each would have failed alone. A key with U+0000 names nothing (PostgreSQL's
 * text cannot hold it, and would refuse the whole statement): it is answered without asking.
 */
export function pointReads<R>(read: (keys: readonly PairKey[]) => Promise<readonly (R | undefined)[]>): DataLoader<PairKey, R | undefined> {
  let inFlight = 0;
  const held: (() => void)[] = [];
  const sent = (send: () => void): void => {
    inFlight += 1;
    send();
  };
  const answered = (): (() => void) => {
    let done = false;
    const release = (): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      inFlight -= 1;
      const next = held.shift();
      if (next) sent(next);
    };
    const timer = setTimeout(release, IN_FLIGHT_MS);
    timer.unref();
    return release;
  };
  return new DataLoader<PairKey, R | undefined>(
    async (keys) => {
      const release = answered();
      try {
        const storable = ([a, b]: PairKey): boolean => !a.includes('\0') && !b.includes('\0');
        const asked = keys.filter(storable);
        if (asked.length === keys.length) return await read(keys);
        const answers = asked.length === 0 ? [] : await read(asked);
        let next = 0;
        return keys.map((key) => (storable(key) ? answers[next++] : undefined));
      } finally {
        release();
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

/**
 * A batch's answers in the order of its keys, from rows that carry their key (`a`, `b`). A key
 * asked twice (two requests reading one record) gets a copy the second time: each caller may
 * change what it was given, as with a read of its own.
 */
export function inKeyOrder<Row extends { a: string; b: string }, R>(keys: readonly PairKey[], rows: readonly Row[], value: (row: Row) => R): (R | undefined)[] {
  const found = new Map<string, R>();
  for (const row of rows) found.set(`${row.a}\0${row.b}`, value(row));
  const given = new Set<string>();
  return keys.map(([a, b]) => {
    const k = `${a}\0${b}`;
    const answer = found.get(k);
    if (answer === undefined || !given.has(k)) {
      given.add(k);
      return answer;
    }
    return structuredClone(answer);
  });
}
