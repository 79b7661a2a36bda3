import { afterAll, beforeAll } from 'vitest';
import { startTurnCounter } from '../../bench/lib/pg-turns.mjs';
import { PostgresRepository } from '../../src/store/postgres/index.js';
import { PG_INSTALL_TIMEOUT_MS } from './postgres.js';
import { createTestDatabase } from './shared-postgres.js';

/** A repository of the suite's own, whose round trips to PostgreSQL are counted on the wire. */
export interface CountedRepository {
  readonly repo: PostgresRepository;
  /** Round trips so far, on every connection (bench/lib/pg-turns.mjs). */
  turns(): number;
}

/**
 * For the describe block it is called in: a fresh database, a round-trip counter in front of it
 * and a repository through the counter, opened before its tests and closed after them.
 */
export function countedRepository(prefix: string): CountedRepository {
  let repo: PostgresRepository | undefined;
  let counter: Awaited<ReturnType<typeof startTurnCounter>> | undefined;
  beforeAll(async () => {
    counter = await startTurnCounter(await createTestDatabase(prefix));
    repo = await PostgresRepository.open({ connectionString: counter.url });
  }, PG_INSTALL_TIMEOUT_MS);
  afterAll(async () => {
    await repo?.close();
    await counter?.close();
  });
  return {
    get repo() {
      if (repo === undefined) throw new Error('countedRepository: used before its beforeAll ran');
      return repo;
    },
    turns: () => counter?.turns() ?? 0,
  };
}
