import { systemClock } from '../clock.js';
import { defaultPurchaseBody, DEFAULT_METHOD, type Currency } from '../scenarios/defaults.js';
import { signBody } from '../webhooks/signature.js';
import { basicAuthorization } from '../basic-auth.js';
import { StateSetupError, type TargetApi } from './target.js';

/**
 * Provider states: what must exist before an interaction is replayed. A pact names them
 * (`given(...)`); the verifier sets them up, injects the ids they created into the request
 * (`fromProviderState('/v2/products/${productId}', …)`) and tears them down afterwards.
 *
 * The names below are the vocabulary payments-sandbox understands, in the shipped pacts and
 * in a merchant's own (documented in docs/pact.md). Against a payments-sandbox they are set up through its API and control
 * API; against any other implementation the two key states are handled by the verifier and
 * the others go to `--state-setup-url` (or are assumed to exist).
 */
export const STATES = {
  invalidKey: 'an invalid API key',
  restrictedKey: 'an API key without permissions',
  product: 'a product exists',
  archivedProduct: 'an archived product exists',
  productWithExternalId: 'a product with the externalId exists',
  noProductWithExternalId: 'no product has the externalId',
  filledTransaction: 'a transaction with a filled instruction',
  paidTransaction: 'a paid transaction',
  expiredTransaction: 'an expired transaction',
  declinedTransaction: 'a declined transaction',
  refundedTransaction: 'a refunded transaction',
  chargedBackTransaction: 'a charged-back transaction',
  fundedBalance: 'a funded balance',
  withdrawal: 'a withdrawal exists',
} as const;

const KNOWN = new Set<string>(Object.values(STATES));

export type StateParams = Record<string, unknown>;
/** Values injected into the request through `fromProviderState` expressions. */
export type Injected = Record<string, string>;

/** A message interaction's content and metadata, produced by the provider. */
export interface ProducedMessage {
  body: Record<string, unknown>;
  metadata: Record<string, string>;
}

/** How provider states are set up, and which key each request carries. */
export interface StateBackend {
  readonly description: string;
  setup(state: string, params: StateParams): Promise<Injected>;
  teardown(state: string, params: StateParams): Promise<void>;
  /**
   * The Authorization header of the request being replayed: a value to send, `null` to send
   * none, `undefined` to leave the pact's own header.
   */
  authorization(hasHeader: boolean): string | null | undefined;
  /** The message of a message interaction; undefined when this backend cannot produce one. */
  message?(): Promise<ProducedMessage>;
  /** Things the report should mention (unknown states, states assumed to exist). */
  readonly notes: Set<string>;
}

/** A key no implementation knows: the 401 interactions send it. */
const INVALID_KEY = 'sk_test_invalid_key_for_contract_verification';

type AuthMode = 'run' | 'invalid' | 'restricted';

const str = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

function currencyOf(params: StateParams): Currency {
  const currency = params.currency ?? 'BRL';
  if (currency === 'COP' || currency === 'ARS' || currency === 'BRL' || currency === 'MXN') return currency;
  throw new StateSetupError(`param currency must be COP, ARS, BRL or MXN, not ${JSON.stringify(currency)}`);
}

export interface RunAccount {
  id: string;
  secretKey: string;
  webhookSecret: string;
}

interface Product {
  id: string;
}
interface Tx {
  id: string;
  status: string;
}
interface Delivery {
  id: string;
  event: string;
  payload: Record<string, unknown>;
}
interface Withdrawal {
  id: string;
}

/** How a withdrawal state ends it, through the control API, and the webhook that end sends. */
const WITHDRAWAL_ENDS: Record<string, { actions: string[]; event?: string }> = {
  WITHDRAW_REQUEST: { actions: [] },
  WITHDRAW_APPROVED: { actions: ['approve'], event: 'cashout.success' },
  WITHDRAW_REJECTED: { actions: ['reject'], event: 'cashout.failed' },
  WITHDRAW_ERROR: { actions: ['fail'], event: 'cashout.failed' },
  WITHDRAW_RETURNED: { actions: ['approve', 'return'], event: 'cashout.returned' },
};

/**
 * States on a payments-sandbox: one fresh account per verification run (POST
 * /_sandbox/accounts), records made through the API and the control API, and the account
 * reset after every interaction so that each one starts from an empty account.
 */
export class SandboxStates implements StateBackend {
  readonly notes = new Set<string>();
  private auth: AuthMode = 'run';
  private restricted: Promise<string> | undefined;
  private restrictedKey: string | undefined;
  private needsReset = false;
  /** The transaction or withdrawal the interaction's state brought to an end, and the webhook that end emits. */
  private ended: { id: string; event: string; of: 'transaction' | 'withdrawal' } | undefined;

