import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Owned, TableSpec } from '../../../src/store/ports.js';
import { PostgresRepository } from '../../../src/store/postgres/index.js';
import { PG_INSTALL_TIMEOUT_MS } from '../../helpers/postgres.js';
import { createTestDatabase } from '../../helpers/shared-postgres.js';

/**
 * Settings tables (TableSpec.settings) are kept in memory per instance, valid at their account's
 * version (src/store/postgres/versions.ts). What must hold: a read by unique key of the account
 * record (every request's authentication) learns the current version from the database itself,
 * so whatever another instance committed before it is seen, with or without its NOTIFY; a unit
 * reads its own changes; a unit that rolls back leaves nothing in memory.
 */
interface Account extends Owned {
  keyHash: string;
  name: string;
}
interface Rules extends Owned {
  rules: string[];
}

const ACCOUNTS: TableSpec<Account> = { name: 'accounts_t', unique: { keyHash: (a) => a.keyHash }, settings: { account: 'id' } };
const RULES: TableSpec<Rules> = { name: 'rules_t', settings: { account: 'accountId' } };
const OWNER = '_owner';

let url = '';
let raw: pg.Client;
const opened: PostgresRepository[] = [];
const instance = async (instanceId: string) => {
  const repo = await PostgresRepository.open({ connectionString: url, instanceId });
  opened.push(repo);
  return repo;
};
let n = 0;
const newAccount = async (repo: PostgresRepository) => {
  const id = `acc_${++n}`;
  await repo.units.run(async (unit) => {
    await unit.table(ACCOUNTS).put({ accountId: OWNER, id, keyHash: `hash_${id}`, name: 'first' });
    await unit.table(RULES).put({ accountId: id, id: 'rules', rules: ['one'] });
  });
  return id;
};
/** The rules row as stored, changed behind the instances' backs: no version raised, no NOTIFY. */
const changeBehindTheirBacks = (account: string, rules: string[]) =>
  raw.query(`UPDATE "rules_t" SET value = jsonb_set(value, '{rules}', $2::jsonb) WHERE account_id = $1`, [account, JSON.stringify(rules)]);

beforeAll(async () => {
  url = await createTestDatabase('settings_cache');
  raw = new pg.Client({ connectionString: url });
  await raw.connect();
}, PG_INSTALL_TIMEOUT_MS);
afterEach(async () => {
  await Promise.all(opened.splice(0).map((repo) => repo.close()));
});
afterAll(async () => {
  await raw.end();
});

