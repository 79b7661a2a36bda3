import { randomText } from '../random.js';
import type { BoletoAddress, Transaction } from '../spec/types.js';

export type Currency = 'COP' | 'ARS' | 'BRL' | 'MXN';
export type Method = Transaction['method'];

/** What the payer and the merchant told us; kept for the hosted pages and webhooks, never echoed whole. */
export interface PurchaseDetails {
  name: string;
  email: string;
  phone: string | null;
  cpf: string | null;
  description: string;
  responsibleDocument: string;
  responsibleExternalId: string;
  boletoAddress: BoletoAddress | null;
  /** YYYY-MM-DD, boleto kinds only. */
  dueDate: string | null;
}

/** Stored form: the API view plus what only the sandbox needs. */
export interface TransactionRecord {
  id: string;
  accountId: string;
  view: Transaction;
  details: PurchaseDetails;
  /** The account-clock instant (ms) at which the instruction was filled, or null while pending. */
  filledAt: number | null;
  /**
   * What opens the payer pages (checkout, boleto, Pix) in their links: ids are sequential and
   * global, so an id alone must open nothing. Absent only on records stored before tokens
   * existed; they get one when filled or when their owner asks for their links.
   */
  payerToken?: string;
}

/** 144 random bits, URL-safe: a link nobody can guess. */
export function newPayerToken(): string {
  return randomText(18, 'base64url');
}

export function toTransaction(record: TransactionRecord): Transaction {
  return record.view;
}

/** True when the instruction fields the variant needs are filled. */
export function isFilled(record: TransactionRecord): boolean {
  return record.filledAt !== null;
}

/** Why a transaction left PENDING other than by being paid (sandbox field `statusReason`). */
export type StatusReason = NonNullable<Transaction['statusReason']>;
