import type { Exchange, Mismatch, StepFailureInfo } from './types.js';

/** Thrown by a step: what went wrong, the differences, and the HTTP call involved. */
export class StepFailure extends Error {
  readonly mismatches: Mismatch[];
  readonly exchange: Exchange | undefined;
  readonly details: string[];

  constructor(message: string, options: { mismatches?: Mismatch[]; exchange?: Exchange; details?: string[] } = {}) {
    super(message);
    this.name = 'StepFailure';
    this.mismatches = options.mismatches ?? [];
    this.exchange = options.exchange;
    this.details = options.details ?? [];
  }

  toInfo(): StepFailureInfo {
    return { message: this.message, mismatches: this.mismatches, details: this.details, ...(this.exchange && { exchange: this.exchange }) };
  }
}

/** Prefixes every mismatch path (e.g. `body.` for a response body). */
export const under = (prefix: string, mismatches: Mismatch[]): Mismatch[] =>
  mismatches.map((m) => ({ ...m, path: m.path ? (m.path.startsWith('[') ? `${prefix}${m.path}` : `${prefix}.${m.path}`) : prefix }));
