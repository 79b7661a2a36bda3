import type { AccountRecord } from '../accounts/accounts.js';
import type { Unit } from '../store/ports.js';
import type { Currency } from './transaction-record.js';
import type { TransactionRecord } from './transaction-record.js';

/** What a transition says beyond the new state: the webhook's `error_message`. */
export interface TransitionDetail {
  message?: string;
}

export interface TransactionChange {
  next: TransactionRecord;
  previous: TransactionRecord;
  /** The account-clock instant of the change. */
  at: string;
  detail: TransitionDetail;
}

/**
 * Who hears of a transaction's life (events and webhooks, the ledger, the autopilot). Each is
 * handed the unit of work of the change, so what it stores is committed with it; none depends on what
 * another does, so their order does not matter.
 */
export interface TransactionListener {
  /** Before a transaction paid at its creation (an approved test card) is made: refuses it by throwing, nothing stored yet. */
  admitPaidAtCreation?(unit: Unit, accountId: string, paid: { currency: Currency; amount: number }): Promise<void>;
  /** Before a change is stored: refuses it by throwing (the ledger's cap on what an account takes in). */
  admitChange?(unit: Unit, next: TransactionRecord, previous: TransactionRecord): Promise<void>;
  created?(unit: Unit, record: TransactionRecord, account: AccountRecord): Promise<void>;
  changed?(unit: Unit, change: TransactionChange): Promise<void>;
}
