import type { Balance, CashOutRequest, Offer, OfferCreate, Product, ProductCreate, ProductPatch, PurchaseRequest, Transaction, Withdrawal, WithdrawalLookup } from '../../src/spec/types.js';

/**
 * A small merchant integration of the payments API, the way a merchant's backend would write
 * it: typed calls over fetch, Basic auth with the account's secret key, errors thrown with the
 * service's message. The consumer pacts describe what this client sends and relies on.
 */

/** `{status, error}` (product endpoints) or `{statusCode, message, error?}` (transactions). */
export type ApiErrorBody = { status: number; error: string } | { statusCode: number; message: string; error?: string };

export class PaymentsApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ApiErrorBody,
  ) {
    super('message' in body ? body.message : body.error);
    this.name = 'PaymentsApiError';
  }
}

export const authorization = (secretKey: string): string => `Basic ${Buffer.from(`secret:${secretKey}`).toString('base64')}`;

export class PaymentsClient {
  constructor(
    private readonly baseUrl: string,
    /** Undefined sends no Authorization header at all. */
    private readonly secretKey: string | undefined,
    /** Awaited after each answer is read (the consumer tests wait there for Pact's mock server). */
    private readonly afterAnswer: () => Promise<void> = () => Promise.resolve(),
  ) {}

  createProduct(body: ProductCreate): Promise<Product> {
    return this.request<Product>('POST', '/v2/products', body);
  }

  updateProduct(id: string, patch: ProductPatch): Promise<Product> {
    return this.request<Product>('PATCH', `/v2/products/${encodeURIComponent(id)}`, patch);
  }

  createOffer(body: OfferCreate): Promise<Offer> {
    return this.request<Offer>('POST', '/v2/offers', body);
  }

  purchase(body: PurchaseRequest): Promise<Transaction> {
    return this.request<Transaction>('POST', '/transactions/v2/purchase', body);
  }

  getTransaction(id: string): Promise<Transaction> {
    return this.request<Transaction>('GET', `/transactions/${encodeURIComponent(id)}`);
  }

  /** `searchBy=id`, what typed clients of this API family send by default. */
  getTransactionById(id: string): Promise<Transaction> {
    return this.request<Transaction>('GET', `/transactions/${encodeURIComponent(id)}?searchBy=id`);
  }

  findTransactionByExternalId(externalId: string): Promise<Transaction> {
    return this.request<Transaction>('GET', `/transactions/${encodeURIComponent(externalId)}?searchBy=externalId`);
  }

  /** Full refunds only: `amount`, when sent, is the transaction's. */
  refund(id: string, amount?: number): Promise<Transaction> {
    return this.request<Transaction>('POST', `/transactions/refund/${encodeURIComponent(id)}`, amount === undefined ? {} : { amount });
  }

  /** A Pix payout; CPF, CNPJ and PHONE keys go without punctuation, as integrators strip it. */
  cashOut(body: CashOutRequest): Promise<Withdrawal> {
    const pixKey = ['CPF', 'CNPJ', 'PHONE'].includes(body.pixType) ? body.pixKey.replace(/[^\dA-Z]/g, '') : body.pixKey;
    return this.request<Withdrawal>('POST', '/withdraws/cash-out', { ...body, pixKey });
  }

  getWithdrawal(id: string, searchBy: 'id' | 'externalId' = 'id'): Promise<WithdrawalLookup> {
    return this.request<WithdrawalLookup>('GET', `/withdraws/collect/${encodeURIComponent(id)}?searchBy=${searchBy}`);
  }

  getBalance(): Promise<Balance> {
    return this.request<Balance>('GET', '/users/balance');
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = {};
    if (this.secretKey !== undefined) headers.Authorization = authorization(this.secretKey);
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(`${this.baseUrl}${path}`, { method, headers, ...(body !== undefined && { body: JSON.stringify(body) }) });
    const parsed: unknown = await res.json();
    await this.afterAnswer();
    if (!res.ok) throw new PaymentsApiError(res.status, parsed as ApiErrorBody);
    return parsed as T;
  }
}

/** The payment instruction is filled later: true once the variant's instruction is there. */
export function instructionReady(tx: Transaction): boolean {
  if ('clabe' in tx) return typeof tx.clabe === 'string';
  if ('redirectUrl' in tx) return typeof tx.redirectUrl === 'string';
  if ('cvu' in tx) return typeof tx.cvu === 'string';
  if (tx.method === 'CREDIT_CARD') return true;
  const pixReady = !('pixCode' in tx) || (typeof tx.pixCode === 'string' && tx.pixCode !== '');
  const boletoReady = !('paymentInstruction' in tx) || (typeof tx.paymentInstruction === 'object' && 'boletoDigitableLine' in tx.paymentInstruction);
  return pixReady && boletoReady;
}
