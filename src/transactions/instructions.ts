import { createHash } from 'node:crypto';
import type { AccountRecord } from '../accounts/accounts.js';
import { buildAlias, buildCuit, buildCvu } from '../rails/argentina.js';
import { buildBoleto } from '../rails/boleto.js';
import { pixMerchantName } from '../rails/merchant.js';
import { buildBrCode } from '../rails/pix.js';
import { cryptoRng, type Rng } from '../rails/random.js';
import type { Transaction } from '../spec/types.js';
import { newPayerToken, type TransactionRecord } from './transaction-record.js';

/** The sandbox collects as bank 341 with wallet 109, like the boleto samples merchants know. */
const BOLETO_BANK = '341';
const BOLETO_WALLET = '109';
const PIX_CITY = 'SAO PAULO';
const CVU_BANK = 'Sandbox PSP';

export const checkoutPath = (id: string): string => `/_sandbox/checkout/${id}`;
export const boletoPath = (id: string): string => `/_sandbox/boletos/${id}`;
export const pixQrPath = (id: string): string => `/_sandbox/pix/${id}/qr.png`;
export const pixPagePath = (id: string): string => `/_sandbox/pix/${id}`;
/** A payer page's path with the token that opens it. */
export const withToken = (path: string, token: string): string => `${path}?token=${encodeURIComponent(token)}`;

/** A stable random (EVP) Pix key per account, shaped like a UUID v4. */
function pixKeyOf(accountId: string): string {
  const h = createHash('sha256').update(`pix:${accountId}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * Produces the payment instruction in the real formats: the hosted payer page for COP,
 * a CVU and its beneficiary for ARS, a BR Code and/or a registered boleto for BRL.
 */
export function fillInstruction(
  record: TransactionRecord,
  account: AccountRecord,
  publicUrl: string,
  filledAt: number,
  rng: Rng = cryptoRng,
): TransactionRecord {
  const view = record.view;
  const filled: Record<string, unknown> = {};
  // The link is the payer's key to the page; a record from before tokens gets its own now.
  const token = record.payerToken ?? newPayerToken();
  if (view.currency === 'COP') {
    filled.redirectUrl = `${publicUrl}${withToken(checkoutPath(record.id), token)}`;
  } else if (view.currency === 'ARS') {
    const cvu = buildCvu(rng);
    filled.cvu = cvu;
    filled.paymentInstruction = {
      beneficiary: { name: account.name, cuit: buildCuit(rng, 'company'), cvu, alias: buildAlias(rng), bank: CVU_BANK },
    };
  } else {
    if (view.method === 'PIX' || view.method === 'PIX_BOLETO') {
      filled.pixCode = buildBrCode({
        kind: 'static',
        key: pixKeyOf(account.id),
        amountCentavos: view.amount,
        merchantName: pixMerchantName(account.name),
        merchantCity: PIX_CITY,
        txid: `SBX${record.id}`,
      });
    }
    if ((view.method === 'BOLETO' || view.method === 'PIX_BOLETO') && record.details.dueDate) {
      const boleto = buildBoleto({
        bankCode: BOLETO_BANK,
        amountCentavos: view.amount,
        dueDate: record.details.dueDate,
        // Wallet + "nosso número" from the transaction id: one boleto per transaction.
        freeField: `${BOLETO_WALLET}${record.id.padStart(22, '0')}`.slice(-25),
      });
      filled.paymentInstruction = {
        type: 'BOLETO',
        dueDate: `${record.details.dueDate}T00:00:00.000Z`,
        boletoUrl: `${publicUrl}${withToken(boletoPath(record.id), token)}`,
        boletoBarcode: boleto.barcode,
        boletoDigitableLine: boleto.digitableLine,
      };
    }
  }
  return { ...record, view: { ...view, ...filled } as Transaction, filledAt, payerToken: token };
}
