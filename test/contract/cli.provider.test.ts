import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PactV4 } from '@pact-foundation/pact';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STATES } from '../../src/contract/states.js';
import { BIN, ROOT, spawnSandbox, type SandboxProcess } from '../helpers/process.js';
import { expectSample } from '../helpers/samples.js';
import { M, pixCode, productId, timestamp } from './matchers.js';
import { PaymentsClient } from './merchant-client.js';
import { recordedBy } from './recorded.js';
import { startWrongStub, verifyCli, type HttpStub } from './provider-helpers.js';

// eslint-disable-next-line no-control-regex
const ESCAPE = /\u001b\[/;

/** The CLI with extra environment variables (colour settings), from the project root. */
function verifyWithEnv(args: string[], env: Record<string, string>): ReturnType<typeof verifyCli> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'verify', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

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
      await new PaymentsClient(server.url, 'acme', () => recordedBy(pact, server.url)).createProduct({ name: 'Acme anvil' });
    });
  await pact
    .addInteraction()
    .given(STATES.filledTransaction, { currency: 'BRL', paymentMethod: 'PIX', externalId: 'acme-order-1' })
    .uponReceiving('acme reads its Pix charge by its order number')
    .withRequest('GET', '/transactions/acme-order-1', (b) => b.query({ searchBy: 'externalId' }))
    .willRespondWith(200, (b) => b.jsonBody({ externalId: 'acme-order-1', status: 'PENDING', pixCode: pixCode() }))
    .executeTest(async (server) => {
      await fetch(`${server.url}/transactions/acme-order-1?searchBy=externalId`);
      await recordedBy(pact, server.url);
    });
}

describe('payments-sandbox verify --provider-base-url', () => {
  it('passes against a separately started sandbox (exit 0) and says what it verified', { timeout: 120_000 }, async () => {
    // Run from elsewhere: the shipped pacts are found from the package, not from the working directory.
    const res = await verifyCli(['--provider-base-url', sandbox.url, '--secret-key', 'sk_test_sandbox'], dir);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toContain(`Pact verification against ${sandbox.url}`);
    expect(res.stdout).toMatch(/target: payments-sandbox \d+\.\d+\.\d+: provider states set up through its control API, in a fresh account \(acc_/);
    // A summary row per pact file (interactions, passed, failed), nothing per passing interaction.
    expect(res.stdout).toMatch(/pacts\/merchant-client-payments-api\.json +merchant-client → payments-api +4\.0 +(\d+) +\1 +0\n/);
    expect(res.stdout).toMatch(/pacts\/merchant-webhook-handler-payments-api\.json +merchant-webhook-handler → payments-api +4\.0 +9 +9 +0\n/);
    expect(res.stdout).not.toContain('✓');
    expect(res.stdout).not.toContain('Verifying a pact between');
    expect(res.stdout).toMatch(/Verification PASSED: \d+ interactions verified against/);
    expect(res.stdout).toContain('--secret-key is not used against a payments-sandbox');
    // Not a terminal: no escape sequences, neither ours nor Pact's.
    expect(res.stdout).not.toMatch(ESCAPE);
    // Pact's verifier proxy (http-proxy) calls util._extend: its DEP0060 warning is silenced, and only it.
    expect(res.stderr).not.toMatch(/DeprecationWarning|util\._extend|DEP0060/);
    // docs/pact.md shows this report (UPDATE_SAMPLES=1 rewrites it), the pact files relative to the package.
    expectSample('pact verify', res.stdout.replaceAll(ROOT, ''));
  });

  it('fails against a fake answering wrong bodies (exit 1), with a readable report', async () => {
    const res = await verifyCli(['--provider-base-url', stub.url, '--secret-key', 'sk_live_whatever']);
    expect(res.code, res.stdout + res.stderr).toBe(1);
    expect(res.stdout).toContain('target: not a payments-sandbox: provider states are assumed to exist (no --state-setup-url)');
    expect(res.stdout).toMatch(/Failed interactions:\n(  ✗ .+\n)*  ✗ a request to create a product/);
    expect(res.stdout).toMatch(/Failures:\n {2}1\) merchant-client and payments-api /);
    expect(res.stdout).not.toContain('✓');
    expect(res.stdout).not.toMatch(ESCAPE);
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
    const res = await verifyCli(['--consumer-pacts', good, '--verbose']);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toContain('against an in-process payments-sandbox on a temporary store');
    expect(res.stdout).toMatch(/acme-shop-payments-api\.json +acme-shop → payments-api +4\.0 +2 +2 +0\n/);
    // --verbose: Pact's own report first (without its colours off a terminal), every interaction in ours.
    expect(res.stdout).toContain('Verifying a pact between acme-shop and payments-api');
    expect(res.stdout).toContain('✓ acme reads its Pix charge by its order number');
    expect(res.stdout).not.toMatch(ESCAPE);
    expect(res.stdout).toContain('Verification PASSED: 2 interactions verified');
  });

  it('fails a merchant pact that expects what the service does not do (exit 1)', async () => {
    const bad = join(dir, 'bad');
    await writeMerchantPact(bad, true);
    const res = await verifyWithEnv(['--consumer-pacts', bad], { FORCE_COLOR: '1' });
    expect(res.code, res.stdout + res.stderr).toBe(1);
    // FORCE_COLOR paints the verdict; NO_COLOR (below) wins over it.
    expect(res.stdout).toContain('\u001b[31mVerification FAILED');
    expect(res.stdout).toContain('\u001b[31m✗\u001b[39m acme creates a product');
    const plain = await verifyWithEnv(['--consumer-pacts', bad, '--verbose'], { FORCE_COLOR: '1', NO_COLOR: '1' });
    expect(plain.code).toBe(1);
    expect(plain.stdout).toContain('Verifying a pact between acme-shop and payments-api');
    expect(plain.stdout).not.toMatch(ESCAPE);
    const summary = plain.stdout.slice(plain.stdout.indexOf('Pact verification against'));
    expect(summary).toContain('✗ acme creates a product');
    expect(summary).toMatch(/acme-shop and payments-api - acme creates a product\n\s+\$\.id: Expected '.+' \(String\) to be an integer/);
    expect(summary).toContain('Verification FAILED: 1 of 2 interactions failed');
  });
});
