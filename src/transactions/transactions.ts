import type { AccountRecord } from '../accounts/accounts.js';
import { bytesOfInput, type Usage } from '../accounts/usage.js';
import { invalid, notFound } from '../errors.js';
import { Records, type Page, type PageQuery } from '../records/records.js';
import type { AccountClocks } from '../scheduler/account-clocks.js';
import type { PurchaseRequest, Transaction } from '../spec/types.js';
import type { Reads, Repository, TableSpec, Unit } from '../store/ports.js';
import { chargeClabe } from '../rails/clabe.js';
import { feeFor, type FeeTable } from './fees.js';
import type { Limits } from './limits.js';
import { checkDocuments } from './documents-check.js';
import { defaultDueDate, checkDueDate } from './due-date.js';
import { fillInstruction } from './instructions.js';
import type { TransactionJobs } from './jobs.js';
import type { TransactionListener } from './listeners.js';
import { settlementOf } from './settlement.js';
import { cardBrand, cardOutcome, passesLuhn, type CardOutcome } from './test-cards.js';
import { newPayerToken, type Currency, type Method, type PurchaseDetails, type TransactionRecord } from './transaction-record.js';

/** The currency of a purchase that names none. */
export const DEFAULT_CURRENCY: Currency = 'BRL';

/** The method of a purchase that names none (openapi.yaml requires a BRL purchase to name its own). */
export const defaultMethodOf = (currency: Currency): Method => (currency === 'MXN' ? 'SPEI' : 'BANK_TRANSFER');

/** The exact message integrations match on for an unknown transaction; details go in the hint. */
export const TRANSACTION_NOT_FOUND = 'Transaction not found';

/** Ids are global (payer pages find a transaction by id and token alone); the control API's list filters on status, currency and method. */
export const TRANSACTIONS: TableSpec<TransactionRecord> = {
  name: 'transactions',
  globalIds: true,
  filters: { status: (t) => t.view.status, currency: (t) => t.view.currency, method: (t) => t.view.method },
};

/** What `GET /_sandbox/transactions` filters on; all of them at once (AND). */
export interface TransactionQuery extends PageQuery {
  status?: Transaction['status'];
  currency?: Currency;
  method?: Method;
  /** ISO instant: created at or after it. */
  createdFrom?: string;
  /** ISO instant: created before it (exclusive, so consecutive ranges do not overlap). */
  createdTo?: string;
  externalIdPrefix?: string;
}

/** The transaction an externalId names in an account: the most recent with it (the spec does not make them unique). */
interface ExternalIdRef {
  /** The externalId. */
  id: string;
  accountId: string;
  transactionId: string;
}

export const TRANSACTION_EXTERNAL_IDS: TableSpec<ExternalIdRef> = { name: 'transactionExternalIds' };

/** Ids are numeric strings from this one on, increasing and unique across accounts. */
export const FIRST_ID = 100_000_000;

export interface TransactionsOptions {
  repository: Repository;
  clocks: AccountClocks;
  /** The accounts' purchase minimums. */
  limits: Limits;
  /** The transaction's scheduled work (fill, expiry). */
  jobs: TransactionJobs;
  /** Who hears of a new transaction (events and webhooks, ledger, autopilot). */
  listeners: readonly TransactionListener[];
  /** Base of the links in a filled instruction (SANDBOX_PUBLIC_URL, or the URL the server listens on). */
  publicUrl: () => string;
  fees: FeeTable;
  strictDocuments: boolean;
  /** `immediate`: a plain Pix carries its code in the 201; `delayed`: filled later like the hybrid. */
  pixInstruction: 'immediate' | 'delayed';
  /** Lifetime of a plain Pix (its expiresAt). */
  pixExpiryMs: number;
  /** What the account stores, against its quotas. */
  usage: Usage;
}

/** An ISO instant of a query as ms since the epoch (openapi.yaml checked its format; offsets such as -03:00 count). */
function instant(field: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw invalid(`${field} must be an ISO 8601 instant such as 2030-01-01T00:00:00Z, not ${value}`);
  return ms;
}

const missing = (why: string) => () => notFound(TRANSACTION_NOT_FOUND, why);

export class Transactions {
  private readonly records: Records<TransactionRecord>;

