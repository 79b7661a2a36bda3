import { basicAuthorization } from '../../src/basic-auth.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { resolveConfig, type Config } from '../../src/config.js';
import { startServer, type RunningSandbox } from '../../src/server.js';
import { assertMatchesSpec } from './spec.js';
import { createTestDatabase } from './shared-postgres.js';
import { dropTestDatabase, onPostgres } from './test-store.js';

export interface Reply<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

export interface TestSandbox {
  url: string;
  dir: string;
  /** The configuration, its secretKey the default account's key in effect (random when an admin token left it unset). */
  config: Config & { secretKey: string };
  running: RunningSandbox;
  /** A client keyed with the default account's secret key. */
  client: Client;
  clientFor(secretKey: string | undefined): Client;
  stop(): Promise<void>;
}

/** Under SANDBOX_TEST_STORE=postgres, the database standing for each data file a test named: a restart on the same file finds its state. */
const databases = new Map<string, Promise<string>>();

/**
 * The database of a data file: made for the first sandbox on it, found again by a later start on
 * the same file (a restart, as with the file itself). `own`: the file was the helper's own temp
 * one, so the database goes when that sandbox stops; one of a file the test named outlives its
 * sandbox, as the file does (the test may look at what was stored; the cluster goes at the end).
 */
async function databaseFor(dataFile: string, named: boolean): Promise<{ url: string; own: boolean; forget(): void }> {
  const known = databases.get(dataFile);
  const url = known ?? createTestDatabase('sandbox');
  if (known === undefined) databases.set(dataFile, url);
  return { url: await url, own: known === undefined && !named, forget: () => databases.delete(dataFile) };
}

/**
 * A sandbox on a free port and a fresh temporary data dir, in this process. With
 * SANDBOX_TEST_STORE=postgres (test/helpers/test-store.ts) its store is a fresh database of the
 * run's cluster instead (dropped when it stops; the same one again for a data file named before),
 * unless the test chose a store or mock mode. Rate limits are off unless the test sets `rateLimit`.
 */
export async function startSandbox(overrides: Partial<Config> = {}): Promise<TestSandbox> {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-test-'));
  const dataFile = overrides.dataFile ?? join(dir, 'sandbox.json');
  const database = onPostgres && overrides.store === undefined && overrides.mock !== true ? await databaseFor(dataFile, overrides.dataFile !== undefined) : undefined;
  const store = database === undefined ? {} : { store: { kind: 'postgres' as const, url: database.url }, inMemory: false };
  // Rate limits off unless the test asks (test/http/rate-limit.test.ts): a suite floods one account on purpose, shared or not.
  const resolved = resolveConfig({ port: 0, dataFile, validateResponses: 'strict', rateLimit: 'off', ...overrides, ...store });
  let running: RunningSandbox;
  try {
    running = await startServer(resolved, pino({ level: 'silent' }));
  } catch (error) {
    if (database?.own) {
      database.forget();
      await dropTestDatabase(database.url);
    }
    throw error;
  }
  const config = { ...resolved, secretKey: running.sandbox.defaultAccount.secretKey };
  const url = running.url;
  const clientFor = (key: string | undefined) => new Client(url, key);
  return {
    url,
    dir,
    config,
    running,
    client: clientFor(config.secretKey),
    clientFor,
    async stop() {
      await running.stop();
      rmSync(dir, { recursive: true, force: true });
      if (database?.own) {
        database.forget();
        await dropTestDatabase(database.url);
      }
    },
  };
}

/** The Authorization header of a secret key: src's one builder. */
export const basic = basicAuthorization;

export interface RequestOptions {
  body?: unknown;
  /** Sent as is, bypassing JSON encoding. */
  raw?: string | Buffer | FormData;
  headers?: Record<string, string>;
}

/** fetch over real HTTP; every answer is checked against openapi.yaml before it is returned. */
export class Client {
  constructor(
    readonly baseUrl: string,
    readonly secretKey: string | undefined,
  ) {}

  async request<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<Reply<T>> {
    const headers: Record<string, string> = {};
    if (this.secretKey !== undefined) headers.authorization = basic(this.secretKey);
    let payload: RequestInit["body"];
    if (options.raw !== undefined) payload = options.raw as RequestInit["body"];
    else if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(options.body);
    }
    Object.assign(headers, options.headers);
    const url = new URL(path, this.baseUrl);
    const res = await fetch(url, { method, headers, body: payload });
    const contentType = res.headers.get('content-type') ?? '';
    const body: unknown = contentType.startsWith('application/json') ? await res.json() : Buffer.from(await res.arrayBuffer());
    await assertMatchesSpec(method, url, res.status, contentType, body);
    return { status: res.status, body: body as T, headers: res.headers };
  }

  get<T = unknown>(path: string, options?: RequestOptions) {
    return this.request<T>('GET', path, options);
  }
  post<T = unknown>(path: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>('POST', path, { ...options, body });
  }
  patch<T = unknown>(path: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>('PATCH', path, { ...options, body });
  }
  put<T = unknown>(path: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>('PUT', path, { ...options, body });
  }
  delete<T = unknown>(path: string, options?: RequestOptions) {
    return this.request<T>('DELETE', path, options);
  }
}
