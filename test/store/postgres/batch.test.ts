import { describe, expect, it } from 'vitest';
import { ACCOUNTS, SANDBOX_OWNER, type AccountRecord } from '../../../src/accounts/accounts.js';
import type { Owned, TableSpec } from '../../../src/store/ports.js';
import { inKeyOrder, pointReads, type PairKey } from '../../../src/store/postgres/batch.js';
import { countedRepository } from '../../helpers/counted-postgres.js';

describe('pointReads', () => {
  it('sends the reads of one moment as one batch, answering each in its order, duplicates and misses included', async () => {
    const calls: (readonly PairKey[])[] = [];
    const loader = pointReads<string>(async (keys) => {
      calls.push(keys);
      return keys.map(([a, b]) => (b === 'none' ? undefined : `${a}/${b}`));
    });
    const answers = await Promise.all([loader.load(['a', '1']), loader.load(['a', 'none']), loader.load(['b', '2']), loader.load(['a', '1'])]);
    expect(answers).toEqual(['a/1', undefined, 'b/2', 'a/1']);
    expect(calls).toHaveLength(1);
    // Nothing is cached: the same key read later is read again.
    await loader.load(['a', '1']);
    expect(calls).toHaveLength(2);
  });

  it('gives a record asked for twice in one batch to each caller as its own copy', async () => {
    const loader = pointReads<{ n: number }>(async (keys) => inKeyOrder(keys, [{ a: 'a', b: '1', n: 1 }], (row) => ({ n: row.n })));
    const [first, second] = await Promise.all([loader.load(['a', '1']), loader.load(['a', '1'])]);
    expect(first).toEqual({ n: 1 });
    expect(second).toEqual({ n: 1 });
    expect(first).not.toBe(second);
  });

  it('answers a key with U+0000 as none without asking: it cannot fail the batch of the others', async () => {
    const calls: (readonly PairKey[])[] = [];
    const loader = pointReads<string>(async (keys) => {
      calls.push(keys);
      return keys.map(([a, b]) => `${a}/${b}`);
    });
    expect(await Promise.all([loader.load(['a', '1']), loader.load(['a', 'x\u0000']), loader.load(['b', '2'])])).toEqual(['a/1', undefined, 'b/2']);
    expect(calls).toEqual([[['a', '1'], ['b', '2']]]);
  });

  it('fails every read of a batch that failed', async () => {
    const loader = pointReads<string>(() => Promise.reject(new Error('database away')));
    const results = await Promise.allSettled([loader.load(['a', '1']), loader.load(['b', '2'])]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });
});

interface Note extends Owned {
  text: string;
}
const NOTES: TableSpec<Note> = { name: 'batch_notes' };

describe('batched point reads on PostgreSQL', () => {
  const counted = countedRepository('batch_reads');

  /** What the writes set going settles first (their notifications leave after the commit): then only the reads are counted. */
  const quiet = async (): Promise<number> => {
    let last = -1;
    while (counted.turns() !== last) {
      last = counted.turns();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return last;
  };

  it('reads of records made at one moment take one round trip, each answered with its own record', async () => {
    const notes = counted.repo.table(NOTES);
    await counted.repo.units.run(async (unit) => {
      for (let i = 0; i < 10; i++) await unit.table(NOTES).put({ accountId: `acct_${i % 2}`, id: `n_${i}`, text: `note ${i}` });
    });
    await notes.get('acct_0', 'n_0'); // a connection is open
    const before = await quiet();
    const keys = [...Array.from({ length: 10 }, (_, i) => [`acct_${i % 2}`, `n_${i}`] as const), ['acct_1', 'n_0'] as const, ['acct_0', 'n_0'] as const];
    const found = await Promise.all(keys.map(([account, id]) => notes.get(account, id)));
    expect(counted.turns() - before).toBe(1);
    expect(found.map((n) => n?.text)).toEqual([...Array.from({ length: 10 }, (_, i) => `note ${i}`), undefined, 'note 0']);
    // PostgreSQL refuses U+0000 in a text parameter: a key with one (a request's path) finds nothing and fails no other read.
    expect((await Promise.all([notes.get('acct_0', 'n_0'), notes.get('acct_0', 'n_\u0000'), notes.get('acct_1', 'n_1')])).map((n) => n?.text)).toEqual(['note 0', undefined, 'note 1']);
  });

  it('authentications of one moment take one round trip, each finding its own account or none', async () => {
    const accounts = counted.repo.table(ACCOUNTS);
    const record = (n: number): AccountRecord => ({
      id: `acc_${n}`,
      accountId: SANDBOX_OWNER,
      userId: `usr_${n}`,
      name: `Account ${n}`,
      secretKey: `sk_test_${n}`,
      keyHash: `hash_${n}`,
      permissions: [],
      webhookUrl: null,
      webhookSecret: `whsec_${n}`,
      webhookDelivery: 'direct',
      createdAt: '2030-01-01T00:00:00.000Z',
    });
    await counted.repo.units.run(async (unit) => {
      for (let n = 0; n < 5; n++) await unit.table(ACCOUNTS).put(record(n));
    });
    await accounts.findUnique(SANDBOX_OWNER, 'keyHash', 'hash_0');
    const before = await quiet();
    const found = await Promise.all(['hash_3', 'hash_x', 'hash_0', 'hash_4', 'hash_3'].map((hash) => accounts.findUnique(SANDBOX_OWNER, 'keyHash', hash)));
    expect(counted.turns() - before).toBe(1);
    expect(found.map((a) => a?.id)).toEqual(['acc_3', undefined, 'acc_0', 'acc_4', 'acc_3']);
  });

  it('a unit whose transaction has begun reads in it, not in a batch: it sees its own writes', async () => {
    await counted.repo.units.run((unit) => unit.table(NOTES).put({ accountId: 'acct_u', id: 'n_1', text: 'before' }));
    const seen = await counted.repo.units.run(async (unit) => {
      const mine = unit.table(NOTES);
      await mine.getForUpdate('acct_u', 'n_1'); // the transaction begins
      await mine.put({ accountId: 'acct_u', id: 'n_2', text: 'written in the unit' });
      await unit.table(NOTES).getForUpdate('acct_u', 'n_1'); // sends the buffered write
      return Promise.all([mine.get('acct_u', 'n_2'), mine.get('acct_u', 'n_1')]);
    });
    expect(seen.map((n) => n?.text)).toEqual(['written in the unit', 'before']);
  });
});