  constructor(private readonly options: TransactionsOptions) {
    this.records = new Records(options.repository, TRANSACTIONS);
  }

  async create(unit: Unit, account: AccountRecord, input: PurchaseRequest): Promise<TransactionRecord> {
    const currency: Currency = input.currency ?? DEFAULT_CURRENCY;
    const method = input.paymentMethod ?? defaultMethodOf(currency);
    const now = await this.options.clocks.nowMs(unit, account.id);
    await this.options.limits.check(account.id, currency, method, input.amount);
    if (this.options.strictDocuments) checkDocuments(currency, input);
    const boletoKind = currency === 'BRL' && (method === 'BOLETO' || method === 'PIX_BOLETO');
    const dueDate = boletoKind ? (input.dueDate ?? defaultDueDate(now)) : null;
    if (boletoKind && input.dueDate !== undefined) checkDueDate(input.dueDate, now);
    // Before anything is locked or changed: the usage row is the first lock a purchase takes, as a cash-out's.
    await this.options.usage.charge(unit, account.id, { what: 'transaction', records: 1, bytes: bytesOfInput(input) });
    // Every refusal comes before the first change: a 400 leaves nothing behind, not even a used id.
    // Checked and classified once: what admits a paid-at-creation charge is what the view shows.
    const card = method === 'CREDIT_CARD' ? checkCard(input, now) : null;
    if (card?.outcome.status === 'APPROVED') {
      for (const listener of this.options.listeners) await listener.admitPaidAtCreation?.(unit, account.id, { currency, amount: input.amount });
    }

    const id = String(FIRST_ID - 1 + (await unit.sequences.next('transaction_id')));
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
    else if (card !== null) view = this.cardView(base, input, card, now);
    else {
      view = {
        ...base,
        ...(method !== 'BOLETO' && { pixCode: '' }),
        ...(method !== 'PIX' && { paymentInstruction: {} }),
        paidRail: null,
      } as Transaction;
    }

    let record: TransactionRecord = { id, accountId: account.id, view, details: detailsOf(input, dueDate), filledAt: speiAtOnce ? now : null, payerToken: newPayerToken() };
    // A plain Pix answered with its code: filled as it is created, no transition of its own.
    if (plainPix && this.options.pixInstruction === 'immediate') record = fillInstruction(record, { account, publicUrl: this.options.publicUrl(), filledAt: now });
    await this.records.in(unit).put(record);
    if (record.view.externalId !== null) await unit.table(TRANSACTION_EXTERNAL_IDS).put({ id: record.view.externalId, accountId: account.id, transactionId: id });
    await this.options.jobs.created(unit, record, now);
    for (const listener of this.options.listeners) await listener.created?.(unit, record, account);
    return record;
  }

  /** Another account's transaction answers exactly like a missing one. */
  get(reads: Reads, account: { id: string }, id: string): Promise<TransactionRecord> {
    return this.records.owned(reads, account.id, id, missing(`no transaction with id ${id} in this account`));
  }

  /** The account's transaction, locked for the caller's unit of work (a transition). */
  forUpdate(unit: Unit, accountId: string, id: string): Promise<TransactionRecord> {
    return this.records.ownedForUpdate(unit, accountId, id, missing(`no transaction with id ${id} in this account`));
  }

  /** The account's transaction, or undefined (a job whose transaction a reset wiped). */
  find(reads: Reads, accountId: string, id: string): Promise<TransactionRecord | undefined> {
    return reads.table(TRANSACTIONS).get(accountId, id);
  }

  /** A transaction by id alone, whatever its account: a payer page, which checks the link's token. */
  forPayer(id: string): Promise<TransactionRecord | undefined> {
    return this.records.table.getGlobal(id);
  }

  /** The most recent transaction with this externalId (the spec does not make them unique). */
  async getByExternalId(reads: Reads, account: { id: string }, externalId: string): Promise<TransactionRecord> {
    const ref = await reads.table(TRANSACTION_EXTERNAL_IDS).get(account.id, externalId);
    const record = ref && (await this.find(reads, account.id, ref.transactionId));
    if (!record) throw missing(`no transaction with externalId ${externalId} in this account`)();
    return record;
  }

