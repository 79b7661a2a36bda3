import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import pg from 'pg';
import { PG_INSTALL_TIMEOUT_MS, databaseName, startCluster, type PgCluster } from '../helpers/postgres.js';

/** The throwaway cluster the PostgreSQL store's tests run on: it must start, keep data across a restart, and leave nothing behind. */
describe('test PostgreSQL cluster', () => {
  let cluster: PgCluster;
  beforeAll(async () => {
    cluster = await startCluster();
  }, PG_INSTALL_TIMEOUT_MS);
  afterAll(() => cluster?.stop());

  it('answers on loopback, keeps a committed row across a server restart, and is removed on stop', async () => {
    expect(cluster.host).toBe('127.0.0.1');
    const url = await cluster.createDatabase(databaseName('cluster_check'));
    const write = new pg.Client({ connectionString: url });
    await write.connect();
    await write.query('CREATE TABLE t (v text)');
    await write.query("INSERT INTO t VALUES ('kept')");
    await write.end();

    cluster.stopServer('fast');
    await expect(new pg.Client({ connectionString: url }).connect()).rejects.toThrow();
    cluster.startServer();

    const read = new pg.Client({ connectionString: url });
    await read.connect();
    const { rows } = await read.query<{ v: string }>('SELECT v FROM t');
    await read.end();
    expect(rows).toEqual([{ v: 'kept' }]);

    expect(existsSync(cluster.dir)).toBe(true);
    await cluster.stop();
    await expect(new pg.Client({ connectionString: url }).connect()).rejects.toThrow();
    expect(existsSync(cluster.dir)).toBe(false);
  });
});
