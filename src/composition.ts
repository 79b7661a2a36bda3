import type { AccountRecord } from './accounts/accounts.js';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { AnyReply } from './http/call.js';
import type { PipelineOptions } from './http/pipeline.js';
import type { TransactionPresenter } from './http/present-transaction.js';
import type { HttpApp } from './http/transport.js';
import type { RequestLog } from './http/request-log.js';
import type { Logger } from './log.js';
import type { Retention } from './sandbox/retention.js';
import type { OperationId, Transaction } from './spec/types.js';
import type { OpenedStore } from './store/ports.js';

/**
 * What both compositions build (src/app.ts the stateful sandbox, src/mock-app.ts the stateless
 * stub), so that the server, the test kit and the CLI start either the same way: an app that
 * knows no server (`handle`, `upgrade`: src/http/transport.ts `serveHttp` puts one around it),
 * and `close`.
 */
export interface Sandbox extends HttpApp {
  /** The public URL when it was not configured (the port a server bound): read at each use, so set whenever it is known. */
  setPublicUrl(url: string): void;
  defaultAccount: AccountRecord;
  /** Background deletion of old records (SANDBOX_RETENTION_DAYS); undefined when off. Other record kinds join with `add`. */
  retention: Retention | undefined;
  /**
   * Closes the WebSocket streams (1001) at once, and hung fault answers: upgraded sockets
   * would otherwise hold a server's close open. Then, once `drained` resolves (the servers
   * closed: the requests in flight answered), stops the background work and closes the store.
   * Idempotent.
   */
  close(drained?: Promise<void>): Promise<void>;
  /**
   * The in-memory request log's share of the process's memory: its budget and what it keeps now
   * (bytes, by the entries' estimate). Undefined on the shared store, whose log is in PostgreSQL.
   */
  requestLogMemory: { budgetBytes: number; usedBytes(): number } | undefined;
}

/** Opens the store a configuration chooses (src/store/open.ts). */
export type StoreOpener = (config: Config, clock: Clock, logger: Logger) => Promise<OpenedStore>;

export interface SandboxOptions {
  /** Real time; tests pass a FakeClock. */
  clock?: Clock;
  /**
   * Opens the store; the sandbox closes it when it closes, and lets it go when its start fails.
   * Default: the one the configuration chooses, a data file of an earlier version upgraded.
   * Mock mode opens none.
   */
  openStore?: StoreOpener;
  /**
   * A full garbage collection, for the memory budget to ask for once a load has let go
   * (src/collect-garbage.ts). The `start` command's process passes one; the test kit does not:
   * it runs in the user's test process, whose V8 flags are not the sandbox's to set.
   */
  collectGarbage?: () => void;
  /**
   * Operations whose request validators load with the sandbox instead of at their first request
   * (a few tenths of a millisecond each, src/http/prebuilt-validators.ts): the test kit's
   * `account()` names its createAccount, whose first call should cost what the later ones do.
   */
  warmOperations?: readonly OperationId[];
}

/** The pipeline's options that come from the configuration alone: the same in both compositions. */
export const configuredPipeline = (config: Config, clock: Clock) =>
  ({
    adminToken: config.adminToken,
    requestLogLevel: config.requestLogLevel,
    nowMs: () => clock.nowMs(),
    validateResponses: config.validateResponses,
    jsonLimitBytes: config.jsonLimitBytes,
  }) satisfies Partial<PipelineOptions>;

/** A reply whose body is a transaction with a Pix code, with that code's QR image (`qrCode`) added. */
export async function withQrCode(presenter: TransactionPresenter, reply: AnyReply): Promise<AnyReply> {
  if (!('json' in reply) || !isPixTransaction(reply.json)) return reply;
  return { ...reply, json: await presenter.present(reply.json) };
}

const isPixTransaction = (value: unknown): value is Transaction =>
  value !== null && typeof value === 'object' && 'transactionId' in value && 'pixCode' in value && typeof value.pixCode === 'string' && value.pixCode !== '';

/** What the in-memory request log holds of the process's memory (Sandbox.requestLogMemory). */
export const memoryOf = (log: RequestLog): { budgetBytes: number; usedBytes(): number } => ({ budgetBytes: log.budgetBytes, usedBytes: () => log.totalBytes });