  private constructor(
    private readonly api: TargetApi,
    readonly account: RunAccount,
    private readonly adminToken: string | undefined,
    readonly version: string,
  ) {}

  get description(): string {
    return `payments-sandbox ${this.version}: provider states set up through its control API, in a fresh account (${this.account.id}) reset after every interaction`;
  }

  static async create(api: TargetApi, version: string, adminToken: string | undefined): Promise<SandboxStates> {
    const account = await createAccount(api, adminToken, ['isInvoiceAvailable', 'createTransaction']);
    return new SandboxStates(api, account, adminToken, version);
  }

  private get key(): string {
    return this.account.secretKey;
  }

  authorization(hasHeader: boolean): string | null {
    if (this.auth === 'invalid') return hasHeader ? basicAuthorization(INVALID_KEY) : null;
    return this.auth === 'restricted' && this.restrictedKey !== undefined ? basicAuthorization(this.restrictedKey) : basicAuthorization(this.key);
  }

  async setup(state: string, params: StateParams): Promise<Injected> {
    this.needsReset = true;
    switch (state) {
      case '':
        return {};
      case STATES.invalidKey:
        this.auth = 'invalid';
        return {};
      case STATES.restrictedKey:
        this.restricted ??= createAccount(this.api, this.adminToken, []).then((a) => a.secretKey);
        this.restrictedKey = await this.restricted;
        this.auth = 'restricted';
        return {};
      case STATES.product: {
        const body = { name: str(params.name) ?? 'Contract product', ...(str(params.externalId) && { externalId: params.externalId }), ...(params.metadata !== undefined && { metadata: params.metadata }) };
        return { productId: (await this.createProduct(body)).id };
      }
      case STATES.archivedProduct: {
        const product = await this.createProduct({ name: 'Archived contract product' });
        await this.api.expect('DELETE', `/v2/products/${product.id}`, 200, { key: this.key });
        return { productId: product.id };
      }
      case STATES.productWithExternalId: {
        const externalId = requireParam(params, 'externalId');
        const live = await this.liveWithExternalId(externalId);
        const product = live[0] ?? (await this.createProduct({ name: 'Contract product with an externalId', externalId }));
        return { externalIdProductId: product.id };
      }
      case STATES.noProductWithExternalId: {
        const externalId = requireParam(params, 'externalId');
        for (const product of await this.liveWithExternalId(externalId)) {
          await this.api.expect('DELETE', `/v2/products/${product.id}`, 200, { key: this.key });
        }
        return {};
      }
      case STATES.filledTransaction: {
        const tx = await this.purchase(params);
        if (tx.status === 'PENDING') await this.api.expect('POST', `/_sandbox/transactions/${tx.id}/fill`, 200, { key: this.key });
        const externalId = str(params.externalId);
        return { transactionId: tx.id, ...(externalId && { externalId }) };
      }
      case STATES.paidTransaction: {
        const id = await this.paid(params);
        this.ended = { id, event: 'cashin.paid', of: 'transaction' };
        return { transactionId: id };
      }
      case STATES.expiredTransaction: {
        const tx = await this.purchase(params);
        await this.api.expect('POST', `/_sandbox/transactions/${tx.id}/expire`, 200, { key: this.key });
        this.ended = { id: tx.id, event: 'cashin.expired', of: 'transaction' };
        return { transactionId: tx.id };
      }
      case STATES.declinedTransaction: {
        const tx = await this.purchase(params);
        // A test card declined at purchase is already BLOCKED (DECLINED) and has sent its cashin.failed.
        if (tx.status === 'PENDING') {
          const message = str(params.message);
          await this.api.expect('POST', `/_sandbox/transactions/${tx.id}/decline`, 200, { key: this.key, body: message ? { message } : {} });
        }
        this.ended = { id: tx.id, event: 'cashin.failed', of: 'transaction' };
        return { transactionId: tx.id };
      }
      case STATES.refundedTransaction: {
        const id = await this.paid(params);
        await this.api.expect('POST', `/_sandbox/transactions/${id}/refund`, 200, { key: this.key });
        this.ended = { id, event: 'cashin.refunded', of: 'transaction' };
        return { transactionId: id };
      }
      case STATES.chargedBackTransaction: {
        const id = await this.paid(params);
        const reason = str(params.reason);
        await this.api.expect('POST', `/_sandbox/transactions/${id}/chargeback`, 200, { key: this.key, body: reason ? { reason } : {} });
        this.ended = { id, event: 'infraction.updated', of: 'transaction' };
        return { transactionId: id };
      }
      case STATES.fundedBalance: {
        const amount = Number(params.amount ?? 100_000);
        if (!Number.isSafeInteger(amount) || amount <= 0) throw new StateSetupError(`param amount must be a positive integer number of centavos, not ${JSON.stringify(params.amount)}`);
        await this.api.expect('POST', '/_sandbox/balance/credit', 200, { key: this.key, body: { amount } });
        return {};
      }
      case STATES.withdrawal: {
        const status = str(params.status) ?? 'WITHDRAW_REQUEST';
        const end = WITHDRAWAL_ENDS[status];
        if (!end) throw new StateSetupError(`param status must be one of ${Object.keys(WITHDRAWAL_ENDS).join(', ')}, not ${JSON.stringify(params.status)}`);
        const amount = Number(params.amount ?? 10_000);
        // Funded for this withdrawal alone, generously: whatever the fee table says.
        await this.api.expect('POST', '/_sandbox/balance/credit', 200, { key: this.key, body: { amount: amount * 2 + 100_000 } });
        const externalId = str(params.externalId);
        const body = {
          amount,
          pixType: str(params.pixType) ?? 'EVP',
          pixKey: str(params.pixKey) ?? '3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70',
          ...(externalId && { externalId }),
        };
        const withdrawal = await this.api.expect<Withdrawal>('POST', '/withdraws/cash-out', 201, { key: this.key, body });
        for (const action of end.actions) {
          const message = action !== 'approve' ? str(params.message) : undefined;
          await this.api.expect('POST', `/_sandbox/withdrawals/${withdrawal.id}/${action}`, 200, { key: this.key, body: message ? { message } : {} });
        }
        if (end.event) this.ended = { id: withdrawal.id, event: end.event, of: 'withdrawal' };
        return { withdrawalId: withdrawal.id, ...(externalId && { externalId }) };
      }
      default:
        this.notes.add(`state "${state}" is not one payments-sandbox knows: nothing was set up for it (see docs/pact.md for the vocabulary)`);
        return {};
    }
  }

