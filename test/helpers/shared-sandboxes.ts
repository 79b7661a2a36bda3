import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { expect } from 'vitest';
import type { Account } from '../../src/spec/types.js';
import { spawnSandbox, type SandboxProcess } from './process.js';
import { Client } from './sandbox.js';
import { openAccount } from './accounts.js';

/**
 * Sandbox processes sharing one PostgreSQL database (contract v3, "Shared store"): each a real
 * `node dist/bin.js start` like a deployment runs, so a `kill -9` is a real crash. Every one
 * started is killed by `stopAll` (afterAll), whatever the test did.
 */
export interface SharedInstance extends SandboxProcess {
  name: string;
  /** Unauthenticated client (account creation, health). */
  anonymous: Client;
  clientFor(secretKey: string): Client;
  alive(): boolean;
}

/** How an instance is told where the store is: the flag, or the environment variable (both are the wiring's interface). */
export type StoreVia = 'flag' | 'env';

export interface InstanceOptions {
  via?: StoreVia;
  args?: string[];
  env?: Record<string, string>;
}

export class SharedSandboxes {
  readonly instances: SharedInstance[] = [];
  /** A working directory per instance: nothing an instance might write lands in the repository. */
  private readonly dirs: string[] = [];

  constructor(readonly storeUrl: string) {}

  async start(name: string, options: InstanceOptions = {}): Promise<SharedInstance> {
    const dir = mkdtempSync(join(tmpdir(), `sandbox-shared-${name}-`));
    this.dirs.push(dir);
    const via = options.via ?? 'flag';
    const args = [...(via === 'flag' ? ['--store', this.storeUrl] : []), ...(options.args ?? [])];
    const env = { ...(via === 'env' ? { SANDBOX_STORE: this.storeUrl } : {}), ...options.env };
    const proc = await spawnSandbox(args, env, dir);
    let exited = false;
    void proc.exited.then(() => (exited = true));
    const instance: SharedInstance = {
      ...proc,
      name,
      anonymous: new Client(proc.url, undefined),
      clientFor: (key) => new Client(proc.url, key),
      alive: () => !exited && proc.child.exitCode === null && proc.child.signalCode === null,
    };
    this.instances.push(instance);
    return instance;
  }

  /** SIGTERM, then SIGKILL after a grace period; directories removed. Never throws. */
  async stopAll(): Promise<void> {
    await Promise.all(
      this.instances.splice(0).map(async (instance) => {
        if (!instance.alive()) return;
        instance.child.kill('SIGTERM');
        const timer = setTimeout(() => instance.child.kill('SIGKILL'), 10_000);
        await instance.exited;
        clearTimeout(timer);
      }),
    );
    for (const dir of this.dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  }
}

/** GET /_sandbox/health without the spec check: during an outage it is expected to answer outside the 200 schema. */
export async function health(instance: { url: string }): Promise<{ status: number; body: { status?: string; store?: { kind: string; ok: boolean } } }> {
  const res = await fetch(`${instance.url}/_sandbox/health`, { signal: AbortSignal.timeout(5_000) });
  return { status: res.status, body: (await res.json()) as { status?: string; store?: { kind: string; ok: boolean } } };
}

/** Fails unless the instance reports a PostgreSQL store that answers: proof that `--store`/`SANDBOX_STORE` was honoured. */
export async function expectPostgresStore(instance: SharedInstance): Promise<void> {
  const res = await health(instance);
  expect(res.status, `${instance.name} health: ${JSON.stringify(res.body)}`).toBe(200);
  expect(res.body.store, `${instance.name} health: ${JSON.stringify(res.body)}`).toEqual({ kind: 'postgres', ok: true });
}

/** A fresh account created through `instance`, with its key. */
export async function newAccount(instance: SharedInstance, body: Record<string, unknown> = {}): Promise<Account> {
  return (await openAccount(instance.anonymous, { name: 'Shared store shop', ...body })).account;
}

/** One SQL query on the shared database (test-side inspection of jobs and leases). */
export async function sql<T extends pg.QueryResultRow>(url: string, text: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, params)).rows;
  } finally {
    await client.end();
  }
}

/** Polls `probe` until it returns something other than undefined/false; fails at the deadline naming `what`. */
export async function eventually<T>(probe: () => Promise<T | undefined | false>, what: string, timeoutMs: number, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
