import { SANDBOX_OWNER } from '../accounts/accounts.js';
import type { Logger } from '../log.js';
import type { EmbeddedRepository } from '../store/embedded/repository.js';
import type { Record as StoredRecord } from '../store/types.js';
import { FIRST_ID, TRANSACTION_EXTERNAL_IDS } from '../transactions/transactions.js';

/** The layout this version writes; a data file without the marker was written by an earlier one. */
const LAYOUT = 2;

interface Meta {
  id: 'layout';
  version: number;
}

const has = (record: StoredRecord, field: string): boolean => field in record;
const text = (record: StoredRecord, field: string): string | undefined => {
  const value: unknown = (record as unknown as { [key: string]: unknown })[field];
  return typeof value === 'string' ? value : undefined;
};

/**
 * Brings a data file written by an earlier version (before the repository seam) to this one's
 * layout, once, when the store opens and before any service declares its tables; users upgrade
 * in place. Every change is journaled like any other, and each step tolerates a crash halfway
 * (it is done again, from where it was, at the next start):
 *
 * - every record carries its `accountId`: accounts belong to the sandbox (`_sandbox`), one-per-
 *   account records (limits, faults, autopilot rules, balances) to the account they are keyed by;
 * - the transactions' externalId index (`transactionRefs`, keyed `account\nexternalId`) becomes
 *   the per-account table `transactionExternalIds`; the withdrawals' (`withdrawalRefs`) is a
 *   unique index of the withdrawals table now, rebuilt from the records;
 * - the transaction id counter becomes the sequence `transaction_id` (ids go on from where they
 *   were: nothing is ever handed out twice);
 * - deliveries stored before withdrawals existed get their transaction's own postbackUrl.
 */
export async function upgradeDataFile(repository: EmbeddedRepository, logger?: Logger): Promise<void> {
  const store = repository.store;
  const meta = store.collection<Meta>('meta');
  if ((meta.get('layout')?.version ?? 0) >= LAYOUT) return;
  const changed: { [step: string]: number } = {};
  const count = (step: string, n: number): void => {
    if (n > 0) changed[step] = (changed[step] ?? 0) + n;
  };

  count('accounts', store.rewrite('accounts', (r) => (has(r, 'accountId') ? undefined : { ...r, accountId: SANDBOX_OWNER })));
  for (const name of ['limits', 'faults', 'autopilot', 'balances']) {
    count(name, store.rewrite(name, (r) => (has(r, 'accountId') ? undefined : { ...r, accountId: r.id })));
  }

  // Written to the new table first, removed from the old after: a crash in between only repeats the copy.
  const refs: { accountId: string; externalId: string; transactionId: string }[] = [];
  store.rewrite('transactionRefs', (r) => {
    const at = r.id.indexOf('\n');
    const transactionId = text(r, 'transactionId');
    if (at > 0 && transactionId !== undefined) refs.push({ accountId: r.id.slice(0, at), externalId: r.id.slice(at + 1), transactionId });
    return undefined;
  });
  await repository.units.run(async (unit) => {
    const externalIds = unit.table(TRANSACTION_EXTERNAL_IDS);
    for (const ref of refs) await externalIds.put({ id: ref.externalId, accountId: ref.accountId, transactionId: ref.transactionId });
  });
  count('transactionRefs', store.rewrite('transactionRefs', () => null));
  count('withdrawalRefs', store.rewrite('withdrawalRefs', () => null));

  const counters = store.collection<{ id: string; last: number }>('counters');
  const legacy = counters.get('transaction');
  if (legacy !== undefined) {
    if (counters.get('transaction_id') === undefined) counters.put({ id: 'transaction_id', last: Math.max(0, legacy.last - (FIRST_ID - 1)) });
    counters.delete('transaction');
    count('counters', 1);
  }

  // Only deliveries from before withdrawals lack it; a transaction wiped since leaves none.
  const postbackUrls = new Map<string, string | null>();
  const needed = new Set<string>();
  store.rewrite('deliveries', (r) => {
    const transactionId = text(r, 'transactionId');
    if (!has(r, 'ownUrl') && transactionId !== undefined) needed.add(transactionId);
    return undefined;
  });
  if (needed.size > 0) {
    store.rewrite('transactions', (r) => {
      if (needed.has(r.id)) {
        const view = (r as unknown as { view?: { postbackUrl?: unknown } }).view;
        postbackUrls.set(r.id, typeof view?.postbackUrl === 'string' ? view.postbackUrl : null);
      }
      return undefined;
    });
    count(
      'deliveries',
      store.rewrite('deliveries', (r) => {
        const transactionId = text(r, 'transactionId');
        return has(r, 'ownUrl') ? undefined : { ...r, ownUrl: transactionId === undefined ? null : (postbackUrls.get(transactionId) ?? null) };
      }),
    );
  }

  meta.put({ id: 'layout', version: LAYOUT });
  await store.commit();
  if (Object.keys(changed).length > 0) logger?.info({ changed }, 'data file of an earlier version upgraded');
}
