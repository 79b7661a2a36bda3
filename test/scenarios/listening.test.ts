// Scenario runs on any sandbox (contract v4): against a sandbox whose target policy refuses the
// runner's loopback receiver, the runner takes its accounts' webhooks as a listener and the same
// scenario files pass. Every address is loopback.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Account } from '../../src/spec/types.js';
import { parseScenario } from '../../src/scenarios/load.js';
import { formatScenarioResult } from '../../src/scenarios/report/format.js';
import { runScenario, runScenarios, type RunOptions } from '../../src/scenarios/run.js';
import type { RunEvent, ScenarioResult } from '../../src/scenarios/types.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { SCENARIOS_DIR } from './helpers.js';
import { openAccount } from '../helpers/accounts.js';

let locked: TestSandbox;
beforeAll(async () => {
  locked = await startSandbox({ instructionDelayMs: 50, webhookAllow: ['example.com'] });
});
afterAll(async () => {
  await locked.stop();
});

const run = (yaml: string, options: RunOptions = {}): Promise<ScenarioResult> => runScenario(parseScenario(yaml, 'inline.yaml'), { baseUrl: locked.url, ...options });

/** The delivery log's check that the attempt came back through the runner's listener. */
const VIA_RUNNER = `
  - request:
      path: /_sandbox/webhooks
      query: { transactionId: "{{ steps.buy.response.id }}" }
      within: 2s
      expect: { body: { data: [{ status: delivered, url: "{{ receiver.url }}", attempts: [{ httpStatus: 200, via: { matches: "^listener scenario-runner@" } }] }] } }
`;

async function newAccount(): Promise<Account> {
  return (await openAccount(locked.clientFor(undefined), { name: 'given by key' })).account;
}

describe('a sandbox that refuses the receiver', () => {
  it('the shipped scenarios with webhooks pass: the runner says once that it listens, and the delivery log shows its listener', async () => {
    const events: RunEvent[] = [];
    const files = ['brl-pix-paid.yaml', 'webhook-receiver-recovers.yaml', 'faults-duplicate-webhook.yaml', 'permission-errors.yaml', 'cashout-paid.yaml'].map((f) => `${SCENARIOS_DIR}/${f}`);
    const summary = await runScenarios(files, { baseUrl: locked.url, onEvent: (e) => events.push(e) });
    for (const result of summary.results) expect(result.ok, formatScenarioResult(result)).toBe(true);
    const notes = events.filter((e) => e.type === 'run:note');
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({
      message: expect.stringMatching(/^webhooks: the sandbox refuses the receiver's address \(webhookUrl 127\.0\.0\.1 is not among the webhook targets this sandbox allows \(SANDBOX_WEBHOOK_ALLOW=example\.com\)\), so this run takes its accounts' webhooks as a listener/),
    });
  });

  it("the scenario account's attempts are answered by the runner's listener, with the receiver's answer", async () => {
    const result = await run(`
name: via the runner's listener
steps:
  - id: buy
    purchase: { paymentMethod: PIX }
  - pay: {}
  - expectWebhook: { signature: valid, headers: { x-sandbox-attempt: "1" } }
${VIA_RUNNER}`);
    expect(result.ok, formatScenarioResult(result)).toBe(true);
  });

  it('an account given by key is listened for during the scenario, then put back in direct delivery', async () => {
    const account = await newAccount();
    const result = await run(`
name: given by key
account: { key: ${account.secretKey}, webhookSecret: ${account.webhookSecret}, webhookUrl: "{{ receiver.url }}" }
steps:
  - id: buy
    purchase: { paymentMethod: PIX }
  - pay: {}
  - expectWebhook: { signature: valid }
${VIA_RUNNER}`);
    expect(result.ok, formatScenarioResult(result)).toBe(true);
    const after = await locked.clientFor(account.secretKey).get<Account>('/_sandbox/account');
    expect(after.body).toMatchObject({ webhookDelivery: 'direct', webhookUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/webhooks$/) });
  });

  it('--webhooks direct keeps the refusal: the set-up fails saying the sandbox refuses the receiver, and what gets past it', async () => {
    const result = await run('name: direct only\nsteps:\n  - purchase: {}\n', { webhooks: 'direct' });
    expect(result.steps.map((s) => s.outcome)).toEqual(['failed', 'skipped']);
    expect(result.steps[0]?.failure?.message).toBe(
      "the sandbox refuses the receiver's address: webhookUrl 127.0.0.1 is not among the webhook targets this sandbox allows (SANDBOX_WEBHOOK_ALLOW=example.com): run without --webhooks direct, and the runner takes the webhooks as a listener",
    );
    const account = await newAccount();
    const given = await run(`name: direct, by key\naccount: { key: ${account.secretKey}, webhookUrl: "{{ receiver.url }}" }\nsteps:\n  - purchase: {}\n`, { webhooks: 'direct' });
    expect(given.steps[0]?.failure?.message).toMatch(/^the sandbox refuses the receiver's address: url 127\.0\.0\.1 is not among .*: run without --webhooks direct/);
  });
});

