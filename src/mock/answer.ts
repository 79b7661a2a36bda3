import type { Rng } from '../rails/random.js';
import type { OperationId, TransactionStatus, WithdrawalStatus } from '../spec/types.js';
import type { FeeTable } from '../transactions/fees.js';
import { refusalHint, TRANSITIONS, type FoundState, type TransitionName } from '../transactions/transitions.js';

/**
 * What mock mode needs to know of an operation beyond openapi.yaml, written beside its handler
 * (src/http/endpoint.ts, `mock`): the status and message of every answer come from openapi.yaml
 * (`x-message` on its error responses); what a control call leads to, and what the service
 * refuses whatever its state, the schemas cannot say.
 */
export interface MockAnswer {
  /** The transaction a control call leaves: its status and statusReason. */
  readonly transaction?: { readonly status: TransactionStatus; readonly reason: string | null };
  /** The withdrawal a control call leaves; `ends` names the unhappy end whose message it carries. */
  readonly withdrawal?: { readonly status: WithdrawalStatus; readonly ends?: 'reject' | 'fail' | 'return' };
  /**
   * The transition a transaction call makes: its 409 carries the x-sandbox-hint the state
   * machine words for it (src/transactions/transitions.ts), the transaction found in a state
   * the transition cannot leave.
   */
  readonly conflict?: TransitionName;
  /** What the service refuses whatever its state, refused by the mock too unless a status is asked for. */
  readonly refusal?: (request: MockRequest) => MockRefusal | undefined;
}

/** What of the request an answer must agree with. */
export interface MockRequest {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
}

/** An answer the mock refuses with: the exact message integrations match on, the explanation as the hint. */
export interface MockRefusal {
  status: 400;
  message: string;
  hint: string;
}

/** What the sandbox was started with that shows in its answers (--public-url or the port bound, --pix-expiry, --fees). */
export interface MockSettings {
  /** Base of every absolute URL an answer carries (payer pages, boleto links). */
  publicUrl: () => string;
  /** Lifetime of a plain Pix: its expiresAt after its createdAt. */
  pixExpiryMs: number;
  /** The fees a purchase's costFee and a cash-out's totalAmount carry. */
  fees: FeeTable;
}

/** What a generated body is made coherent with: the operation, a seeded source of values, the sandbox's settings, the request when there is one, and the endpoint's mock answer. */
export interface MockContext {
  operationId: string;
  rng: Rng;
  settings: MockSettings;
  request?: MockRequest;
  answer?: MockAnswer;
}

/** Whether the body answers this operation: the name checked against openapi.yaml's operations when compiled. */
export const answers = (ctx: Pick<MockContext, 'operationId'>, operationId: OperationId): boolean => ctx.operationId === operationId;

/** The transaction a mock 409 says it found: paid, for a transition from PENDING; still pending, for one from APPROVED. */
const FOUND: Readonly<Record<'PENDING' | 'APPROVED', Omit<FoundState, 'id'>>> = {
  PENDING: { status: 'APPROVED', statusReason: null, paidRail: 'PIX' },
  APPROVED: { status: 'PENDING', statusReason: null },
};

/** The x-sandbox-hint of a mock 409 of a transaction call, where the stateful sandbox sends one beside the short message. */
export function conflictHint(answer: MockAnswer | undefined, params: Record<string, string>): string | undefined {
  const transition = answer?.conflict;
  if (transition === undefined) return undefined;
  return refusalHint({ id: params.id || '100000000', ...FOUND[TRANSITIONS[transition].needs] }, transition);
}
