import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PactV4 } from '@pact-foundation/pact';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STATES } from '../../src/contract/states.js';
import { spawnSandbox, type SandboxProcess } from '../helpers/process.js';
import { M, pixCode, productId, timestamp } from './matchers.js';
import { PaymentsClient } from './merchant-client.js';
import { startWrongStub, verifyCli, type HttpStub } from './provider-helpers.js';

/** `payments-sandbox verify`, run as a merchant's CI runs it: the built CLI in a child process. */
const dir = mkdtempSync(join(tmpdir(), 'verify-cli-'));
let sandbox: SandboxProcess;
let stub: HttpStub;
beforeAll(async () => {
  [sandbox, stub] = await Promise.all([spawnSandbox(['--in-memory']), startWrongStub()]);
});
afterAll(async () => {
  sandbox?.child.kill('SIGTERM');
  await stub?.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A merchant's own consumer pact ("acme-shop"), written the way their test suite would:
 * states from the payments-sandbox vocabulary, no Authorization recorded on one request.
 * `wrongExpectation` makes it expect what the service does not do (a numeric product id).
 */
async function writeMerchantPact(into: string, wrongExpectation: boolean): Promise<void> {
  const pact = new PactV4({ consumer: 'acme-shop', provider: 'payments-api', dir: into, logLevel: 'error' });
  await pact
    .addInteraction()
    .uponReceiving('acme creates a product')
    .withRequest('POST', '/v2/products', (b) => b.headers({ 'Content-Type': 'application/json', Authorization: M.regex('^Basic .+$', 'Basic c2VjcmV0OmFjbWU=') }).jsonBody({ name: 'Acme anvil' }))
    .willRespondWith(201, (b) => b.jsonBody({ id: wrongExpectation ? M.integer(7) : productId(), name: 'Acme anvil', active: true, createdAt: timestamp() }))
    .executeTest(async (server) => {
      await new PaymentsClient(server.url, 'acme').createProduct({ name: 'Acme anvil' });
    });
  await pact
    .addInteraction()
    .given(STATES.filledTransaction, { currency: 'BRL', paymentMethod: 'PIX', externalId: 'acme-order-1' })
    .uponReceiving('acme reads its Pix charge by its order number')
    .withRequest('GET', '/transactions/acme-order-1', (b) => b.query({ searchBy: 'externalId' }))
    .willRespondWith(200, (b) => b.jsonBody({ externalId: 'acme-order-1', status: 'PENDING', pixCode: pixCode() }))
    .executeTest(async (server) => {
      await fetch(`${server.url}/transactions/acme-order-1?searchBy=externalId`);
    });
}

describe('payments-sandbox verify --provider-base-url', () => {
  it('passes against a separately started sandbox (exit 0) and says what it verified', async () => {
    // Run from elsewhere: the shipped pacts are found from the package, not from the working directory.
    const res = await verifyCli(['--provider-base-url', sandbox.url, '--secret-key', 'sk_test_sandbox'], dir);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toContain(`Pact verification against ${sandbox.url}`);
    expect(res.stdout).toMatch(/target: payments-sandbox \d+\.\d+\.\d+: provider states set up through its control API, in a fresh account \(acc_/);
    expect(res.stdout).toMatch(/pacts\/merchant-client-payments-api\.json {2}merchant-client → payments-api, \d+ interactions \(spec 4\.0\)/);
    expect(res.stdout).toContain('✓ a cashin.paid webhook for a paid BRL Pix transaction');
    expect(res.stdout).toMatch(/Verification PASSED: \d+ interactions verified against/);
    expect(res.stdout).toContain('--secret-key is not used against a payments-sandbox');
  });

  it('fails against a fake answering wrong bodies (exit 1), with a readable report', async () => {
    const res = await verifyCli(['--provider-base-url', stub.url, '--secret-key', 'sk_live_whatever']);
    expect(res.code, res.stdout + res.stderr).toBe(1);
    expect(res.stdout).toContain('target: not a payments-sandbox: provider states are assumed to exist (no --state-setup-url)');
    expect(res.stdout).toContain('✗ a request to create a product');
    expect(res.stdout).toMatch(/Failures:\n {2}1\) merchant-client and payments-api /);
    expect(res.stdout).toMatch(/\$: Actual map is missing the following keys: id/);
    expect(res.stdout).toMatch(/Verification FAILED: \d+ of \d+ interactions failed against http:\/\/127\.0\.0\.1:\d+/);
  });

  it('refuses usage errors with exit 2 before verifying anything', async () => {
    const noKey = await verifyCli(['--provider-base-url', stub.url]);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('is not a payments-sandbox (no GET /_sandbox/health): --secret-key is required');
    const unreachable = await verifyCli(['--provider-base-url', 'http://127.0.0.1:9', '--secret-key', 'k']);
    expect(unreachable.code).toBe(2);
    expect(unreachable.stderr).toContain('cannot reach http://127.0.0.1:9');
    const noPacts = await verifyCli(['--consumer-pacts', join(dir, 'missing')]);
    expect(noPacts.code).toBe(2);
    expect(noPacts.stderr).toContain('no such file or directory');
  });
});

describe('payments-sandbox verify --consumer-pacts', () => {
  it("verifies a merchant's own consumer pacts against an in-process sandbox (exit 0)", async () => {
    const good = join(dir, 'good');
    await writeMerchantPact(good, false);
    expect(readdirSync(good)).toEqual(['acme-shop-payments-api.json']);
    const res = await verifyCli(['--consumer-pacts', good]);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toContain('against an in-process payments-sandbox on a temporary store');
    expect(res.stdout).toContain('acme-shop → payments-api, 2 interactions');
    expect(res.stdout).toContain('✓ acme reads its Pix charge by its order number');
    expect(res.stdout).toContain('Verification PASSED: 2 interactions verified');
  });

  it('fails a merchant pact that expects what the service does not do (exit 1)', async () => {
    const bad = join(dir, 'bad');
    await writeMerchantPact(bad, true);
    const res = await verifyCli(['--consumer-pacts', bad]);
    expect(res.code, res.stdout + res.stderr).toBe(1);
    expect(res.stdout).toContain('✗ acme creates a product');
    expect(res.stdout).toMatch(/acme-shop and payments-api - acme creates a product\n\s+\$\.id: Expected '.+' \(String\) to be an integer/);
    expect(res.stdout).toContain('Verification FAILED: 1 of 2 interactions failed');
  });
});
