import type { AccountRecord } from '../accounts/accounts.js';
import { merchantNit } from '../rails/merchant.js';
import { endToEndId } from '../rails/pix-e2e.js';
import { cryptoRng, pick, type Rng } from '../rails/random.js';
import type { TransactionRecord } from '../transactions/transaction-record.js';

/** Real Brazilian institutions and their ISPB codes, as a payer's bank would appear. */
const PAYER_INSTITUTIONS = [
  { ispb: '00000000', institution: 'BCO DO BRASIL S.A.' },
  { ispb: '60701190', institution: 'ITAÚ UNIBANCO S.A.' },
  { ispb: '60746948', institution: 'BCO BRADESCO S.A.' },
  { ispb: '90400888', institution: 'BCO SANTANDER (BRASIL) S.A.' },
  { ispb: '00360305', institution: 'CAIXA ECONOMICA FEDERAL' },
  { ispb: '18236120', institution: 'NU PAGAMENTOS - IP' },
] as const;

export interface CashinPaidBody {
  [key: string]: unknown;
  event: 'cashin.paid';
  environment: 'sandbox';
  payload: {
    transaction_id: string;
    withdrawal_id: null;
    external_id: string | null;
    amount: number;
    end_to_end_id: string;
    payer: { name: string; document: string | null; ispb: string; institution: string };
    receiver: { name: string; document: string };
    error_message: null;
  };
}

function receiverDocument(record: TransactionRecord): string {
  if (record.view.currency !== 'COP') return record.details.responsibleDocument;
  const nit = merchantNit(record.accountId);
  return `${nit.base}${nit.dv}`;
}

/** The webhook v2 body integrators' public client code receives for a paid cash-in. */
export function cashinPaidBody(record: TransactionRecord, account: AccountRecord, paidAt: Date, rng: Rng = cryptoRng): CashinPaidBody {
  const bank = pick(rng, PAYER_INSTITUTIONS);
  return {
    event: 'cashin.paid',
    environment: 'sandbox',
    payload: {
      transaction_id: record.id,
      withdrawal_id: null,
      external_id: record.view.externalId,
      amount: record.view.amount,
      end_to_end_id: endToEndId(bank.ispb, paidAt, rng),
      payer: {
        name: record.details.name,
        // BRL carries the payer's CPF; in COP the payer's document is responsibleDocument.
        document: record.details.cpf ?? (record.view.currency === 'COP' ? record.details.responsibleDocument : null),
        ispb: bank.ispb,
        institution: bank.institution,
      },
      // In COP responsibleDocument is the payer's; the merchant is the sandbox's NIT for the account.
      receiver: { name: account.name, document: receiverDocument(record) },
      error_message: null,
    },
  };
}