  async teardown(): Promise<void> {
    this.auth = 'run';
    this.ended = undefined;
    if (!this.needsReset) return;
    this.needsReset = false;
    // An account resets itself with its own key, unless the sandbox has an admin token (then 403: reset as admin).
    if (!this.resetAsAdmin) {
      const res = await this.api.call('POST', '/_sandbox/reset', { key: this.key });
      if (res.status === 200) return;
      if (res.status !== 403 || this.adminToken === undefined) throw new StateSetupError(`POST /_sandbox/reset answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
      this.resetAsAdmin = true;
    }
    await this.api.expect('POST', '/_sandbox/reset', 200, { bearer: this.adminToken, body: { accountId: this.account.id } });
  }

  private resetAsAdmin = false;

  /**
   * The webhook of the transaction the state brought to an end (`cashin.paid` of a paid BRL
   * Pix one when the interaction named no state), as the sandbox built it: the body of that
   * event's entry in its delivery log, signed with the account's webhook secret the way the
   * sandbox signs it.
   */
  async message(): Promise<ProducedMessage> {
    this.needsReset = true;
    if (this.ended === undefined) await this.setup(STATES.paidTransaction, {});
    const ended = this.ended;
    if (ended === undefined) throw new StateSetupError('no transaction or withdrawal to take the webhook of');
    const deadline = systemClock.nowMs() + 5000;
    for (;;) {
      const filter = ended.of === 'withdrawal' ? 'withdrawalId' : 'transactionId';
      const list = await this.api.expect<{ data: Delivery[] }>('GET', `/_sandbox/webhooks?${filter}=${encodeURIComponent(ended.id)}`, 200, { key: this.key });
      // Newest last: a refund's or chargeback's log also holds the earlier cashin.paid.
      const delivery = list.data.findLast((d) => d.event === ended.event);
      if (delivery) {
        return {
          body: delivery.payload,
          metadata: {
            contentType: 'application/json',
            'x-signature': signBody(delivery.payload, this.account.webhookSecret),
            'x-sandbox-event': delivery.event,
            'x-sandbox-delivery': delivery.id,
          },
        };
      }
      if (systemClock.nowMs() > deadline) throw new StateSetupError(`${ended.of} ${ended.id} has no ${ended.event} webhook delivery recorded`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** A purchase paid through the control API (`rail` says which rail pays a BRL one). */
  private async paid(params: StateParams): Promise<string> {
    const tx = await this.purchase(params);
    if (tx.status === 'PENDING') {
      const rail = str(params.rail);
      await this.api.expect('POST', `/_sandbox/transactions/${tx.id}/pay`, 200, { key: this.key, body: rail ? { rail } : {} });
    }
    return tx.id;
  }

  private createProduct(body: Record<string, unknown>): Promise<Product> {
    return this.api.expect<Product>('POST', '/v2/products', 201, { key: this.key, body });
  }

  private async liveWithExternalId(externalId: string): Promise<Product[]> {
    const list = await this.api.expect<{ data: Product[] }>('GET', `/v2/products?externalId=${encodeURIComponent(externalId)}`, 200, { key: this.key });
    return list.data;
  }

  private purchase(params: StateParams): Promise<Tx> {
    const currency = currencyOf(params);
    const method = str(params.paymentMethod) ?? DEFAULT_METHOD[currency];
    const body = defaultPurchaseBody(currency, method);
    body.description = 'Contract verification';
    const externalId = str(params.externalId);
    if (externalId) body.externalId = externalId;
    return this.api.expect<Tx>('POST', '/transactions/v2/purchase', 201, { key: this.key, body });
  }
}

function requireParam(params: StateParams, name: string): string {
  const value = str(params[name]);
  if (value === undefined) throw new StateSetupError(`param ${name} is required`);
  return value;
}

async function createAccount(api: TargetApi, adminToken: string | undefined, permissions: string[]): Promise<RunAccount> {
  const res = await api.call('POST', '/_sandbox/accounts', {
    ...(adminToken !== undefined && { bearer: adminToken }),
    body: { name: `pact-verification-${new Date().toISOString()}`, permissions },
  });
  if (res.status === 401) throw new StateSetupError('POST /_sandbox/accounts answered 401: the sandbox has an admin token, pass it with --admin-token (or SANDBOX_ADMIN_TOKEN)');
  if (res.status !== 201) throw new StateSetupError(`POST /_sandbox/accounts answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
  return res.body as RunAccount;
}

export interface ForeignOptions {
  secretKey: string;
  restrictedKey: string | undefined;
  stateSetupUrl: string | undefined;
}

/**
 * States on any other implementation: the key states are the verifier's own (which key it
 * sends); the others are POSTed to `--state-setup-url` as `{state, params, action}` (Pact's
 * provider-states setup URL, whose JSON answer is injected into the request), or, without
 * one, assumed to exist.
 */
export class ForeignStates implements StateBackend {
  readonly notes = new Set<string>();
  private auth: AuthMode = 'run';

  constructor(private readonly options: ForeignOptions) {}

  get description(): string {
    return this.options.stateSetupUrl
      ? `not a payments-sandbox: provider states POSTed to ${this.options.stateSetupUrl}`
      : 'not a payments-sandbox: provider states are assumed to exist (no --state-setup-url)';
  }

  authorization(hasHeader: boolean): string | null | undefined {
    if (this.auth === 'invalid') return hasHeader ? basicAuthorization(INVALID_KEY) : null;
    if (this.auth === 'restricted') return this.options.restrictedKey !== undefined ? basicAuthorization(this.options.restrictedKey) : undefined;
    return basicAuthorization(this.options.secretKey);
  }

  async setup(state: string, params: StateParams): Promise<Injected> {
    if (state === STATES.invalidKey) this.auth = 'invalid';
    if (state === STATES.restrictedKey) {
      this.auth = 'restricted';
      if (this.options.restrictedKey === undefined) this.notes.add(`state "${state}": no --restricted-key given, the request went with the pact's own Authorization`);
    }
    if (state === '' || state === STATES.invalidKey || state === STATES.restrictedKey) return {};
    const url = this.options.stateSetupUrl;
    if (url === undefined) {
      this.notes.add(`state "${state}" was assumed to exist${KNOWN.has(state) ? '' : ' (not in the payments-sandbox vocabulary)'}: pass --state-setup-url to set it up`);
      return {};
    }
    const injected = await postState(url, state, params, 'setup');
    const values: Injected = {};
    if (injected !== null && typeof injected === 'object') {
      for (const [k, v] of Object.entries(injected)) if (['string', 'number', 'boolean'].includes(typeof v)) values[k] = String(v);
    }
    return values;
  }

  async teardown(state: string, params: StateParams): Promise<void> {
    this.auth = 'run';
    if (state === '' || state === STATES.invalidKey || state === STATES.restrictedKey || this.options.stateSetupUrl === undefined) return;
    await postState(this.options.stateSetupUrl, state, params, 'teardown');
  }
}

async function postState(url: string, state: string, params: StateParams, action: 'setup' | 'teardown'): Promise<unknown> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ state, params, action }),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  if (!res.ok) throw new StateSetupError(`${action} of "${state}": POST ${url} answered ${res.status}: ${text.slice(0, 300)}`);
  try {
    return text === '' ? null : JSON.parse(text);
  } catch {
    return null;
  }
}
