/**
 * payments-sandbox/testing: a sandbox for an integration's tests (vitest, jest, node:test), in this
 * process or at a URL, with the helpers a test needs (contract v4, Test kit; docs/testing-kit.md).
 *
 *   const sandbox = await startSandbox();
 *   const shop = await sandbox.account();           // one isolated account per test
 *   // … the app under test creates a purchase with shop.url and shop.secretKey …
 *   await shop.control.pay(tx.id);
 *   const hook = await shop.webhooks.waitFor('cashin.paid');
 *   await sandbox.stop();
 */
import type { ConfigInput } from '../config.js';
import type { components } from '../spec/openapi-types.js';
import { bindAccount, type BindOptions, type BoundAccount, type SandboxAccount } from './account.js';
import { KitHttp, SandboxRequestError } from './http.js';
import nodeModule from 'node:module';

export type { SandboxAccount, Requests, RequestsQuery, RequestLogEntry } from './account.js';
export type { Control, Transaction, Withdrawal, Clock, Balance, WebhookDelivery } from './control.js';
export { SandboxRequestError } from './http.js';
export type { ReceivedWebhook, WebhookMatch, WaitOptions, Webhooks, WebhookBody, WebhookEventName } from './webhooks.js';

export type Permission = components['schemas']['Permission'];
type Account = components['schemas']['Account'];

export interface AccountOptions {
  name?: string;
  permissions?: Permission[];
}

/** A sandbox for tests: its default (or given) account's helpers, more accounts, and a stop. */
export interface TestSandbox extends SandboxAccount {
  /** Creates an isolated account (its own key, webhook secret, clock, data) with the helpers bound to it. */
  account(options?: AccountOptions): Promise<SandboxAccount>;
  /** Closes the kit's listeners, and stops the sandbox when the kit started it. */
  stop(): Promise<void>;
}

export interface StartOptions {
  /** `postgres://…`: keep state in that database (contract v3, Shared store); by default nothing is kept anywhere. */
  store?: string;
  /** The default account's key (default sk_test_sandbox; random when an admin token is given). */
  secretKey?: string;
  /** Guards account creation as on a shared sandbox; the kit sends it when it creates accounts. */
  adminToken?: string;
  /** The sandbox's log level (default silent). */
  logLevel?: string;
  /** Any other setting of the sandbox (src/config.ts), e.g. `{ instructionDelayMs: 0 }`. */
  config?: Omit<ConfigInput, 'port' | 'host' | 'store' | 'inMemory' | 'secretKey' | 'adminToken' | 'logLevel'>;
}

export interface ConnectOptions {
  /** A running sandbox: `http://localhost:4010`, a team's shared one. */
  url: string;
  /** Its admin token, when it has one (SANDBOX_ADMIN_TOKEN): needed to create accounts. */
  adminToken?: string;
  /** Bind the top-level helpers to this account; without it the kit creates an account of its own. */
  secretKey?: string;
}

/**
 * V8's compiled code of the sandbox's modules kept on disk, as the CLI keeps it (src/bin.ts): a
 * later run's first startSandbox() compiles none of them again (~40 ms of a ~230 ms start,
 * docs/benchmarks.md). Node's own cache, under the temp dir, for the rest of this process too;
 * NODE_DISABLE_COMPILE_CACHE=1 turns it off, NODE_COMPILE_CACHE=dir moves it. Not under V8
 * coverage (NODE_V8_COVERAGE: vitest's and c8's), whose counts should come from code compiled
 * in the run.
 */
function cacheCompiledCode(): void {
  if (process.env.NODE_V8_COVERAGE === undefined) nodeModule.enableCompileCache();
}

/**
 * Starts a sandbox in this process on a free port of 127.0.0.1, in memory unless `store` is given,
 * and binds the helpers to its default account. The server modules load only here, so a suite
 * that only connects to a running sandbox never loads them.
 */