  /**
   * The account's transactions, oldest first, in cursor pages. Status, currency and method go
   * through the table's filters (indexed on PostgreSQL); the created range and the externalId
   * prefix are checked on the way (`Records.pageMatching`).
   */
  async list(accountId: string, query: TransactionQuery): Promise<Page<TransactionRecord>> {
    const keep = {
      ...(query.status !== undefined && { status: query.status }),
      ...(query.currency !== undefined && { currency: query.currency }),
      ...(query.method !== undefined && { method: query.method }),
    };
    const from = instant('createdFrom', query.createdFrom);
    const to = instant('createdTo', query.createdTo);
    if (from !== undefined && to !== undefined && from >= to) {
      throw invalid(`createdFrom must be before createdTo (createdTo is exclusive): ${query.createdFrom} is not before ${query.createdTo}`);
    }
    const prefix = query.externalIdPrefix;
    if (from === undefined && to === undefined && prefix === undefined) return this.records.page(accountId, query, { keep });
    return this.records.pageMatching(accountId, query, keep, (record) => {
      const created = Date.parse(record.view.createdAt);
      if (from !== undefined && created < from) return false;
      if (to !== undefined && created >= to) return false;
      return prefix === undefined || (record.view.externalId ?? '').startsWith(prefix);
    });
  }

  async replace(unit: Unit, record: TransactionRecord): Promise<void> {
    await this.records.in(unit).put(record);
  }

  /** The record with its payer-page token, given one now (and stored) if it was stored before tokens existed. */
  async withPayerToken(unit: Unit, record: TransactionRecord): Promise<TransactionRecord & { payerToken: string }> {
    if (record.payerToken !== undefined) return { ...record, payerToken: record.payerToken };
    const current = await this.forUpdate(unit, record.accountId, record.id);
    if (current.payerToken !== undefined) return { ...current, payerToken: current.payerToken };
    const next = { ...current, payerToken: newPayerToken() };
    await this.records.in(unit).put(next);
    return next;
  }

  /** Wipes an account's transactions (control API reset). */
  async deleteAll(unit: Unit, accountId: string): Promise<number> {
    await unit.table(TRANSACTION_EXTERNAL_IDS).deleteAll(accountId);
    return this.records.in(unit).deleteAll(accountId);
  }

  /**
   * Retention: deletes up to `limit` of the account's settled transactions created before
   * `cutoff` (ISO, account clock). PENDING ones stay: they can still be paid or expire.
   */
  deleteOlderThan(unit: Unit, accountId: string, cutoff: string, limit: number): Promise<number> {
    const refs = unit.table(TRANSACTION_EXTERNAL_IDS);
    return this.records.deleteOlderThan(
      unit,
      accountId,
      cutoff,
      limit,
      (record) => record.view.createdAt,
      (record) => record.view.status !== 'PENDING',
      async (record) => {
        await this.records.in(unit).delete(accountId, record.id);
        const externalId = record.view.externalId;
        if (externalId !== null && (await refs.get(accountId, externalId))?.transactionId === record.id) await refs.delete(accountId, externalId);
      },
    );
  }

  private cardView(base: Record<string, unknown>, input: PurchaseRequest, card: CheckedCard, now: number): Transaction {
    const { outcome } = card;
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
}

/** A purchase's card as checked, its number without separators, and what that number does. */
type CheckedCard = NonNullable<PurchaseRequest['card']> & { outcome: CardOutcome };

function checkCard(input: PurchaseRequest, now: number): CheckedCard {
  if (!input.card) throw invalid('card is required for CREDIT_CARD');
  // Typed as printed on the card ("4111 1111 1111 1111"); the schema allowed single separators.
  const card = { ...input.card, number: input.card.number.replace(/[ -]/g, '') };
  if (!passesLuhn(card.number)) throw invalid('card.number is not a valid card number (Luhn check)');
  const today = new Date(now);
  const expired =
    card.expirationYear < today.getUTCFullYear() ||
    (card.expirationYear === today.getUTCFullYear() && card.expirationMonth < today.getUTCMonth() + 1);
  if (expired) throw invalid('card is expired: expirationMonth/expirationYear is in the past');
  return { ...card, outcome: cardOutcome(card.number) };
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
