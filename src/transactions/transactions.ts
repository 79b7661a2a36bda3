import type { AccountRecord } from '../accounts/accounts.js';
import { invalid, notFound } from '../errors.js';
import type { AccountClocks } from '../scheduler/account-clocks.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import type { PurchaseRequest, Transaction } from '../spec/types.js';
import type { Collection, Store } from '../store/store.js';
import { chargeClabe } from '../rails/clabe.js';
import { feeFor, type FeeTable } from './fees.js';
import type { Limits } from './limits.js';
import { checkDocuments } from './documents-check.js';
import { defaultDueDate, checkDueDate } from './due-date.js';
import { settlementOf } from './settlement.js';
import { cardBrand, cardOutcome, passesLuhn } from './test-cards.js';
import { newPayerToken, type Currency, type PurchaseDetails, type TransactionRecord } from './transaction-record.js';

export const FILL_JOB = 'fillInstruction';
/** A plain Pix not paid by its expiresAt expires, on the account's clock. */
export const EXPIRE_PIX_JOB = 'expirePix';

/** The exact message integrations match on for an unknown transaction; details go in the hint. */
export const TRANSACTION_NOT_FOUND = 'Transaction not found';

interface Counter {
  id: string;
  last: number;
}

interface ExternalRef {
  /** `${accountId}\n${externalId}` */
  id: string;
  transactionId: string;
}

/** Ids are numeric strings, increasing and unique across accounts. */
const FIRST_ID = 100_000_000;

export interface TransactionsOptions {
  fees: FeeTable;
  instructionDelayMs: number;
  strictDocuments: boolean;
  /** `immediate`: a plain Pix carries its code in the 201; `delayed`: filled later like the hybrid. */
  pixInstruction: 'immediate' | 'delayed';
  /** Lifetime of a plain Pix (its expiresAt). */
  pixExpiryMs: number;
  /** The accounts' purchase minimums. */
  limits: Limits;
}

export class Transactions {
  readonly records: Collection<TransactionRecord>;
  private readonly counters: Collection<Counter>;
  private readonly refs: Collection<ExternalRef>;
  private readonly createListeners: ((record: TransactionRecord) => void)[] = [];
  private readonly paidAtCreationChecks: ((accountId: string, paid: { currency: Currency; amount: number }) => void)[] = [];
  /** Fills an instruction at creation (plain Pix, immediate mode); set by the wiring, which owns the fill. */
  private fillNow: ((record: TransactionRecord, account: AccountRecord) => TransactionRecord) | undefined;

  constructor(
    store: Store,
    private readonly clocks: AccountClocks,
    private readonly scheduler: Scheduler,
    private readonly options: TransactionsOptions,
  ) {
    this.records = store.collection<TransactionRecord>('transactions', { groupBy: (t) => t.accountId });
    this.counters = store.collection<Counter>('counters');
    this.refs = store.collection<ExternalRef>('transactionRefs');
  }

  onCreate(listener: (record: TransactionRecord) => void): void {
    this.createListeners.push(listener);
  }

  /** A check run before a charge paid at creation (an approved test card) is made, which refuses it by throwing (the ledger's cap). */
  beforePaidAtCreation(check: (accountId: string, paid: { currency: Currency; amount: number }) => void): void {
    this.paidAtCreationChecks.push(check);
  }

  setImmediateFill(fill: (record: TransactionRecord, account: AccountRecord) => TransactionRecord): void {
    this.fillNow = fill;
  }

  create(account: AccountRecord, input: PurchaseRequest): TransactionRecord {
    const currency: Currency = input.currency ?? 'BRL';
    const method = input.paymentMethod ?? (currency === 'MXN' ? 'SPEI' : 'BANK_TRANSFER');
    const now = this.clocks.nowMs(account.id);
    this.options.limits.check(account.id, currency, method, input.amount);
    if (this.options.strictDocuments) checkDocuments(currency, input);
    const boletoKind = currency === 'BRL' && (method === 'BOLETO' || method === 'PIX_BOLETO');
    const dueDate = boletoKind ? (input.dueDate ?? defaultDueDate(now)) : null;
    if (boletoKind && input.dueDate !== undefined) checkDueDate(input.dueDate, now);
    // Every refusal comes before the first change: a 400 leaves nothing behind, not even a used id.
    if (method === 'CREDIT_CARD' && cardOutcome(checkCard(input, now).number).status === 'APPROVED') {
      for (const check of this.paidAtCreationChecks) check(account.id, { currency, amount: input.amount });
    }

    const id = this.nextId();
    const plainPix = currency === 'BRL' && method === 'PIX';
    const base = {
      id,
      transactionId: id,
      currency,
      method,
      installments: null,
      externalId: input.externalId ?? null,
      status: 'PENDING' as const,
      statusReason: null,
      amount: input.amount,
      // The request's own URL only ("" is how integrations send "none"); the account's is read when an event happens.
      postbackUrl: input.postbackUrl || null,
      referrerUrl: null,
      expiresAt: plainPix ? new Date(now + this.options.pixExpiryMs).toISOString() : null,
      createdAt: new Date(now).toISOString(),
      costFee: feeFor(this.options.fees, currency, method, input.amount),
      approvedAt: null,
      endToEndId: null,
      payer: null,
    };
    let view: Transaction;
    // An SPEI provider assigns the charge's CLABE when it creates it: nothing to fill later.
    const speiAtOnce = currency === 'MXN';
    if (currency === 'COP') view = { ...base, currency, redirectUrl: null } as Transaction;
    else if (currency === 'MXN') view = { ...base, currency, clabe: chargeClabe(id) } as Transaction;
    else if (currency === 'ARS') view = { ...base, currency, cvu: null, paymentInstruction: {} } as Transaction;
    else if (method === 'CREDIT_CARD') view = this.cardView(base, input, now);
    else {
      view = {
        ...base,
        ...(method !== 'BOLETO' && { pixCode: '' }),
        ...(method !== 'PIX' && { paymentInstruction: {} }),
        paidRail: null,
      } as Transaction;
    }

    let record: TransactionRecord = { id, accountId: account.id, view, details: detailsOf(input, dueDate), filledAt: speiAtOnce ? now : null, payerToken: newPayerToken() };
    if (plainPix && this.options.pixInstruction === 'immediate' && this.fillNow) record = this.fillNow(record, account);
    this.records.put(record);
    if (record.view.externalId !== null) {
      this.refs.put({ id: `${account.id}\n${record.view.externalId}`, transactionId: id });
    }
    if (method !== 'CREDIT_CARD' && record.filledAt === null) {
      this.scheduler.schedule(account.id, FILL_JOB, id, now + this.options.instructionDelayMs);
    }
    if (plainPix) this.scheduler.schedule(account.id, EXPIRE_PIX_JOB, id, now + this.options.pixExpiryMs);
    for (const listener of this.createListeners) listener(record);
    return record;
  }

