import type { PactFile } from './pact-files.js';

/** What `payments-sandbox verify` found (src/contract/verify.ts), read by its report (src/contract/report.ts). */
export interface InteractionOutcome {
  description: string;
  ok: boolean;
  duration: string | undefined;
}

export interface VerifyFailure {
  /** Pact's own name of the interaction: "Verifying a pact between C and P Given S - D". */
  interaction: string;
  problems: string[];
}

export interface VerifyResult {
  ok: boolean;
  providerBaseUrl: string;
  /** How the target was reached and its states set up. */
  target: string;
  pacts: PactFile[];
  outcomes: InteractionOutcome[];
  failures: VerifyFailure[];
  /** Provider states that could not be set up: they fail the run. */
  stateErrors: string[];
  notes: string[];
  durationMs: number;
  /** The verifier could not run at all (unreachable target, invalid pact file …). */
  error: string | undefined;
  /** The readable report: what `payments-sandbox verify` prints. */
  report: string;
}
