import type { ApiRequest } from './request.js';
import type { Unit, UnitOfWork } from '../store/ports.js';
import type { OperationId } from '../spec/types.js';
import type { AnyCall, AnyReply, Handlers } from './call.js';
import type { Caller } from './authenticate.js';
import { HttpError } from './errors.js';
import type { SandboxOperation } from './match.js';
import type { Validated } from './validate.js';

/** Answers operations without a handler (the schema-generated mock) instead of a 501. */
export type Fallback = (operation: SandboxOperation, req: ApiRequest) => AnyReply | Promise<AnyReply>;

type ErasedHandler = (call: AnyCall) => AnyReply | Promise<AnyReply>;

const ownUnits = (): never => {
  throw new Error('this operation commits in steps: its services run units of their own (SELF_COMMITTING)');
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

/**
 * Stage 9, handle: runs the operation's handler as one unit of work (src/store/ports.ts):
 * what it changes is committed, durable, when `units.run` resolves, and only then may the
 * answer leave ("durable before the 2xx"). The handler gets the unit in its call; a handler
 * that throws leaves nothing of its unit behind.
 */
export class HandleStage {
  private readonly handlers: Map<string, ErasedHandler>;

  constructor(
    handlers: Handlers,
    private readonly units: Pick<UnitOfWork, 'run'>,
    private readonly fallback: Fallback | undefined,
    /** Operations whose handlers run their own units of work (they commit in steps). */
    private readonly selfCommitting: ReadonlySet<OperationId> = new Set(),
  ) {
    // The one place types are erased: validation against openapi.yaml is what makes the
    // pipeline's call the operation's Call<K> (src/http/call.ts).
    this.handlers = new Map(Object.entries(handlers) as [OperationId, ErasedHandler][]);
  }

  async handle(operation: SandboxOperation, caller: Caller, validated: Validated, req: ApiRequest): Promise<AnyReply> {
    const handler = operation.operationId === undefined ? undefined : this.handlers.get(operation.operationId);
    if (!handler) {
      // The mock changes nothing: no unit of work.
      if (this.fallback) return this.fallback(operation, req);
      throw new HttpError(501, `${operation.method.toUpperCase()} ${operation.path} is not emulated by this version of the sandbox yet`);
    }
    const base = { req, account: caller.account, admin: caller.admin, params: validated.params, query: validated.query, body: validated.body };
    if (operation.operationId !== undefined && this.selfCommitting.has(operation.operationId as OperationId)) return handler({ ...base, unit: OWN_UNITS });
    return this.units.run(async (unit) => handler({ ...base, unit }));
  }
}
