export { PostgresRepository, type PostgresOptions } from './repository.js';
export { MIGRATIONS_DIR, readMigrations, type Migration } from './migrate.js';
