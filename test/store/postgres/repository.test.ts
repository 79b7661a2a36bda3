import { beforeAll } from 'vitest';
import { PostgresRepository } from '../../../src/store/postgres/index.js';
import { PG_INSTALL_TIMEOUT_MS } from '../../helpers/postgres.js';
import { createTestDatabase } from '../../helpers/shared-postgres.js';
import { describeRepositoryConformance } from '../ports-conformance.js';

/** The ports' conformance cases on PostgreSQL: a database of its own on the run's shared cluster. */
let url = '';
beforeAll(async () => {
  url = await createTestDatabase('conformance');
}, PG_INSTALL_TIMEOUT_MS);

describeRepositoryConformance('PostgreSQL', ({ now }) => PostgresRepository.open({ connectionString: url, now }), { rollsBack: true });
