import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadPactFiles } from '../../src/contract/pact-files.js';
import { STATES } from '../../src/contract/states.js';
import { verifyAgainstInProcessSandbox } from '../../src/contract/verify.js';
import { PACT_DIR } from './matchers.js';

/**
 * Step two of `npm test`: the pacts step one wrote (pacts/) verified against the sandbox.
 * Provider states go through the control API in a fresh account reset after each
 * interaction; the lifecycle messages (paid, expired, failed, refunded, infraction) are taken
 * from the sandbox's webhook delivery log, i.e. built by its real builder
 * (src/webhooks/payload.ts webhookBody) for a transaction brought to that end through the
 * control API.
 */
describe('provider verification of the shipped pacts against the sandbox', () => {
  it('ships the merchant client and webhook handler pacts, PactV4', async () => {
    const pacts = await loadPactFiles([PACT_DIR]);
    expect(pacts.map((p) => [p.consumer, p.provider, p.specification])).toEqual([
      ['merchant-client', 'payments-api', '4.0'],
      ['merchant-webhook-handler', 'payments-api', '4.0'],
    ]);
    const [client, webhooks] = pacts;
    expect(client?.interactions.every((i) => i.kind === 'http')).toBe(true);
    expect(webhooks?.interactions.map((i) => i.kind)).toEqual(Array(9).fill('message'));
    expect(client?.interactions.length).toBeGreaterThanOrEqual(40);
  });

  it('documents every provider state and every shipped pact in docs/pact.md', async () => {
    const readme = readFileSync(`${PACT_DIR}../docs/pact.md`, 'utf8');
    for (const state of Object.values(STATES)) expect(readme).toContain(`| \`${state}\` |`);
    for (const pact of await loadPactFiles([PACT_DIR])) {
      expect(readme).toContain(`| \`${pact.file.split('/').at(-1)}\` | \`${pact.consumer}\` → \`${pact.provider}\` | ${pact.interactions.length} `);
    }
  });

  it('matches generated values by shape, never by the value one run produced', () => {
    const pact = JSON.parse(readFileSync(`${PACT_DIR}merchant-client-payments-api.json`, 'utf8')) as {
      interactions: { description: string; response: { status: number; body?: { content: Record<string, unknown> }; matchingRules?: { body?: Record<string, unknown> } } }[];
    };
    for (const interaction of pact.interactions) {
      const { status, body, matchingRules } = interaction.response;
      if (status >= 300 || !body) continue;
      const rules = Object.keys(matchingRules?.body ?? {});
      for (const field of ['id', 'createdAt', 'createdByUserId', 'pixCode', 'cvu', 'redirectUrl']) {
        if (field in body.content && body.content[field] !== null) expect(rules, `${interaction.description}: $.${field}`).toContain(`$.${field}`);
      }
    }
  });

  it('holds: every interaction verified, every state set up', async () => {
    const pacts = await loadPactFiles([PACT_DIR]);
    const total = pacts.reduce((n, p) => n + p.interactions.length, 0);
    const result = await verifyAgainstInProcessSandbox({ pacts: [PACT_DIR] });
    expect(result.ok, result.report).toBe(true);
    expect(result.outcomes).toHaveLength(total);
    expect(result.outcomes.every((o) => o.ok)).toBe(true);
    expect(result.stateErrors).toEqual([]);
    expect(result.notes).toEqual([]);
    expect(result.report).toContain(`Verification PASSED: ${total} interactions verified`);
  });
});
