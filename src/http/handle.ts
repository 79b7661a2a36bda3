import type { ApiRequest } from './request.js';
import type { Reads, Unit, UnitOfWork } from '../store/ports.js';
import type { OperationId } from '../spec/types.js';
import type { MockAnswer } from '../mock/answer.js';
import type { AnyCall, AnyReply } from './call.js';
import type { EndpointOptions, Endpoints } from './endpoint.js';
import type { Caller } from './authenticate.js';
import { HttpError } from './errors.js';
import type { SandboxOperation } from './match.js';
import type { Validated } from './validate.js';

/** Answers an operation from openapi.yaml instead of a handler (the schema-generated mock), with what its endpoint says of mock mode. */
export type Fallback = (operation: SandboxOperation, req: ApiRequest, answer: MockAnswer | undefined) => AnyReply | Promise<AnyReply>;

type ErasedEndpoint = EndpointOptions & { handle: (call: AnyCall) => AnyReply | Promise<AnyReply> };

const ownUnits = (): never => {
  throw new Error('this operation commits in steps: its services run units of their own (its endpoint\'s ownUnits)');
};

/** The unit a self-committing operation's call carries: any use of it is a mistake of the handler's. */
const OWN_UNITS: Unit = {
  table: ownUnits,
  get jobs() {
    return ownUnits();
  },
  get clocks() {
    return ownUnits();
  },
  get sequences() {
    return ownUnits();
  },
  afterCommit: ownUnits,
  publish: ownUnits,
};

export interface HandleOptions {
  endpoints: Endpoints;
  units: Pick<UnitOfWork, 'run'>;
  /** What the handlers of operations that commit in steps read: the committed state. */
  committed: Reads;
  /** Answers operations without an endpoint, and every operation in mock mode; without it they are 501. */
  fallback?: Fallback;
  /** Mock mode: every operation is answered by the fallback, none by its handler. */
  mock?: boolean;
  /** Refuses an admin act (an endpoint's `admin`) where it is closed: on a sandbox bound beyond loopback without an admin token. */
  admin?: (what: string) => void;
}

/**
 * The handle stage: runs the operation's handler as one unit of work (src/store/ports.ts):
 * what it changes is committed, durable, when `units.run` resolves, and only then may the
 * answer leave ("durable before the 2xx"). The handler gets the unit in its call; a handler
 * that throws leaves nothing of its unit behind. What the handler runs under (its own units,
 * an admin act, its mock answer) is read from its endpoint (src/http/endpoint.ts).
 */
export class HandleStage {
  private readonly endpoints: Map<string, ErasedEndpoint>;

  constructor(private readonly options: HandleOptions) {
    // The one place types are erased: validation against openapi.yaml is what makes the
    // pipeline's call the operation's Call<K> (src/http/call.ts).
    this.endpoints = new Map(Object.entries(options.endpoints) as [OperationId, ErasedEndpoint][]);
  }

  async handle(operation: SandboxOperation, caller: Caller, validated: Validated, req: ApiRequest): Promise<AnyReply> {
    const endpoint = operation.operationId === undefined ? undefined : this.endpoints.get(operation.operationId);
    const { fallback } = this.options;
    // The mock changes nothing: no unit of work.
    if (fallback && (this.options.mock || !endpoint)) return fallback(operation, req, endpoint?.mock);
    if (!endpoint) throw new HttpError(501, `${operation.method.toUpperCase()} ${operation.path} is not emulated by this version of the sandbox yet`);
    if (endpoint.admin !== undefined) this.options.admin?.(endpoint.admin);
    const base = { req, account: caller.account, admin: caller.admin, params: validated.params, query: validated.query, body: validated.body };
    if (endpoint.ownUnits !== undefined) return endpoint.handle({ ...base, unit: OWN_UNITS, reads: this.options.committed });
    return this.options.units.run(async (unit) => endpoint.handle({ ...base, unit, reads: unit }));
  }
}
