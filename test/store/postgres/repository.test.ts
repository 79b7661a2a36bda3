import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { StoreUnavailable, type Owned, type TableSpec } from '../../../src/store/ports.js';
import { PostgresRepository } from '../../../src/store/postgres/index.js';
import { PG_INSTALL_TIMEOUT_MS, freePort } from '../../helpers/postgres.js';
import { createTestDatabase } from '../../helpers/shared-postgres.js';
import { describeRepositoryConformance } from '../ports-conformance.js';

/** The ports' conformance cases on PostgreSQL: a database of its own on the run's shared cluster. */
let url = '';
beforeAll(async () => {
  url = await createTestDatabase('conformance');
}, PG_INSTALL_TIMEOUT_MS);

describeRepositoryConformance('PostgreSQL', ({ now }) => PostgresRepository.open({ connectionString: url, now }));

describe('PostgreSQL repository', () => {
  const opened: PostgresRepository[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((repo) => repo.close()));
  });

  it('does not open on a database that cannot be reached: StoreUnavailable', async () => {
    const port = await freePort(); // nothing listens there
    await expect(PostgresRepository.open({ connectionString: `postgres://sandbox@127.0.0.1:${port}/nowhere` })).rejects.toBeInstanceOf(StoreUnavailable);
  });

  it('a unit in which a statement failed (and its caller went on) does not commit, and says so', async () => {
    const repo = await PostgresRepository.open({ connectionString: url });
    opened.push(repo);
    const spec: TableSpec<Owned & { text: string }> = { name: 'notes' };
    const notes = repo.table(spec);
    const effects: string[] = [];
    const unit = repo.units.run(async (work) => {
      await work.table(spec).put({ id: 'n_1', accountId: 'acct_1', text: 'kept?' });
      // PostgreSQL refuses U+0000 in jsonb: the statement fails and the transaction is aborted.
      const refused = await work
        .table(spec)
        .put({ id: 'n_2', accountId: 'acct_1', text: 'nul \u0000' })
        .then(
          () => false,
          () => true,
        );
      work.afterCommit(() => effects.push('committed'));
      return refused;
    });
    await expect(unit).rejects.toThrow(/rolled back/);
    expect(await notes.get('acct_1', 'n_1')).toBeUndefined();
    expect(effects).toEqual([]);
  });
});
