import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestProject } from 'vitest/node';
import { startCluster, type PgCluster } from './helpers/postgres.js';
import { onlyUnit } from './unit-tier.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Loopback URL that hands out the run's one PostgreSQL cluster (test/helpers/shared-postgres.ts). */
    postgresBroker: string;
  }
}

/**
 * One throwaway PostgreSQL cluster for the whole run, started only when a test file first asks
 * for it (runs that need none pay nothing), and stopped with its files removed at the end. Test
 * files run in worker processes, so they ask through a small loopback HTTP endpoint of this,
 * vitest's main process; the cluster's start (and, on a clean machine, the install of Debian's
 * postgresql) is asynchronous, so the main process keeps serving the workers meanwhile. A run
 * of the unit project alone serves nothing: a unit test that asked would fail to find the broker.
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if (onlyUnit(project)) return undefined;
  let cluster: Promise<PgCluster> | undefined;
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/cluster') {
      res.writeHead(404).end();
      return;
    }
    cluster ??= startCluster();
    cluster.then(
      (started) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ url: started.url })),
      (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(err instanceof Error ? err.message : String(err)),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  project.provide('postgresBroker', `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  return async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    const started = await cluster?.catch(() => undefined);
    await started?.stop();
  };
}
