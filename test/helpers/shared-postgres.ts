import { get } from 'node:http';
import pg from 'pg';
import { inject } from 'vitest';
import { databaseName } from './postgres.js';

let clusterUrl: Promise<string> | undefined;

/** The run's shared cluster (test/postgres-setup.ts starts it on the first call of the run). */
export function sharedCluster(): Promise<string> {
  clusterUrl ??= new Promise<string>((resolve, reject) => {
    // node:http has no overall deadline, which the first call needs on a clean machine: it waits for apt.
    get(`${inject('postgresBroker')}/cluster`, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => (res.statusCode === 200 ? resolve((JSON.parse(body) as { url: string }).url) : reject(new Error(`the test PostgreSQL cluster did not start: ${body}`))));
    }).on('error', reject);
  });
  return clusterUrl;
}

/** A new empty database of the shared cluster, for one test file: its URL. */
export async function createTestDatabase(prefix: string): Promise<string> {
  const url = new URL(await sharedCluster());
  const name = databaseName(prefix);
  const client = new pg.Client({ connectionString: url.href });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name} TEMPLATE template0`);
  } finally {
    await client.end();
  }
  url.pathname = `/${name}`;
  return url.href;
}
