// The built-in fee table, pinned to the README's Fees table as literal numbers worked out by
// hand: never computed from src/transactions/fees.ts, so a changed default fails here.
//
// | currency / method | percent | fixed |
// | COP (all four)    | 2.99 %  | 90,000 |
// | ARS               | 1.50 %  | 0      |
// | BRL PIX           | 0.99 %  | 0      |
// | BRL BOLETO        | 0 %     | 349    |
// | BRL PIX_BOLETO    | 0.99 %  | 0      |
// | BRL CREDIT_CARD   | 3.99 %  | 39     |
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../helpers/catalog.js';
import { arsBody, boletoBody, cardBody, copBody, created, hybridBody, pixBody, type Body } from '../helpers/purchases.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';

let sb: TestSandbox;
let client: Client;
beforeAll(async () => {
  sb = await startSandbox({ instructionDelayMs: 600_000 });
  ({ client } = await createAccount(sb));
});
afterAll(() => sb.stop());

// Amounts chosen so that no percentage lands on half a centavo: the rounding rule is not what is pinned here.
const CASES: [label: string, body: Body, costFee: number][] = [
  // 1,500,000 × 2.99 % = 44,850; + 90,000
  ['COP BANK_TRANSFER', copBody({ amount: 1_500_000 }), 134_850],
  ['COP PSE', copBody({ amount: 1_500_000, paymentMethod: 'PSE' }), 134_850],
  ['COP NEQUI', copBody({ amount: 1_500_000, paymentMethod: 'NEQUI' }), 134_850],
  ['COP BREB', copBody({ amount: 1_500_000, paymentMethod: 'BREB' }), 134_850],
  // 500,000 × 1.50 % = 7,500
  ['ARS', arsBody({ amount: 500_000 }), 7_500],
  // 20,000 × 0.99 % = 198
  ['BRL PIX', pixBody({ amount: 20_000 }), 198],
  // 0 % of anything; + 349
  ['BRL BOLETO', boletoBody({ amount: 20_000 }), 349],
  // 20,000 × 0.99 % = 198
  ['BRL PIX_BOLETO', hybridBody({ amount: 20_000 }), 198],
  // 20,000 × 3.99 % = 798; + 39
  ['BRL CREDIT_CARD', cardBody({ amount: 20_000 }), 837],
];

describe('default costFee, as the README states it', () => {
  it.each(CASES)('%s', async (_label, body, costFee) => {
    expect((await created(client, body)).costFee).toBe(costFee);
  });
});
