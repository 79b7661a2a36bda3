import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Offer, Product } from '../../src/spec/types.js';
import { pixBody, type Tx } from '../helpers/purchases.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { storedState } from '../helpers/test-store.js';

const dirs: string[] = [];
const sandboxes: TestSandbox[] = [];
afterEach(async () => {
  for (const sb of sandboxes.splice(0)) await sb.stop();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});


const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-seed-'));
  dirs.push(dir);
  return dir;
};

const FIXTURES = `
accounts:
  - id: acc_team_shop
    name: Team shop
    secretKey: sk_test_team_shop_0001
    webhookUrl: null
    products:
      - externalId: SKU-1
        name: Coffee beans
        metadata: { origin: minas }
        offers:
          - { name: Monthly, amount: 4990, billingCycle: MONTHLY }
          - { name: Once, amount: 5990 }
      - externalId: SKU-2
        name: Grinder
        active: false
    transactions:
      - ${JSON.stringify({ ...pixBody({ amount: 1234 }), externalId: 'order-1' })}
      - ${JSON.stringify({ ...pixBody({ amount: 999 }), externalId: 'order-2', paid: true })}
`;

async function start(dir: string, seedFile: string): Promise<TestSandbox> {
  const sb = await startSandbox({ dataFile: join(dir, 'sandbox.json'), seedFile, instructionDelayMs: 0 });
  sandboxes.push(sb);
  return sb;
}

async function stop(sb: TestSandbox): Promise<{ [name: string]: unknown[] }> {
  sandboxes.splice(sandboxes.indexOf(sb), 1);
  await sb.stop();
  return storedState(sb);
}

describe('--seed-file', () => {
  it('creates accounts with fixed keys, products, offers and transactions, and applying it twice gives the same state', async () => {
    const dir = tempDir();
    const seedFile = join(dir, 'fixtures.yaml');
    writeFileSync(seedFile, FIXTURES);

    const first = await start(dir, seedFile);
    const shop = first.clientFor('sk_test_team_shop_0001');
    const products = (await shop.get<{ data: Product[] }>('/v2/products')).body.data;
    expect(products.map((p) => [p.externalId, p.name, p.active])).toEqual([
      ['SKU-1', 'Coffee beans', true],
      ['SKU-2', 'Grinder', false],
    ]);
    const offers = (await shop.get<{ data: Offer[] }>(`/v2/products/${products[0]?.id}/offers`)).body.data;
    expect(offers.map((o) => [o.name, o.amount, o.billingCycle])).toEqual([
      ['Monthly', 4990, 'MONTHLY'],
      ['Once', 5990, null],
    ]);
    expect((await shop.get<Tx>('/transactions/order-1?searchBy=externalId')).body).toMatchObject({ amount: 1234, status: 'PENDING' });
    expect((await shop.get<Tx>('/transactions/order-2?searchBy=externalId')).body).toMatchObject({ amount: 999, status: 'APPROVED' });
    const once = await stop(first);

    const second = await start(dir, seedFile);
    expect((await second.clientFor('sk_test_team_shop_0001').get<{ data: Product[] }>('/v2/products')).body.data).toEqual(products);
    const twice = await stop(second);
    expect(twice).toEqual(once);
  });

  it('reads JSON too, and refuses a bad fixture naming the file and the field', async () => {
    const dir = tempDir();
    const json = join(dir, 'fixtures.json');
    writeFileSync(json, JSON.stringify({ accounts: [{ id: 'acc_json', secretKey: 'sk_test_json_0001', products: [{ externalId: 'A', name: 'From JSON' }] }] }));
    const sb = await start(dir, json);
    expect((await sb.clientFor('sk_test_json_0001').get<{ data: Product[] }>('/v2/products')).body.data.map((p) => p.name)).toEqual(['From JSON']);
    await stop(sb);

    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'accounts:\n  - id: acc_bad\n    secretKey: sk_test_bad_0001\n    products:\n      - externalId: B\n        name: ""\n');
    await expect(startSandbox({ dataFile: join(tempDir(), 'sandbox.json'), seedFile: bad })).rejects.toThrow(`seed file ${bad}: accounts.0.products.0.name`);
  });
});