export async function startSandbox(options: StartOptions = {}): Promise<TestSandbox> {
  cacheCompiledCode();
  const [{ startServer }, { resolveConfig, parseStore }, { createLogger }] = await Promise.all([import('../server.js'), import('../config.js'), import('../log.js')]);
  const store = parseStore(options.store);
  const config = resolveConfig({
    ...options.config,
    port: 0,
    host: '127.0.0.1',
    store,
    inMemory: store.kind === 'embedded',
    logLevel: options.logLevel ?? 'silent',
    ...(options.secretKey !== undefined && { secretKey: options.secretKey }),
    ...(options.adminToken !== undefined && { adminToken: options.adminToken }),
  });
  // Its account() is a createAccount: validated from the first call as fast as from the later ones.
  const running = await startServer(config, createLogger(config.logLevel), { warmOperations: ['createAccount'] });
  try {
    // In memory, nothing but this process reaches the default account: its listener may wait for
    // first use, and its id and secret are the sandbox's here. On a store other processes share
    // (two kits, `start` on the same database), another listener of it may take a webhook while
    // this one is not connected: connected before it is handed out, as for any sandbox.
    const alone = store.kind === 'embedded' && config.seedFile === undefined;
    const main: BindOptions = alone ? { keepsAttempts: true, known: running.sandbox.defaultAccount } : {};
    return await kit(running.url, options.adminToken, running.sandbox.defaultAccount.secretKey, () => running.stop(), main);
  } catch (error) {
    await running.stop();
    throw error;
  }
}

/** The same helpers against a running sandbox (yours, or a team's shared one); `stop` closes the kit's listeners only. */
export async function connectSandbox(options: ConnectOptions): Promise<TestSandbox> {
  return kit(options.url.replace(/\/+$/, ''), options.adminToken, options.secretKey, async () => undefined);
}

/** `mainBinding`: how the account of `secretKey` is bound (the kit's own sandbox's default account). */
async function kit(url: string, adminToken: string | undefined, secretKey: string | undefined, stopSandbox: () => Promise<void>, mainBinding: BindOptions = {}): Promise<TestSandbox> {
  const admin = new KitHttp(url, adminToken === undefined ? undefined : `Bearer ${adminToken}`);
  const bound: BoundAccount[] = [];
  // Set once one of this kit's listeners has connected: a first connection is costly (~10 ms of
  // code run for the first time), so it waits for an account's first use of webhooks; a later one
  // costs ~1-2 ms, and made in the background as the account is handed out, it spares that
  // account's first webhook a handshake's wait (a test file that used webhooks once uses them again).
  let listened = false;
  let stopping: Promise<void> | undefined;
  const bind = async (key: string, created?: Account, binding: BindOptions = {}): Promise<SandboxAccount> => {
    const b = await bindAccount(url, key, created, { ...binding, connectNow: listened });
    if (stopping) {
      // stop() ran while this account was made: its listener would outlive the kit.
      await b.close();
      throw new Error('the test kit was stopped while an account was being made');
    }
    b.connected.then(
      () => (listened = true),
      () => undefined,
    );
    bound.push(b);
    return b.account;
  };
  let createdInListeners = true;
  const create = async (options: AccountOptions = {}): Promise<SandboxAccount> => {
    // Made in listeners mode, which bindAccount would otherwise set with a call of its own.
    if (createdInListeners) {
      try {
        const created = await admin.call('createAccount', 'POST', '/_sandbox/accounts', { body: { ...options, webhookDelivery: 'listeners' } });
        return await bind(created.secretKey, created);
      } catch (error) {
        // A sandbox of an earlier version (a team's, a container) takes no webhookDelivery at creation: switched after, as before.
        if (!(error instanceof SandboxRequestError && error.status === 400 && /webhookDelivery/.test(error.message))) throw error;
        createdInListeners = false;
      }
    }
    const created = await admin.call('createAccount', 'POST', '/_sandbox/accounts', { body: options });
    return bind(created.secretKey);
  };
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      await Promise.all(bound.splice(0).map((b) => b.close()));
      await stopSandbox();
    })());
  try {
    const main = secretKey === undefined ? await create({ name: 'test-kit' }) : await bind(secretKey, undefined, mainBinding);
    return { ...main, account: create, stop };
  } catch (error) {
    await Promise.all(bound.splice(0).map((b) => b.close()));
    throw error;
  }
}
