import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARGENTINE_BANKS, PSE_BANKS } from '../../src/rails/banks.js';
import { PAYER_INSTITUTIONS } from '../../src/transactions/settlement.js';
import { createAccount } from '../helpers/catalog.js';
import { arsBody, control, copBody, created, pixBody, type Tx } from '../helpers/purchases.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';

/** Who paid comes from a bank of the charge's country, in the lookup and in the webhook alike. */
let sb: TestSandbox;
let client: Client;
beforeAll(async () => {
  sb = await startSandbox();
  client = (await createAccount(sb)).client;
});
afterAll(() => sb.stop());

const padded = (banks: readonly { code: string; name: string }[]) => banks.map((b) => ({ bank: b.name, ispb: b.code.padStart(8, '0') }));

async function paid(body: Record<string, unknown>): Promise<{ tx: Tx; institution: unknown; ispb: unknown }> {
  const tx = (await control(client, (await created(client, body)).id, 'pay')).body;
  const log = await client.get<{ data: { payload: { payload: { payer: { institution: string; ispb: string } } } }[] }>(`/_sandbox/webhooks?transactionId=${tx.id}`);
  const payer = log.body.data[0]?.payload.payload.payer;
  return { tx, institution: payer?.institution, ispb: payer?.ispb };
}

describe("the payer's bank", () => {
  it('is Colombian for a COP payment (PSE, bank transfer, Bre-B), Nequi for a Nequi one', async () => {
    const colombian = padded(PSE_BANKS);
    for (const paymentMethod of ['PSE', 'BANK_TRANSFER', 'BREB', 'PSE', 'PSE']) {
      const { tx, institution, ispb } = await paid(copBody({ paymentMethod }));
      const payer = tx.payer as { bank: string; ispb: string };
      expect(colombian, `${paymentMethod}: ${payer.bank}`).toContainEqual({ bank: payer.bank, ispb: payer.ispb });
      expect([institution, ispb]).toEqual([payer.bank, payer.ispb]);
      expect(tx.endToEndId).toMatch(new RegExp(`^E${payer.ispb}`));
    }
    const nequi = (await paid(copBody({ paymentMethod: 'NEQUI' }))).tx.payer as { bank: string; ispb: string };
    expect(nequi).toMatchObject({ bank: 'Nequi', ispb: '00001507' });
  });

  it('is Argentine for an ARS payment and Brazilian for a BRL one', async () => {
    const ars = (await paid(arsBody())).tx.payer as { bank: string; ispb: string };
    expect(padded(ARGENTINE_BANKS)).toContainEqual({ bank: ars.bank, ispb: ars.ispb });
    const brl = (await paid(pixBody())).tx.payer as { bank: string; ispb: string };
    expect(PAYER_INSTITUTIONS.map((i) => ({ bank: i.bank, ispb: i.ispb }))).toContainEqual({ bank: brl.bank, ispb: brl.ispb });
  });
});
