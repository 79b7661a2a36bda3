import type { Clock } from '../clock.js';
import type { Health as HealthReport } from '../spec/types.js';
import type { StoreHealth } from '../store/ports.js';
import { VERSION } from '../version.js';
import type { BudgetReport } from './memory-budget.js';

/** Open connections (overflow slots among them), those refused outright since the start, and the caps. */
export interface ConnectionCounts {
  open: number;
  overflow: number;
  refused: number;
  limit: number;
  perClientLimit: number;
}

/**
 * `GET /_sandbox/health`: up since this sandbox was built, on its clock, and whether its store
 * answers. The report never says more of a failure than `ok: false` (the endpoint needs no key;
 * a connection error names hosts and users): the detail goes to the log.
 */
export class Health {
  private readonly startedAt: number;

  constructor(
    private readonly clock: Clock,
    private readonly store: () => Promise<StoreHealth>,
    private readonly onFailure: (detail: string | undefined) => void = () => undefined,
    /** What clients make the process hold, as GET /_sandbox/health reports it: the memory budget, the open connections. */
    private readonly load: { memory?: () => BudgetReport; connections?: () => ConnectionCounts } = {},
  ) {
    this.startedAt = clock.nowMs();
  }

  async report(): Promise<HealthReport> {
    const store = await this.store();
    if (!store.ok) this.onFailure(store.detail);
    return {
      status: store.ok ? 'ok' : 'unavailable',
      version: VERSION,
      uptimeMs: this.clock.nowMs() - this.startedAt,
      // In memory or on a file, it is the same embedded store.
      store: { kind: store.kind === 'postgres' ? 'postgres' : 'embedded', ok: store.ok },
      ...(this.load.memory && { memory: this.load.memory() }),
      ...(this.load.connections && { connections: this.load.connections() }),
    };
  }
}
