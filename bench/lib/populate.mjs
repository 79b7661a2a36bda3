// @ts-check
/**
 * Writes a sandbox snapshot (src/store/snapshot.ts, format 2: one record per
 * line) holding the default account and `count` products, streamed to disk so
 * that a 1M-record file (~350 MB) never exists as one string in this process.
 *
 * The account is written exactly as Accounts.ensureDefault would create it, so
 * the server finds it unchanged at start (same id, same key, same keyHash) and
 * appends nothing; the products' createdByUserId is that account's userId.
 */
import { createHash, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';

export const DEFAULT_ACCOUNT_ID = 'acc_default';
export const DEFAULT_SECRET_KEY = 'sk_test_sandbox';

/** records per write() call */
const CHUNK = 2000;
/** all seeded timestamps are before this instant, one second apart */
const BASE_TIME = Date.parse('2025-01-01T00:00:00.000Z');

/**
 * A UUID v4-shaped id derived from i, so a run can name stored products without keeping them.
 * @param {number} i
 */
export const productId = (i) => `prd_00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;

/**
 * @param {number} i
 * @param {string} userId
 */
function product(i, userId) {
  const at = new Date(BASE_TIME + i * 1000).toISOString();
  // Half the catalog carries an ERP reference and a description, so the
  // externalId unique index is populated as in a real account.
  const even = i % 2 === 0;
  return {
    id: productId(i),
    createdByUserId: userId,
    name: `Seeded product ${i}`,
    description: even ? `Seeded by the benchmark, product number ${i}` : null,
    imageUrl: null,
    externalId: even ? `sku-${i}` : null,
    active: i % 10 !== 0,
    metadata: even ? { seed: i } : {},
    deletedAt: null,
    createdAt: at,
    updatedAt: at,
    accountId: DEFAULT_ACCOUNT_ID,
  };
}

/**
 * @param {string} file snapshot path (the journal segments go beside it)
 * @param {number} count number of products
 * @returns {Promise<{ bytes: number, ms: number }>}
 */
export async function writeSnapshot(file, count) {
  const started = performance.now();
  const userId = `usr_${randomUUID()}`;
  const account = {
    id: DEFAULT_ACCOUNT_ID,
    userId,
    name: 'Default account',
    secretKey: DEFAULT_SECRET_KEY,
    keyHash: createHash('sha256').update(DEFAULT_SECRET_KEY).digest('hex'),
    permissions: ['isInvoiceAvailable', 'createTransaction'],
    webhookUrl: null,
    webhookSecret: `whsec_${randomUUID().replaceAll('-', '')}`,
    createdAt: new Date(BASE_TIME - 1000).toISOString(),
  };

  const out = createWriteStream(file, { highWaterMark: 1 << 20 });
  const failed = new Promise((_, reject) => out.once('error', reject));
  /** @param {string} text */
  const write = async (text) => {
    if (!out.write(text)) await Promise.race([once(out, 'drain'), failed]);
  };

  await write(`{"format":2,"journalSeq":0,"collections":{\n"accounts":[\n${JSON.stringify(account)}\n],\n"products":[`);
  for (let from = 0; from < count; from += CHUNK) {
    const to = Math.min(count, from + CHUNK);
    const parts = [];
    for (let i = from; i < to; i++) parts.push(JSON.stringify(product(i, userId)));
    await write((from === 0 ? '\n' : ',\n') + parts.join(',\n'));
  }
  await write('\n]\n}}\n');
  out.end();
  await Promise.race([once(out, 'close'), failed]);
  const { size } = await stat(file);
  return { bytes: size, ms: performance.now() - started };
}
