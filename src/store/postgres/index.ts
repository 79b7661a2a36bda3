export { PostgresRepository, type PostgresOptions } from './repository.js';
export { MIGRATIONS_DIR, readMigrations, type Migration } from './migrate.js';
export { PgObjectStore } from './objects.js';
export { PgRequestLogStore, type LogLimits, type LogQuery, type LogRow } from './request-log.js';
