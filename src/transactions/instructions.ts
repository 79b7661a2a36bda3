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
/**
 * A payer page's path with the token that opens it. Tokens are the sandbox's own (hex), but a
 * hand-edited data file could hold a lone surrogate, on which encodeURIComponent throws: lone
 * surrogates become U+FFFD first (one character class, one linear pass), so the link is wrong
 * rather than the page an error.
 */
export const withToken = (path: string, token: string): string => `${path}?token=${encodeURIComponent(token.replace(/[\ud800-\udfff]/gu, '\ufffd'))}`;

/** A stable random (EVP) Pix key per account, shaped like a UUID v4. */
function pixKeyOf(accountId: string): string {
  const h = createHash('sha256').update(`pix:${accountId}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** What an instruction is made from: the charge, and whom it pays. */
export interface InstructionInput {
  id: string;
  accountId: string;
  accountName: string;
  currency: string;
  method: string;
  amount: number;
  /** YYYY-MM-DD, boleto kinds only. */
  dueDate: string | null;
  /** The token that opens the hosted payer pages (src/pages); their links carry it. */
  payerToken?: string;
}

/**
 * The instruction fields in the real formats: the hosted payer page for COP, a CVU and its
 * beneficiary for ARS, a BR Code and/or a registered boleto for BRL. Mock mode (src/mock) makes
 * its answers' instructions here too.
 */
export function instructionFields(input: InstructionInput, publicUrl: string, rng: Rng = cryptoRng): Record<string, unknown> {
  const filled: Record<string, unknown> = {};
  const link = (path: string): string => `${publicUrl}${input.payerToken === undefined ? path : withToken(path, input.payerToken)}`;
  if (input.currency === 'COP') {
    filled.redirectUrl = link(checkoutPath(input.id));
  } else if (input.currency === 'ARS') {
    const cvu = buildCvu(rng);
    filled.cvu = cvu;
    filled.paymentInstruction = {
      beneficiary: { name: input.accountName, cuit: buildCuit(rng, 'company'), cvu, alias: buildAlias(rng), bank: CVU_BANK },
    };
  } else {
    if (input.method === 'PIX' || input.method === 'PIX_BOLETO') {
      filled.pixCode = buildBrCode({
        kind: 'static',
        key: pixKeyOf(input.accountId),
        amountCentavos: input.amount,
        merchantName: pixMerchantName(input.accountName),
        merchantCity: PIX_CITY,
        txid: `SBX${input.id}`,
      });
    }
    if ((input.method === 'BOLETO' || input.method === 'PIX_BOLETO') && input.dueDate) {
      const boleto = buildBoleto({
        bankCode: BOLETO_BANK,
        amountCentavos: input.amount,
        dueDate: input.dueDate,
        // Wallet + "nosso número" from the transaction id: one boleto per transaction.
        freeField: `${BOLETO_WALLET}${input.id.padStart(22, '0')}`.slice(-25),
      });
      filled.paymentInstruction = {
        type: 'BOLETO',
        dueDate: `${input.dueDate}T00:00:00.000Z`,
        boletoUrl: link(boletoPath(input.id)),
        boletoBarcode: boleto.barcode,
        boletoDigitableLine: boleto.digitableLine,
      };
    }
  }
  return filled;
}

/** The record with its payment instruction filled (instructionFields), at `filledAt` on the account clock. */
export function fillInstruction(
  record: TransactionRecord,
  { account, publicUrl, filledAt, rng = cryptoRng }: { account: AccountRecord; publicUrl: string; filledAt: number; rng?: Rng },
): TransactionRecord {
  const view = record.view;
  // The link is the payer's key to the page; a record from before tokens gets its own now.
  const token = record.payerToken ?? newPayerToken();
  const filled = instructionFields(
    { id: record.id, accountId: account.id, accountName: account.name, currency: view.currency, method: view.method, amount: view.amount, dueDate: record.details.dueDate, payerToken: token },
    publicUrl,
    rng,
  );
  return { ...record, view: { ...view, ...filled } as Transaction, filledAt, payerToken: token };
}
