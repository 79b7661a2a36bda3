import { join } from 'node:path';
import { Writable } from 'node:stream';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseScenario } from '../../src/scenarios/load.js';
import { ConsoleReporter, useColor } from '../../src/scenarios/report/console.js';
import { formatScenarioResult, stripAnsi } from '../../src/scenarios/report/format.js';
import { toJUnitXml } from '../../src/scenarios/report/junit.js';
import { runScenario, runScenarios } from '../../src/scenarios/run.js';
import type { RunEvent, RunSummary, ScenarioResult } from '../../src/scenarios/types.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { FIXTURES } from './helpers.js';

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startSandbox({ instructionDelayMs: 50 });
});
afterAll(async () => {
  await sb.stop();
});

const run = (yaml: string, env: Record<string, string> = {}): Promise<ScenarioResult> => runScenario(parseScenario(yaml, 'inline.yaml'), { baseUrl: sb.url, env });
const outcomes = (result: ScenarioResult): string[] => result.steps.map((s) => s.outcome);

describe('a deliberately wrong expectation', () => {
  it('fails at that step with expected versus actual, the HTTP call, and skips the rest', async () => {
    const file = join(FIXTURES, 'wrong-expectation.yaml');
    const result = await runScenario(file, { baseUrl: sb.url });
    expect(result.ok).toBe(false);
    expect(outcomes(result)).toEqual(['passed', 'passed', 'failed', 'skipped']);
    const failed = result.steps[2];
    expect(failed?.failure?.message).toMatch(/^transaction \d+ does not match \(2 differences\)$/);
    expect(failed?.failure?.mismatches).toEqual([
      { path: 'status', expected: 'REFUNDED', actual: 'APPROVED' },
      { path: 'amount', expected: 99999, actual: 15000 },
    ]);
    expect(failed?.failure?.exchange).toMatchObject({ method: 'GET', status: 200 });

    const report = formatScenarioResult(result);
    expect(report).toContain(`FAIL ${file} — A paid Pix charge wrongly expected to be refunded`);
    expect(report).toContain(`✗ 3. wrong on purpose (expectTransaction)`);
    expect(report).toContain(`${file}:10`);
    expect(report).toMatch(/status\n\s+expected: "REFUNDED"\n\s+actual: {3}"APPROVED"/);
    expect(report).toMatch(/amount\n\s+expected: 99999\n\s+actual: {3}15000/);
    expect(report).toMatch(/HTTP GET http:\/\/127\.0\.0\.1:\d+\/transactions\/\d+ → 200/);
    expect(report).toContain('- 4. expectWebhook (skipped)');
    expect(report).not.toMatch(/\u001b\[/);
  });
});

describe('captures and the scenario account', () => {
  it('steps.<id>.status, .response and .headers feed later steps', async () => {
    const result = await run(`
name: captures
account: { name: Loja Captura }
steps:
  - id: shirt
    product: { name: Camiseta }
  - id: again
    request:
      path: "/v2/products/{{ steps.shirt.response.id }}"
      expect: { body: { id: "{{ steps.shirt.response.id }}", name: "{{ steps.shirt.status }}" } }
    `);
    // A whole-value template keeps its type: the number 201, compared and reported as such.
    expect(result.ok).toBe(false);
    expect(result.steps[1]?.failure?.mismatches).toEqual([{ path: 'body.name', expected: 201, actual: 'Camiseta' }]);

    const ok = await run(`
name: captures
account: { name: Loja Captura, webhookUrl: null }
steps:
  - id: shirt
    product: { name: Camiseta, metadata: { region: "{{ env.REGION }}" } }
  - id: read
    request:
      path: "/v2/products/{{ steps.shirt.response.id }}"
      expect:
        body: { name: "{{ steps.shirt.response.name }}", metadata: { region: br } }
        headers: { content-type: { matches: json } }
  - id: buy
    purchase:
      body:
        amount: "{{ steps.shirt.status }}"
        description: "{{ steps.read.headers.content-type }}"
      expect: { body: { amount: 201, postbackUrl: null } }
  - expectTransaction: { fields: { id: "{{ steps.buy.response.id }}", description: { exists: false } } }
    `, { REGION: 'br' });
    expect(ok.ok, formatScenarioResult(ok)).toBe(true);
  });

  it('account.key uses an existing account; a rejected key fails the set-up and skips every step', async () => {
    const good = await run('name: default key\naccount: { key: "{{ env.KEY }}" }\nsteps:\n  - purchase: {}\n  - expectTransaction: { status: PENDING }\n', { KEY: 'sk_test_sandbox' });
    expect(good.ok, formatScenarioResult(good)).toBe(true);
    const bad = await run('name: bad key\naccount: { key: sk_test_nope }\nsteps:\n  - purchase: {}\n');
    expect(outcomes(bad)).toEqual(['failed', 'skipped']);
    expect(bad.steps[0]).toMatchObject({ kind: 'setup', title: 'set up: check account.key' });
    expect(bad.steps[0]?.failure?.message).toMatch(/expected HTTP 200, got 401: Unauthorized/);
  });

  it('a template that finds nothing fails its step with the reason', async () => {
    const result = await run('name: t\nsteps:\n  - id: buy\n    purchase: {}\n  - pay: { transaction: "{{ steps.buy.response.paymentId }}" }\n');
    expect(outcomes(result)).toEqual(['passed', 'failed']);
    expect(result.steps[1]?.failure?.message).toMatch(/^\{\{ steps\.buy\.response\.paymentId \}\}: steps\.buy\.response has no "paymentId" \(keys: id, transactionId, currency/);
  });
});

describe('webhooks at the runner receiver', () => {
  it('checks signatures with the account webhookSecret', async () => {
    const result = await run(`
name: signatures
receiver: { failFirst: 1, status: 503 }
steps:
  - purchase: {}
  - pay: {}
  - expectWebhook: { answered: 503, secret: whsec_wrong, signature: invalid }
  - advanceClock: { ms: 2s }
  - expectWebhook: { answered: 200, signature: valid, headers: { x-sandbox-attempt: "2" } }
    `);
    expect(result.ok, formatScenarioResult(result)).toBe(true);

    const wrong = await run('name: s\nsteps:\n  - purchase: {}\n  - pay: {}\n  - expectWebhook: { secret: whsec_wrong, timeout: 500ms }\n');
    expect(wrong.ok).toBe(false);
    const failure = wrong.steps[2]?.failure;
    expect(failure?.message).toMatch(/^no matching webhook within 500ms; closest is #1$/);
    expect(failure?.mismatches[0]).toMatchObject({ path: 'headers.x-signature', expected: expect.stringMatching(/^a valid signature \([0-9a-f]{64}\)$/) });
    expect(failure?.details.join('\n')).toMatch(/#1 POST \/webhooks cashin\.paid transaction \d+ attempt 1 → answered 200, signature INVALID/);
  });

  it('says so when nothing arrives', async () => {
    const result = await run('name: s\nsteps:\n  - purchase: {}\n  - expectWebhook: { timeout: 200ms }\n');
    expect(result.steps[1]?.failure?.message).toMatch(/^no webhook reached the receiver \(http:\/\/127\.0\.0\.1:\d+\/webhooks\) within 200ms$/);
  });
});

describe('expectError', () => {
  it('checks the error shape of the endpoint family', async () => {
    const result = await run('name: e\nsteps:\n  - expectError:\n      product: { name: "" }\n      status: 400\n      shape: transaction\n');
    expect(result.ok).toBe(false);
    expect(result.steps[0]?.failure?.mismatches.map((m) => m.path)).toEqual(['body', 'body.statusCode', 'body.message']);
    const success = await run('name: e\nsteps:\n  - expectError:\n      purchase: {}\n      status: 400\n');
    expect(success.steps[0]?.failure?.message).toBe('expected HTTP 400, got 201');
  });
});

describe('runScenarios', () => {
  it('expands globs, reports progress events, and runs an in-process sandbox without a base URL', async () => {
    const events: RunEvent[] = [];
    const summary = await runScenarios([join(FIXTURES, 'wrong-*.yaml')], { instructionDelayMs: 50, onEvent: (e) => events.push(e) });
    expect(summary.inProcess).toBe(true);
    expect(summary.ok).toBe(false);
    expect(summary.results.map((r) => r.file)).toEqual([join(FIXTURES, 'wrong-expectation.yaml')]);
    expect(events.map((e) => e.type)).toEqual(['run:start', 'scenario:start', 'step:end', 'step:end', 'step:end', 'step:end', 'scenario:end']);
    // The in-process sandbox is gone once the run is over.
    await expect(fetch(`${summary.baseUrl}/_sandbox/health`)).rejects.toThrow();
  });

  it('rejects with the first invalid file before running anything', async () => {
    await expect(runScenarios([join(FIXTURES, 'deep-violation.yaml')], { baseUrl: sb.url })).rejects.toThrow(/deep-violation\.yaml:9:15: /);
  });
});

describe('reporters', () => {
  const collect = (): { stream: Writable & { isTTY?: boolean }; text: () => string } => {
    let out = '';
    const stream = new Writable({
      write(chunk: Buffer, _enc, done) {
        out += chunk.toString();
        done();
      },
    });
    return { stream, text: () => out };
  };

  it('colours only on a TTY without NO_COLOR (FORCE_COLOR forces them)', () => {
    expect(useColor({ isTTY: true }, {})).toBe(true);
    expect(useColor({ isTTY: false }, {})).toBe(false);
    expect(useColor({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(useColor({ isTTY: false }, { FORCE_COLOR: '1' })).toBe(true);
  });

  const summary: RunSummary = {
    ok: false,
    durationMs: 1234,
    startedAt: '2026-01-01T00:00:00.000Z',
    baseUrl: 'http://127.0.0.1:1',
    inProcess: false,
    results: [
      {
        file: 'scenarios/a&b.yaml',
        name: 'Pago <com> "aspas" & \'apóstrofo\' \u0001fim',
        ok: false,
        durationMs: 20,
        startedAt: '2026-01-01T00:00:00.000Z',
        steps: [
          { index: 0, id: 'buy', kind: 'purchase', title: 'purchase BRL PIX', line: 3, outcome: 'passed', durationMs: 5 },
          {
            index: 1,
            kind: 'expectTransaction',
            title: 'expectTransaction 1',
            line: 5,
            outcome: 'failed',
            durationMs: 6,
            failure: { message: 'transaction 1 does not match <x>', mismatches: [{ path: 'status', expected: 'REFUNDED', actual: 'APPROVED' }], details: [] },
          },
          { index: 2, kind: 'pay', title: 'pay 1', line: 7, outcome: 'skipped', durationMs: 0 },
        ],
      },
      { file: 'scenarios/ok.yaml', name: 'ok', ok: true, durationMs: 3, startedAt: '2026-01-01T00:00:00.000Z', steps: [{ index: 0, kind: 'purchase', title: 'purchase', line: 3, outcome: 'passed', durationMs: 3 }] },
    ],
  };

  it('console: step lines with times, the failure, a summary; ANSI only with colours', () => {
    for (const color of [false, true]) {
      const { stream, text } = collect();
      const reporter = new ConsoleReporter({ stream, color });
      for (const result of summary.results) {
        reporter.onEvent({ type: 'scenario:start', file: result.file, name: result.name });
        for (const step of result.steps) reporter.onEvent({ type: 'step:end', file: result.file, step });
      }
      reporter.summary(summary);
      const plain = stripAnsi(text());
      expect(/\u001b\[/.test(text())).toBe(color);
      expect(plain).toContain('✓ 1. purchase BRL PIX [buy]  5 ms');
      expect(plain).toMatch(/✗ 2\. expectTransaction 1 {2}6 ms {2}scenarios\/a&b\.yaml:5\n {6}transaction 1 does not match <x>\n {6}status\n {8}expected: "REFUNDED"\n {8}actual: {3}"APPROVED"/);
      expect(plain).toContain('- 3. pay 1 (skipped)');
      expect(plain).toContain('Scenarios: 1 failed, 1 passed, 2 total (1.2 s)');
    }
  });

  it('JUnit: valid, escaped XML with a suite per scenario and a case per step', () => {
    const xml = toJUnitXml(summary);
    expect(XMLValidator.validate(xml)).toBe(true);
    const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', isArray: (name) => ['testsuite', 'testcase'].includes(name) }).parse(xml) as {
      testsuites: { tests: string; failures: string; skipped: string; testsuite: { name: string; tests: string; failures: string; testcase: { name: string; failure?: { message: string; '#text': string }; skipped?: unknown }[] }[] };
    };
    expect(doc.testsuites).toMatchObject({ tests: '4', failures: '1', skipped: '1' });
    const [first, second] = doc.testsuites.testsuite;
    expect(first?.name).toBe('Pago <com> "aspas" & \'apóstrofo\' fim');
    expect(first?.testcase.map((c) => c.name)).toEqual(['1. purchase BRL PIX [buy]', '2. expectTransaction 1', '3. pay 1']);
    expect(first?.testcase[1]?.failure?.message).toBe('transaction 1 does not match <x>');
    expect(first?.testcase[1]?.failure?.['#text']).toContain('expected: "REFUNDED"');
    expect(first?.testcase[2]).toHaveProperty('skipped');
    expect(second).toMatchObject({ tests: '1', failures: '0' });
  });
});