describe('--webhooks listener on a sandbox that would post', () => {
  let open: TestSandbox;
  beforeAll(async () => {
    open = await startSandbox({ instructionDelayMs: 50 });
  });
  afterAll(async () => {
    await open.stop();
  });

  it('takes the webhooks as a listener from the start, without a note', async () => {
    const events: RunEvent[] = [];
    const result = await runScenario(
      parseScenario(`name: listener from the start\nsteps:\n  - id: buy\n    purchase: { paymentMethod: PIX }\n  - pay: {}\n  - expectWebhook: { signature: valid }\n${VIA_RUNNER}`, 'inline.yaml'),
      { baseUrl: open.url, webhooks: 'listener', onEvent: (e) => events.push(e) },
    );
    expect(result.ok, formatScenarioResult(result)).toBe(true);
    expect(events.filter((e) => e.type === 'run:note')).toEqual([]);
  });
});

describe('what the set-up says when it cannot go on', () => {
  it('a sandbox with an admin token, and none given: says to give it', async () => {
    const guarded = await startSandbox({ instructionDelayMs: 50, webhookAllow: ['example.com'], adminToken: 'the-admin-token' });
    try {
      const result = await runScenario(parseScenario('name: no token\nsteps:\n  - purchase: {}\n', 'inline.yaml'), { baseUrl: guarded.url });
      expect(result.steps[0]?.failure?.message).toBe(
        'this sandbox creates accounts only with its admin token (401 (this sandbox requires its admin token: Authorization: Bearer <SANDBOX_ADMIN_TOKEN>)): give it with --admin-token (or SANDBOX_ADMIN_TOKEN)',
      );
      const withToken = await runScenario(parseScenario(`name: with token\nsteps:\n  - id: buy\n    purchase: { paymentMethod: PIX }\n  - pay: {}\n  - expectWebhook: {}\n${VIA_RUNNER}`, 'inline.yaml'), {
        baseUrl: guarded.url,
        adminToken: 'the-admin-token',
      });
      expect(withToken.ok, formatScenarioResult(withToken)).toBe(true);
    } finally {
      await guarded.stop();
    }
  });

  it('a refused key says what the sandbox explained', async () => {
    const result = await run('name: bad key\naccount: { key: sk_test_nope, webhookUrl: "{{ receiver.url }}" }\nsteps:\n  - purchase: {}\n');
    expect(result.steps[0]?.failure?.message).toBe('expected HTTP 200, got 401: Unauthorized (API key invalid or absent: no account of this sandbox has this secret key; send Authorization: Basic base64("secret:" + secretKey))');
  });

  it('a sandbox that refuses the receiver and predates listeners mode: says to upgrade it', async () => {
    // Answers as such a sandbox does: the refusal, and 400 for the delivery field it does not know.
    const old = createServer((req, res) => {
      const answer = (status: number, body: unknown): void => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.method === 'POST' && req.url === '/_sandbox/accounts') {
        let text = '';
        req.on('data', (chunk: Buffer) => (text += chunk.toString()));
        req.on('end', () => {
          const body = JSON.parse(text) as { webhookUrl: string | null };
          if (body.webhookUrl !== null) return answer(400, { statusCode: 400, message: 'webhookUrl 127.0.0.1 is not among the webhook targets this sandbox allows (SANDBOX_WEBHOOK_ALLOW=example.com)', error: 'Bad Request' });
          answer(201, { id: 'acc_old', secretKey: 'sk_test_old', webhookSecret: 'whsec_old', name: 'old' });
        });
        return;
      }
      if (req.method === 'PUT' && req.url === '/_sandbox/webhook-url') return answer(400, { statusCode: 400, message: 'delivery is not a field of this body; it takes url', error: 'Bad Request' });
      answer(404, { statusCode: 404, message: 'Not Found' });
    });
    await new Promise<void>((resolve) => old.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = old.address() as AddressInfo;
      const result = await runScenario(parseScenario('name: old sandbox\nsteps:\n  - purchase: {}\n', 'inline.yaml'), { baseUrl: `http://127.0.0.1:${port}` });
      expect(result.steps[0]?.failure?.message).toBe(
        `the sandbox at http://127.0.0.1:${port} has no listeners delivery mode, the way to take webhooks where it cannot post: delivery is not a field of this body; it takes url: upgrade it, or run the scenarios where it can reach the receiver (--receiver-host)`,
      );
    } finally {
      await new Promise<void>((resolve) => old.close(() => resolve()));
    }
  });
});
