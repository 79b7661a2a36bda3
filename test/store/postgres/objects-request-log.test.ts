import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresRepository } from '../../../src/store/postgres/index.js';
import { PG_INSTALL_TIMEOUT_MS } from '../../helpers/postgres.js';
import { createTestDatabase } from '../../helpers/shared-postgres.js';

/** The PostgreSQL store's image bytes and shared request log (migration 002), below the HTTP layer. */
let repo: PostgresRepository;
let other: PostgresRepository;
let url = '';

beforeAll(async () => {
  url = await createTestDatabase('objects_log');
  repo = await PostgresRepository.open({ connectionString: url });
  other = await PostgresRepository.open({ connectionString: url });
}, PG_INSTALL_TIMEOUT_MS);
afterAll(async () => {
  await repo?.close();
  await other?.close();
});

interface Entry {
  traceId: string;
  body: string;
}
const row = (accountId: string, n: number, body = '') => ({
  accountId,
  traceId: `t${n}`,
  path: n % 2 === 0 ? '/v2/products' : '/transactions/1',
  status: n % 3 === 0 ? 404 : 200,
  at: new Date(Date.UTC(2030, 0, 1, 0, 0, n)).toISOString(),
  entry: { traceId: `t${n}`, body },
});

describe('objects', () => {
  it('are stored per account, read by key alone from any instance, and deleted by their account', async () => {
    const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 255]);
    await repo.objects.put('acc_a', 'img_1.png', { bytes, contentType: 'image/png' });
    expect(await other.objects.get('img_1.png')).toEqual({ bytes, contentType: 'image/png' });
    // Another account's delete of the same key removes nothing.
    await other.objects.delete('acc_b', 'img_1.png');
    expect(await repo.objects.get('img_1.png')).toBeDefined();
    await other.objects.delete('acc_a', 'img_1.png');
    expect(await repo.objects.get('img_1.png')).toBeUndefined();
  });
});

describe('the request log', () => {
  it('keeps the newest entries per account within its count, newest first, with filters and a cursor', async () => {
    const log = repo.requestLog<Entry>({ entries: 5, bytes: 1 << 20 });
    for (let n = 1; n <= 8; n++) log.append(row('acc_count', n));
    log.append(row('acc_count_other', 1));
    const page = await log.list('acc_count', { limit: 3 });
    expect(page?.data.map((e) => e.traceId)).toEqual(['t8', 't7', 't6']);
    expect(page?.hasMore).toBe(true);
    expect((await log.list('acc_count', { limit: 10, startingAfter: 't6' }))?.data.map((e) => e.traceId)).toEqual(['t5', 't4']);
    // t1..t3 were pruned: a cursor there is unknown.
    expect(await log.list('acc_count', { limit: 10, startingAfter: 't2' })).toBeUndefined();
    expect((await log.list('acc_count', { limit: 10, status: 404 }))?.data.map((e) => e.traceId)).toEqual(['t6']);
    expect((await log.list('acc_count', { limit: 10, statusClass: 2 }))?.data.map((e) => e.traceId)).toEqual(['t8', 't7', 't5', 't4']);
    expect((await log.list('acc_count', { limit: 10, pathPrefix: '/v2' }))?.data.map((e) => e.traceId)).toEqual(['t8', 't6', 't4']);
    expect((await log.list('acc_count', { limit: 10, traceId: 't7' }))?.data).toHaveLength(1);
    expect((await log.list('acc_count_other', { limit: 10 }))?.data.map((e) => e.traceId)).toEqual(['t1']);
    // Another instance lists the same log.
    expect((await other.requestLog<Entry>({ entries: 5, bytes: 1 << 20 }).list('acc_count', { limit: 10 }))?.data).toHaveLength(5);
  });

  it('keeps at most its bytes per account, and an entry as it was written, U+0000 included', async () => {
    const log = repo.requestLog<Entry>({ entries: 100, bytes: 3000 });
    for (let n = 1; n <= 6; n++) log.append(row('acc_bytes', n, 'x'.repeat(1000)));
    const kept = (await log.list('acc_bytes', { limit: 100 }))?.data.map((e) => e.traceId);
    expect(kept).toEqual(['t6', 't5']);
    log.append({ ...row('acc_nul', 1, 'a\u0000b'), path: '/a\u0000b' });
    expect((await log.list('acc_nul', { limit: 1 }))?.data[0]?.body).toBe('a\u0000b');
  });

  it('prunes an account once its appends are a quarter past a bound, and lists exactly within the bounds', async () => {
    const stored = async (accountId: string): Promise<number> => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM request_log WHERE account_id = $1', [accountId])).rows[0]?.n);
      } finally {
        await client.end();
      }
    };
    const log = repo.requestLog<Entry>({ entries: 20, bytes: 1 << 20 });
    const sizes: number[] = [];
    for (let n = 1; n <= 60; n++) {
      log.append(row('acc_amortised', n));
      await log.flush();
      sizes.push(await stored('acc_amortised'));
    }
    // Never more than the bound, a quarter of it and the batch; pruned down to the bound (plus the batch) when it got there.
    expect(Math.max(...sizes)).toBeLessThanOrEqual(20 + 5 + 1);
    expect(Math.min(...sizes.slice(25))).toBeLessThanOrEqual(21);
    const listed = (await log.list('acc_amortised', { limit: 100 }))?.data.map((e) => e.traceId);
    expect(listed).toEqual(Array.from({ length: 20 }, (_, i) => `t${60 - i}`));
    // The oldest entries still stored but past the bound are not listed, nor a cursor there.
    expect(await stored('acc_amortised')).toBeGreaterThan(20);
    expect(await log.list('acc_amortised', { limit: 10, startingAfter: 't40' })).toBeUndefined();

    // Another instance (or this one restarted) prunes an account with its first append to it, whatever the table holds.
    const restarted = other.requestLog<Entry>({ entries: 20, bytes: 1 << 20 });
    expect(await stored('acc_amortised')).toBeGreaterThan(21);
    restarted.append(row('acc_amortised', 61));
    await restarted.flush();
    restarted.append(row('acc_amortised', 62));
    await restarted.flush();
    expect(await stored('acc_amortised')).toBeLessThanOrEqual(22);

    const small = repo.requestLog<Entry>({ entries: 100, bytes: 4000 });
    for (let n = 1; n <= 5; n++) small.append(row('acc_amortised_bytes', n, 'x'.repeat(900)));
    expect((await small.list('acc_amortised_bytes', { limit: 100 }))?.data.map((e) => e.traceId)).toEqual(['t5', 't4', 't3', 't2']);
  });

  it('deletes entries older than a cutoff, a batch at a time; a size of 0 keeps nothing', async () => {
    const log = repo.requestLog<Entry>({ entries: 100, bytes: 1 << 20 });
    for (let n = 1; n <= 5; n++) log.append(row('acc_old', n));
    const cutoff = new Date(Date.UTC(2030, 0, 1, 0, 0, 4)).toISOString();
    expect(await log.deleteOlderThan('acc_old', cutoff, 2)).toBe(2);
    expect(await log.deleteOlderThan('acc_old', cutoff, 2)).toBe(1);
    expect((await log.list('acc_old', { limit: 10 }))?.data.map((e) => e.traceId)).toEqual(['t5', 't4']);
    const none = repo.requestLog<Entry>({ entries: 0, bytes: 1 << 20 });
    none.append(row('acc_none', 1));
    expect((await none.list('acc_none', { limit: 10 }))?.data).toEqual([]);
  });
});
