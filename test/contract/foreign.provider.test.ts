import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxStates, type StateParams } from '../../src/contract/states.js';
import { TargetApi } from '../../src/contract/target.js';
import { createAccount } from '../helpers/catalog.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { PACT_DIR } from './matchers.js';
import { startDisguisingProxy, verifyInChild, type HttpStub } from './provider-helpers.js';

/**
 * Another implementation of the API (here a sandbox behind a proxy that hides its control
 * API's health check, so the verifier cannot tell): the requests carry --secret-key, the 403
 * interactions --restricted-key, and the provider states go to --state-setup-url, which a
 * merchant implements for their fake. This one sets them up through the hidden sandbox.
 */
let sandbox: TestSandbox;
let disguised: HttpStub;
let setupServer: Server;
let stateSetupUrl: string;
let states: SandboxStates;
const received: string[] = [];

beforeAll(async () => {
  sandbox = await startSandbox();
  disguised = await startDisguisingProxy(sandbox.url);
  states = await SandboxStates.create(new TargetApi(sandbox.url), 'hidden', undefined);
  setupServer = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      const { state, params, action } = JSON.parse(raw) as { state: string; params: StateParams; action: 'setup' | 'teardown' };
      received.push(`${action} ${state}`);
      const work = action === 'setup' ? states.setup(state, params) : states.teardown().then(() => ({}));
      work.then(
        (values) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(values)),
        (error: unknown) => res.writeHead(500).end(String(error)),
      );
    });
  });
  await new Promise<void>((resolve) => setupServer.listen(0, '127.0.0.1', resolve));
  stateSetupUrl = `http://127.0.0.1:${(setupServer.address() as AddressInfo).port}/pact/states`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => setupServer?.close(() => resolve()));
  await disguised?.close();
  await sandbox?.stop();
});

describe('verification of another implementation, states through --state-setup-url', () => {
  it('passes every HTTP interaction, the message ones left out', async () => {
    const { account: restricted } = await createAccount(sandbox, []);
    const result = await verifyInChild({
      providerBaseUrl: disguised.url,
      pacts: [PACT_DIR],
      secretKey: states.account.secretKey,
      restrictedKey: restricted.secretKey,
      stateSetupUrl,
    });
    expect(result.ok, result.report).toBe(true);
    expect(result.target).toBe(`not a payments-sandbox: provider states POSTed to ${stateSetupUrl}`);
    expect(result.outcomes).toHaveLength(62);
    expect(result.notes).toEqual([expect.stringMatching(/^9 message interaction\(s\) left out/)]);
    // The key states stay with the verifier; the data states go to the merchant's endpoint, with teardown.
    expect(received).toContain('setup a product exists');
    expect(received).toContain('teardown a product exists');
    expect(received).toContain('setup a transaction with a filled instruction');
    expect(received.some((r) => r.endsWith('an invalid API key') || r.endsWith('an API key without permissions'))).toBe(false);
  });
});
