import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Owned, TableSpec } from '../../../src/store/ports.js';
import { PostgresRepository } from '../../../src/store/postgres/index.js';
import { PG_INSTALL_TIMEOUT_MS } from '../../helpers/postgres.js';
import { createTestDatabase } from '../../helpers/shared-postgres.js';

/**
 * A unit's commit cut on the wire at many bytes (the sandbox dying, or its connection, mid-commit):
 * PostgreSQL gets part of the message and then the end of the connection. Every unit must be
 * whole or absent, whatever part arrived.
 */
interface Note extends Owned {
  text: string;
}
const NOTES: TableSpec<Note> = { name: 'cut_notes' };
const TAGS: TableSpec<Note> = { name: 'cut_tags' };

/** A relay that, once armed with a budget, passes that many more bytes towards the server and then cuts the connection. */
class CuttingProxy {
  private budget = Number.POSITIVE_INFINITY;
  private readonly server: Server;
  sent = 0;

  constructor(target: URL) {
    this.server = createServer((client) => {
      const upstream = connect(Number(target.port), target.hostname);
      const end = (): void => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', end).on('close', end);
      upstream.on('error', end).on('close', end);
      upstream.on('data', (chunk: Buffer) => client.write(chunk));
      client.on('data', (chunk: Buffer) => this.relay(chunk, client, upstream));
    });
  }

  private relay(chunk: Buffer, client: Socket, upstream: Socket): void {
    const allowed = this.budget - this.sent;
    this.sent += chunk.length;
    if (chunk.length <= allowed) {
      upstream.write(chunk);
      return;
    }
    this.budget = Number.POSITIVE_INFINITY;
    const cut = (): void => {
      upstream.end();
      client.destroy();
    };
    if (allowed > 0) upstream.write(chunk.subarray(0, allowed), cut);
    else cut();
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return String((this.server.address() as AddressInfo).port);
  }

  /** The next `bytes` towards the server pass, then the connection is cut. */
  arm(bytes: number): void {
    this.sent = 0;
    this.budget = bytes;
  }

  /** Counts what passes from now on, cutting nothing. */
  count(): void {
    this.sent = 0;
    this.budget = Number.POSITIVE_INFINITY;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe("a unit's commit cut at any byte on PostgreSQL", () => {
  let url: URL;
  let proxy: CuttingProxy;
  let repo: PostgresRepository;
  let check: pg.Client;

  beforeAll(async () => {
    url = new URL(await createTestDatabase('commit_cuts'));
    proxy = new CuttingProxy(url);
    const proxied = new URL(url);
    proxied.port = await proxy.listen();
    repo = await PostgresRepository.open({ connectionString: proxied.href });
    check = new pg.Client({ connectionString: url.href });
    await check.connect();
  }, PG_INSTALL_TIMEOUT_MS);
  afterAll(async () => {
    await check?.end();
    await repo?.close();
    await proxy?.close();
  });

  /** A unit of four writes in two tables, tagged `run`, the cut armed just before its commit. */
  const unit = (run: string, arm: () => void): Promise<void> =>
    repo.units.run(async (work) => {
      for (let i = 0; i < 3; i++) await work.table(NOTES).put({ accountId: run, id: `n_${i}`, text: `note ${i} of ${run}` });
      await work.table(TAGS).put({ accountId: run, id: 't', text: run });
      arm();
    });

  const stored = async (run: string): Promise<number> => {
    const notes = await check.query<{ n: string }>('SELECT count(*) AS n FROM cut_notes WHERE account_id = $1', [run]);
    const tags = await check.query<{ n: string }>('SELECT count(*) AS n FROM cut_tags WHERE account_id = $1', [run]);
    return Number(notes.rows[0]?.n) + Number(tags.rows[0]?.n);
  };

  it('leaves every unit whole or absent, with the connection cut anywhere in its message', async () => {
    await unit('warm', () => undefined); // the tables exist
    // The message of a commit on a fresh connection (its statements parsed there): every cut below also meets a fresh one.
    proxy.arm(0);
    await unit('fresh', () => undefined).catch(() => undefined);
    proxy.count();
    await unit('measured', () => proxy.count());
    const length = proxy.sent;
    expect(length).toBeGreaterThan(100);

    const outcomes = { whole: 0, absent: 0 };
    const cuts = [...new Set([0, 1, 5, ...Array.from({ length: 60 }, (_, i) => Math.floor((i * length) / 60)), length - 1, length, length + 1])];
    for (const bytes of cuts) {
      const run = `cut_${bytes}`;
      await unit(run, () => proxy.arm(bytes)).catch(() => undefined);
      proxy.count();
      const n = await stored(run);
      expect([0, 4], `${run}: ${n} of the unit's 4 records`).toContain(n);
      outcomes[n === 4 ? 'whole' : 'absent'] += 1;
    }
    // Cut early, nothing; cut after the whole message, everything (PostgreSQL had its Sync).
    expect(outcomes.absent).toBeGreaterThan(0);
    expect(outcomes.whole).toBeGreaterThan(0);
    // And the repository goes on: a unit after the cuts commits.
    await unit('after', () => undefined);
    expect(await stored('after')).toBe(4);
  }, 60_000);
});