  /** Another account's transaction answers exactly like a missing one. */
  get(account: { id: string }, id: string): TransactionRecord {
    const record = this.records.get(id);
    if (!record || record.accountId !== account.id) throw notFound(TRANSACTION_NOT_FOUND, `no transaction with id ${id} in this account`);
    return record;
  }

  /** The most recent transaction with this externalId (the spec does not make them unique). */
  getByExternalId(account: { id: string }, externalId: string): TransactionRecord {
    const ref = this.refs.get(`${account.id}\n${externalId}`);
    const record = ref && this.records.get(ref.transactionId);
    if (!record || record.accountId !== account.id) throw notFound(TRANSACTION_NOT_FOUND, `no transaction with externalId ${externalId} in this account`);
    return record;
  }

  replace(record: TransactionRecord): void {
    this.records.put(record);
  }

  /** The record with its payer-page token, given one now (and stored) if it was stored before tokens existed. */
  withPayerToken(record: TransactionRecord): TransactionRecord & { payerToken: string } {
    if (record.payerToken !== undefined) return { ...record, payerToken: record.payerToken };
    const next = { ...record, payerToken: newPayerToken() };
    this.records.put(next);
    return next;
  }

  /** Wipes an account's transactions (control API reset). */
  deleteAll(accountId: string): number {
    const owned = [...this.records.group(accountId)];
    for (const record of owned) {
      this.records.delete(record.id);
      if (record.view.externalId !== null) {
        const key = `${accountId}\n${record.view.externalId}`;
        if (this.refs.get(key)?.transactionId === record.id) this.refs.delete(key);
      }
    }
    return owned.length;
  }

  /**
   * Retention: deletes up to `limit` of the account's settled transactions created before
   * `cutoff` (ISO, account clock). PENDING ones stay: they can still be paid or expire.
   */
  deleteOlderThan(accountId: string, cutoff: string, limit: number): number {
    const old: TransactionRecord[] = [];
    for (const record of this.records.group(accountId)) {
      if (old.length >= limit || record.view.createdAt >= cutoff) break;
      if (record.view.status !== 'PENDING') old.push(record);
    }
    for (const record of old) {
      this.records.delete(record.id);
      const key = `${accountId}\n${record.view.externalId}`;
      if (record.view.externalId !== null && this.refs.get(key)?.transactionId === record.id) this.refs.delete(key);
    }
    return old.length;
  }

  private cardView(base: Record<string, unknown>, input: PurchaseRequest, now: number): Transaction {
    const card = checkCard(input, now);
    const outcome = cardOutcome(card.number);
    const approved = outcome.status === 'APPROVED';
    return {
      ...base,
      installments: input.installments ?? 1,
      status: outcome.status,
      statusReason: outcome.status === 'BLOCKED' ? 'DECLINED' : null,
      ...(approved && settlementOf(input.name, input.cpf ?? null, new Date(now), { currency: 'BRL', method: 'CREDIT_CARD' })),
      paidRail: approved ? 'CARD' : null,
      card: { brand: cardBrand(card.number), last4: card.number.slice(-4), holderName: card.holderName },
      declineReason: outcome.declineReason,
    } as Transaction;
  }

  private nextId(): string {
    const last = this.counters.get('transaction')?.last ?? FIRST_ID - 1;
    this.counters.put({ id: 'transaction', last: last + 1 });
    return String(last + 1);
  }
}

function checkCard(input: PurchaseRequest, now: number): NonNullable<PurchaseRequest['card']> {
  if (!input.card) throw invalid('card is required for CREDIT_CARD');
  // Typed as printed on the card ("4111 1111 1111 1111"); the schema allowed single separators.
  const card = { ...input.card, number: input.card.number.replace(/[ -]/g, '') };
  if (!passesLuhn(card.number)) throw invalid('card.number is not a valid card number (Luhn check)');
  const today = new Date(now);
  const expired =
    card.expirationYear < today.getUTCFullYear() ||
    (card.expirationYear === today.getUTCFullYear() && card.expirationMonth < today.getUTCMonth() + 1);
  if (expired) throw invalid('card is expired: expirationMonth/expirationYear is in the past');
  return card;
}

function detailsOf(input: PurchaseRequest, dueDate: string | null): PurchaseDetails {
  return {
    name: input.name,
    email: input.email,
    phone: input.phone ?? null,
    cpf: input.cpf ?? null,
    description: input.description,
    responsibleDocument: input.responsibleDocument,
    responsibleExternalId: input.responsibleExternalId,
    boletoAddress: input.boletoAddress ?? null,
    dueDate,
  };
}
