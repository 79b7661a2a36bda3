import type { Rng } from '../rails/random.js';
import type { OperationId, TransactionStatus, WithdrawalStatus } from '../spec/types.js';

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
   * The explanation a 409 of a transaction call carries in x-sandbox-hint, as the state machine
   * words it (src/transactions/transitions.ts): the state the mock says it found, the one the
   * call needs, and the verb.
   */
  readonly conflict?: { readonly is: string; readonly only: string; readonly verb: string };
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

/** What a generated body is made coherent with: the operation, a seeded source of values, the request when there is one, and the endpoint's mock answer. */
export interface MockContext {
  operationId: string;
  rng: Rng;
  request?: MockRequest;
  answer?: MockAnswer;
}

/** Whether the body answers this operation: the name checked against openapi.yaml's operations when compiled. */
export const answers = (ctx: Pick<MockContext, 'operationId'>, operationId: OperationId): boolean => ctx.operationId === operationId;
