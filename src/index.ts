/**
 * The library side of payments-sandbox: run scenario files from vitest or jest.
 *
 *   import { runScenario, formatScenarioResult } from 'payments-sandbox';
 *   const result = await runScenario('scenarios/pix-paid.yaml', { baseUrl: 'http://localhost:4010' });
 *   expect(result.ok, formatScenarioResult(result)).toBe(true);
 *
 * and make a running sandbox send a webhook event (what `payments-sandbox trigger` does):
 *
 *   import { trigger } from 'payments-sandbox';
 *   const { delivery } = await trigger({ event: 'cashin.paid', baseUrl: 'http://localhost:4010', key: 'sk_test_sandbox' });
 *
 * The test kit (a sandbox in the test process, control, webhooks.waitFor, the request log) is the
 * package's other entry, `payments-sandbox/testing` (src/testing/index.ts, docs/testing-kit.md).
 */
export { runScenario, runScenarios, loadScenarios, type RunOptions, type LoadedScenarios } from './scenarios/run.js';
export { loadScenario, parseScenario, ScenarioLoadError } from './scenarios/load.js';
export { formatScenarioResult } from './scenarios/report/format.js';
export { ConsoleReporter, type ConsoleReporterOptions } from './scenarios/report/console.js';
export { toJUnitXml } from './scenarios/report/junit.js';
export { SCHEMA_PATH } from './scenarios/schema.js';
export type {
  Duration,
  Exchange,
  Mismatch,
  RunEvent,
  RunSummary,
  Scenario,
  ScenarioResult,
  Step,
  StepFailureInfo,
  StepKind,
  StepOutcome,
  StepResult,
} from './scenarios/types.js';
export {
  trigger,
  TriggerError,
  TRIGGER_EVENTS,
  type TriggerCall,
  type TriggerDelivery,
  type TriggerEvent,
  type TriggerOptions,
  type TriggerOutcome,
  type TriggerResult,
} from './trigger/trigger.js';
