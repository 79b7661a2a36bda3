import type { AccountRecord } from '../accounts/accounts.js';
import { merchantNit } from '../rails/merchant.js';
import type { TransactionRecord } from '../transactions/transaction-record.js';

/** The lifecycle events of a cash-in, as integrators' webhook handlers name them. */
export type WebhookEvent = 'cashin.paid' | 'cashin.expired' | 'cashin.failed' | 'cashin.refunded' | 'infraction.updated';

export interface WebhookBody {
  [key: string]: unknown;
  event: WebhookEvent;
  environment: 'sandbox';
  payload: {
    transaction_id: string;
    withdrawal_id: null;
    external_id: string | null;
    amount: number;
    /** Null for a charge that was never paid. */
    end_to_end_id: string | null;
    payer: { name: string; document: string | null; ispb: string; institution: string } | null;
    receiver: { name: string; document: string };
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