describe('settings kept in memory, checked against the account version', () => {
  it('serves a settings record from memory while its account version is unchanged', async () => {
    const a = await instance('A');
    const acct = await newAccount(a);
    expect((await a.table(RULES).get(acct, 'rules'))?.rules).toEqual(['one']);
    await changeBehindTheirBacks(acct, ['changed']);
    // Nothing said the version moved: the copy in memory is what this instance answers with.
    expect((await a.table(RULES).get(acct, 'rules'))?.rules).toEqual(['one']);
    // A database read of the account (authentication) at an unchanged version keeps it valid.
    await a.table(ACCOUNTS).findUnique(OWNER, 'keyHash', `hash_${acct}`);
    expect((await a.table(RULES).get(acct, 'rules'))?.rules).toEqual(['one']);
  });

  it('a version raised without a NOTIFY is learned by the next authentication', async () => {
    const a = await instance('A');
    const acct = await newAccount(a);
    expect((await a.table(RULES).get(acct, 'rules'))?.rules).toEqual(['one']);
    await changeBehindTheirBacks(acct, ['two']);
    await raw.query('UPDATE account_versions SET version = version + 1 WHERE account_id = $1', [acct]);
    expect((await a.table(RULES).get(acct, 'rules'))?.rules).toEqual(['one']);
    await a.table(ACCOUNTS).findUnique(OWNER, 'keyHash', `hash_${acct}`);
    expect((await a.table(RULES).get(acct, 'rules'))?.rules).toEqual(['two']);
  });

  it("another instance's committed change is seen right after the next authentication", async () => {
    const [a, b] = [await instance('A'), await instance('B')];
    const acct = await newAccount(a);
    for (let round = 0; round < 20; round++) {
      expect((await a.table(RULES).get(acct, 'rules'))?.rules).toEqual([round === 0 ? 'one' : `r${round - 1}`]);
      await b.units.run((unit) => unit.table(RULES).put({ accountId: acct, id: 'rules', rules: [`r${round}`] }));
      await a.table(ACCOUNTS).findUnique(OWNER, 'keyHash', `hash_${acct}`);
      expect((await a.table(RULES).get(acct, 'rules'))?.rules).toEqual([`r${round}`]);
    }
    // And by NOTIFY alone, for work no request started (jobs).
    await b.units.run((unit) => unit.table(RULES).put({ accountId: acct, id: 'rules', rules: ['by notify'] }));
    await vi.waitFor(async () => expect((await a.table(RULES).get(acct, 'rules'))?.rules).toEqual(['by notify']), { timeout: 5_000, interval: 10 });
  });

  it('the account record itself, read by key, is current and then read by id from memory', async () => {
    const [a, b] = [await instance('A'), await instance('B')];
    const acct = await newAccount(a);
    expect((await a.table(ACCOUNTS).findUnique(OWNER, 'keyHash', `hash_${acct}`))?.name).toBe('first');
    await b.units.run(async (unit) => {
      const current = await unit.table(ACCOUNTS).getForUpdate(OWNER, acct);
      if (current) await unit.table(ACCOUNTS).put({ ...current, name: 'renamed' });
    });
    expect((await a.table(ACCOUNTS).findUnique(OWNER, 'keyHash', `hash_${acct}`))?.name).toBe('renamed');
    expect((await a.table(ACCOUNTS).get(OWNER, acct))?.name).toBe('renamed');
  });

  it('a unit reads its own change, also after it was sent, and its rollback leaves memory as it was', async () => {
    const a = await instance('A');
    const acct = await newAccount(a);
    expect((await a.table(RULES).get(acct, 'rules'))?.rules).toEqual(['one']);
    await expect(
      a.units.run(async (unit) => {
        await unit.table(RULES).put({ accountId: acct, id: 'rules', rules: ['mine'] });
        expect((await unit.table(RULES).get(acct, 'rules'))?.rules).toEqual(['mine']);
        // A list sends the buffered writes: the overlay is gone, the transaction has them.
        await unit.table(RULES).list(acct);
        expect((await unit.table(RULES).get(acct, 'rules'))?.rules).toEqual(['mine']);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect((await a.table(RULES).get(acct, 'rules'))?.rules).toEqual(['one']);
    await a.table(ACCOUNTS).findUnique(OWNER, 'keyHash', `hash_${acct}`);
    expect((await a.table(RULES).get(acct, 'rules'))?.rules).toEqual(['one']);
  });

  it("a committed change is this instance's answer at once, and a clock moved is too", async () => {
    const a = await instance('A');
    const acct = await newAccount(a);
    expect(await a.clocks.offsetOf(acct)).toBe(0);
    await a.units.run((unit) => unit.table(RULES).put({ accountId: acct, id: 'rules', rules: ['now'] }));
    expect((await a.table(RULES).get(acct, 'rules'))?.rules).toEqual(['now']);
    await a.units.run((unit) => unit.clocks.advance(acct, 60_000));
    expect(await a.clocks.offsetOf(acct)).toBe(60_000);
    await a.clocks.advance(acct, 1_000);
    expect(await a.clocks.offsetOf(acct)).toBe(61_000);
  });

  it('an absent record is known absent, until the version moves', async () => {
    const [a, b] = [await instance('A'), await instance('B')];
    const acct = await newAccount(a);
    expect(await a.table(RULES).get(acct, 'other')).toBeUndefined();
    await b.units.run((unit) => unit.table(RULES).put({ accountId: acct, id: 'other', rules: ['x'] }));
    await a.table(ACCOUNTS).findUnique(OWNER, 'keyHash', `hash_${acct}`);
    expect((await a.table(RULES).get(acct, 'other'))?.rules).toEqual(['x']);
  });
});
