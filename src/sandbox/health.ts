import type { Clock } from '../clock.js';
import type { Health as HealthReport } from '../spec/types.js';
import { VERSION } from '../version.js';

/** `GET /_sandbox/health`: up since this sandbox was built, on its clock. */
export class Health {
  private readonly startedAt: number;

  constructor(private readonly clock: Clock) {
    this.startedAt = clock.nowMs();
  }

  report(): HealthReport {
    return { status: 'ok', version: VERSION, uptimeMs: this.clock.nowMs() - this.startedAt };
  }
}
