import { pino } from 'pino';
import { composeDomain, type Domain, type DomainOptions } from '../../src/app.js';
import type { AccountRecord } from '../../src/accounts/accounts.js';
import type { Quotas } from '../../src/accounts/usage.js';
import { FakeClock } from '../../src/clock.js';
import { MemoryObjectStore } from '../../src/store/embedded/objects.js';
import type { OpenApiDocument } from '../../src/spec/openapi.js';
import type { PurchaseRequest } from '../../src/spec/types.js';
import { loadOpenApi } from '../../src/spec/openapi.js';
import type { ClockReader, Reads, Repository, Unit } from '../../src/store/ports.js';
import { openTestRepository } from './test-store.js';
import { DEFAULT_FEES } from '../../src/transactions/fees.js';
import { operationIdsOf } from '../../src/faults/faults.js';
import type { AttemptOutcome, WebhookSender } from '../../src/webhooks/dispatcher.js';

/** A BRL Pix purchase as the domain takes it (validated by openapi.yaml before it gets there), `overrides` over it. */
export const pixPurchase = (overrides: Partial<PurchaseRequest> = {}): PurchaseRequest =>
  ({
    name: 'Maria Silva',
    email: 'maria@example.com',
    description: 'Pedido 1',
    responsibleExternalId: 'cli-1',
    responsibleDocument: '11222333000181',
    cpf: '52998224725',
    phone: '11987654321',
    amount: 15_000,
    paymentMethod: 'PIX',
    ...overrides,
  }) as PurchaseRequest;

/** A webhook request as the fake sender got it. */
export interface Sent {
  url: string;
  body: string;
  headers: Record<string, string>;
}

/** Sends nothing anywhere: records each request and answers what the test says (200 by default). */
export class FakeSender implements WebhookSender {
  readonly timeoutMs = 5_000;
  readonly sent: Sent[] = [];
  answer: (request: Sent) => AttemptOutcome = () => ({ httpStatus: 200, error: null, durationMs: 1, responseBody: 'ok', ok: true });

  async post(url: string, body: string, headers: Record<string, string>): Promise<AttemptOutcome> {
    const request = { url, body, headers };
    this.sent.push(request);
    return this.answer(request);
  }
}

export interface DomainKit extends Domain {
  repository: Repository;
  /** What a test reads outside any unit: the committed state, as the domain's services see it. */
  committed: Reads;
  clock: FakeClock;
  sender: FakeSender;
  /** Runs `work` as the router runs a handler: in one unit of work, handed to it, committed when it resolves. */
  inUnit<T>(work: (unit: Unit) => Promise<T>): Promise<T>;
  /** An account of its own, with the given webhook URL (none by default). */
  account(webhookUrl?: string | null): Promise<AccountRecord>;
  close(): Promise<void>;
}

let document: Promise<OpenApiDocument> | undefined;

export interface KitOptions {
  /** Account-clock reads take this long (real ms), as a database's do: concurrent units interleave there. */
  clockReadsTakeMs?: number;
  /** What webhook attempts wait for before they leave (the HTTP layer's end of turn); resolved at once by default. */
  afterAnswers?: () => Promise<void>;
  /** Records and bytes per account; none by default. */
  quotas?: Quotas;
}

/**
 * The domain as src/app.ts wires it, on an in-memory repository (a fresh PostgreSQL database under
 * SANDBOX_TEST_STORE=postgres) and a FakeClock, with no HTTP:
 * what the domain unit tests drive (as json-server v1 tests its service on an in-memory db).
 * The scheduler is started; jobs run when the test advances an account's clock.
 */
export async function domainKit(settings: Partial<DomainOptions['settings']> = {}, options: KitOptions = {}): Promise<DomainKit> {
  const clock = new FakeClock(Date.UTC(2030, 0, 1, 12));
  const repository = await openTestRepository(() => clock.nowMs());
  const slow = options.clockReadsTakeMs;
  const clocks: ClockReader =
    slow === undefined
      ? repository.clocks
      : {
          offsetOf: async (accountId) => {
            await new Promise((resolve) => setTimeout(resolve, slow));
            return repository.clocks.offsetOf(accountId);
          },
        };
  const ports: Repository = {
    table: (spec) => repository.table(spec),
    committed: { table: (spec) => repository.table(spec), jobs: repository.jobs, clocks },
    sequences: repository.sequences,
    units: repository.units,
    jobs: repository.jobs,
    clocks,
    bus: repository.bus,
    health: () => repository.health(),
    close: () => repository.close(),
  };
  const sender = new FakeSender();
  document ??= loadOpenApi();
  const domain = composeDomain({
    repository: ports,
    clock,
    logger: pino({ level: 'silent' }),
    objects: new MemoryObjectStore(),
    dispatcher: sender,
    afterAnswers: options.afterAnswers ?? (() => Promise.resolve()),
    ...(options.quotas && { quotas: options.quotas }),
    publicUrl: () => 'http://sandbox.test',
    fees: DEFAULT_FEES,
    operationIds: operationIdsOf(await document),
    autopilotRules: [],
    settings: {
      faultSeed: 1,
      webhookMaxAttempts: 8,
      instructionDelayMs: 2_000,
      pixExpiryMs: 24 * 60 * 60 * 1000,
      strictDocuments: false,
      pixInstruction: 'immediate',
      withdrawalStepMs: 60_000,
      jobLeaseMs: 60_000,
      ...settings,
    },
  });
  await domain.scheduler.start();
  let accounts = 0;
  return {
    ...domain,
    repository,
    committed: ports.committed,
    clock,
    sender,
    inUnit: (work) => repository.units.run(work),
    account: async (webhookUrl = null) => repository.units.run((unit) => domain.accounts.create(unit, { name: `unit ${++accounts}`, webhookUrl })),
    close: async () => {
      domain.scheduler.stop();
      await repository.close();
    },
  };
}
