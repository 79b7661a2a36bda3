import type { AccountRecord } from '../accounts/accounts.js';
import { merchantCnpj, merchantNit, SANDBOX_INSTITUTION } from '../rails/merchant.js';
import type { TransactionRecord } from '../transactions/transaction-record.js';
import type { WithdrawalRecord } from '../withdrawals/withdrawals.js';

/** The lifecycle events of a cash-in and of a cash-out, as integrators' webhook handlers name them. */
export type WebhookEvent =
  | 'cashin.paid'
  | 'cashin.expired'
  | 'cashin.failed'
  | 'cashin.refunded'
  | 'infraction.updated'
  | 'cashout.success'
  | 'cashout.failed'
  | 'cashout.returned';

interface Party {
  name: string;
  document: string | null;
  ispb: string;
  institution: string;
}

export interface WebhookBody {
  [key: string]: unknown;
  event: WebhookEvent;
  environment: 'sandbox';
  payload: {
    transaction_id: string | null;
    withdrawal_id: string | null;
    external_id: string | null;
    amount: number;
    /** Null for a charge that was never paid, or a withdrawal never paid out. */
    end_to_end_id: string | null;
    payer: Party | null;
    /** A cash-in's merchant; a cash-out's receiver, with its ispb and institution. */
    receiver: { name: string; document: string; ispb?: string; institution?: string };
    error_message: string | null;
  };
}

function receiverDocument(record: TransactionRecord): string {
  if (record.view.currency !== 'COP') return record.details.responsibleDocument;
  const nit = merchantNit(record.accountId);
  return `${nit.base}${nit.dv}`;
}

/**
 * The webhook v2 body integrators' public client code receives: one shape for every
 * lifecycle event. The payer and end-to-end id are the transaction's own (set when it
 * was paid), so lookups and webhooks agree; a charge never paid has neither.
 */
export function webhookBody(event: WebhookEvent, record: TransactionRecord, account: AccountRecord, errorMessage: string | null = null): WebhookBody {
  const view = record.view;
  const payer = view.payer ?? null;
  return {
    event,
    environment: 'sandbox',
    payload: {
      transaction_id: record.id,
      withdrawal_id: null,
      external_id: view.externalId,
      amount: view.amount,
      end_to_end_id: view.endToEndId ?? null,
      payer: payer && { name: payer.name, document: payer.document, ispb: payer.ispb, institution: payer.bank },
      // In COP responsibleDocument is the payer's; the merchant is the sandbox's NIT for the account.
      receiver: { name: account.name, document: receiverDocument(record) },
      error_message: errorMessage,
    },
  };
}

/**
 * A cash-out's webhook, in the same envelope (integrators' typed client code has one payload
 * type for every event): `transaction_id` null and `withdrawal_id` set, the account paying
 * out as `payer`, and the key's owner as `receiver` with its ispb and institution.
 */
export function withdrawalWebhookBody(event: WebhookEvent, record: WithdrawalRecord, account: AccountRecord): WebhookBody {
  const view = record.view;
  const receiver = record.receiver;
  return {
    event,
    environment: 'sandbox',
    payload: {
      transaction_id: null,
      withdrawal_id: record.id,
      external_id: view.externalId,
      amount: view.amount,
      end_to_end_id: view.endToEndId,
      payer: { name: account.name, document: merchantCnpj(account.id), ispb: SANDBOX_INSTITUTION.ispb, institution: SANDBOX_INSTITUTION.name },
      receiver: { name: receiver.name, document: receiver.document, ispb: receiver.ispb, institution: receiver.bank },
      error_message: view.error,
    },
  };
}
