import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { PACT_DIR } from './matchers.js';
import { startBreakingProxy, startWrongStub, verifyInChild, type HttpStub } from './provider-helpers.js';

/** The verification has teeth: a provider that answers a wrong shape fails it, readably. */
let sandbox: TestSandbox;
let proxy: HttpStub;
let stub: HttpStub;
beforeAll(async () => {
  sandbox = await startSandbox();
  proxy = await startBreakingProxy(sandbox.url);
  stub = await startWrongStub();
});
afterAll(async () => {
  await proxy?.close();
  await stub?.close();
  await sandbox?.stop();
});

describe('provider verification has teeth', () => {
  it('fails exactly the interactions whose shape a provider breaks, and says why', async () => {
    const result = await verifyInChild({ providerBaseUrl: proxy.url, pacts: [PACT_DIR] });
    expect(result.ok).toBe(false);
    expect(result.stateErrors).toEqual([]);
    const failed = result.outcomes.filter((o) => !o.ok).map((o) => o.description);
    // Every message is taken from the (broken) delivery log: all of them fail.
    const messages = result.outcomes.map((o) => o.description).filter((d) => / webhook /.test(d));
    expect(messages).toHaveLength(9);
    const creates = result.outcomes.map((o) => o.description).filter((d) => /^a request to create (a|an) (COP|ARS|BRL|MXN)/.test(d) && !/ without | below | above | invalid | incomplete /.test(d));
    expect(creates).toHaveLength(11);
    expect(failed.sort()).toEqual(
      ['a request to create a product', ...creates, ...messages].sort(),
    );
    // Untouched answers still verify: the errors, the lookups, the offers.
    expect(result.outcomes.find((o) => o.description === 'a request to create a product with an imageUrl')?.ok).toBe(true);
    expect(result.outcomes.find((o) => o.description === 'a request to read a BRL hybrid transaction with its BR Code and boleto')?.ok).toBe(true);

    expect(result.report).toContain(`Verification FAILED: ${failed.length} of ${result.outcomes.length} interactions failed`);
    expect(result.output).toContain(`There were ${failed.length} pact failures`); // Pact's own report agrees
    expect(result.report).toContain(
      "merchant-client and payments-api Given no product has the externalId - a request to create a product\n       $.active: Expected 'true' (String) to be equal to true (Boolean)",
    );
    expect(result.report).toContain("$.createdAt: Expected '");
    expect(result.report).toContain("' to match a timestamp pattern of 'yyyy-MM-dd'T'HH:mm:ss.SSS'Z''");
    expect(result.report).toContain("$.payload.amount: Expected '15000' (String) to be an integer");
  });

  it('fails a fake that answers wrong bodies, with a report naming each mismatch', async () => {
    const result = await verifyInChild({ providerBaseUrl: stub.url, secretKey: 'sk_test_fake', pacts: [PACT_DIR] });
    expect(result.ok).toBe(false);
    expect(result.target).toContain('not a payments-sandbox');
    expect(result.outcomes.filter((o) => !o.ok).length).toBeGreaterThan(40);
    expect(result.report).toContain('9 message interaction(s) left out');
    const createProduct = result.failures.find((f) => f.interaction.endsWith(' - a request to create a product'));
    expect(createProduct?.problems).toEqual(['$: Actual map is missing the following keys: id']);
    expect(result.report).toContain('$: Actual map is missing the following keys: id');
    expect(result.report).toContain("$.status: Expected 'CREATED' (String) to be equal to 'PENDING' (String)");
    expect(result.report).toContain('status: expected 400 but was 201');
    expect(result.report).toMatch(/Verification FAILED: \d+ of 62 interactions failed/);
  });
});
