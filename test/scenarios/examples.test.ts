import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadScenario } from '../../src/scenarios/load.js';
import { formatScenarioResult } from '../../src/scenarios/report/format.js';
import { runScenario } from '../../src/scenarios/run.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { ROOT } from '../helpers/process.js';
import { exampleFiles } from './helpers.js';

const files = exampleFiles();
let sb: TestSandbox;

beforeAll(async () => {
  sb = await startSandbox({ instructionDelayMs: 100 });
});
afterAll(async () => {
  await sb.stop();
});

describe('example scenarios in scenarios/', () => {
  it('are a dozen or so', () => {
    expect(files.length).toBeGreaterThanOrEqual(12);
  });

  it.each(files)('%s passes', async (file) => {
    const result = await runScenario(join(ROOT, file), { baseUrl: sb.url });
    expect(result.ok, formatScenarioResult(result)).toBe(true);
    expect(result.steps.every((s) => s.outcome === 'passed')).toBe(true);
  });

  it('cover every currency and method, and the flows the issue names', async () => {
    const scenarios = await Promise.all(files.map((f) => loadScenario(join(ROOT, f))));
    const variants = new Set<string>();
    const kinds = new Set<string>();
    for (const scenario of scenarios) {
      for (const step of scenario.steps) {
        kinds.add(step.kind);
        if (step.kind !== 'purchase') continue;
        const purchase = step.params;
        const currency = (purchase.currency as string | undefined) ?? 'BRL';
        const method = (purchase.paymentMethod as string | undefined) ?? (currency === 'BRL' ? 'PIX' : 'BANK_TRANSFER');
        variants.add(`${currency} ${method}`);
      }
    }
    expect([...variants].sort()).toEqual(
      ['ARS BANK_TRANSFER', 'BRL BOLETO', 'BRL CREDIT_CARD', 'BRL PIX', 'BRL PIX_BOLETO', 'COP BANK_TRANSFER', 'COP BREB', 'COP NEQUI', 'COP PSE', 'MXN SPEI'].sort(),
    );
    // Every step kind of the language is shown by at least one example.
    expect([...kinds].sort()).toEqual(
      [
        'account', 'advanceClock', 'cashOut', 'chargeback', 'decline', 'expectBalance', 'expectError', 'expectTransaction', 'expectWebhook', 'expectWithdrawal',
        'expire', 'faults', 'offer', 'pay', 'product', 'purchase', 'receiver', 'refund', 'request', 'waitForInstruction',
      ].sort(),
    );
    for (const name of ['hybrid-paid-by-pix', 'hybrid-paid-by-boleto', 'webhook-receiver-recovers', 'boleto-expires', 'permission-errors', 'validation-errors', 'refund-and-chargeback', 'faults-purchase-503-retry', 'faults-timeout-after-commit', 'faults-duplicate-webhook', 'faults-bad-signature', 'cashout-paid', 'cashout-outcomes', 'balance-ledger', 'mxn-spei', 'minimums']) {
      expect(files).toContain(`scenarios/${name}.yaml`);
    }
  });
});
