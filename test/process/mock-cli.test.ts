import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BODIES } from '../helpers/mock-requests.js';
import { spawnSandbox, type SandboxProcess } from '../helpers/process.js';
import { Client } from '../helpers/sandbox.js';

let dir: string;
const procs: SandboxProcess[] = [];
afterEach(() => {
  for (const p of procs.splice(0)) p.child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

type Json = Record<string, unknown>;

/** The payer-page links of the transactions the mock lists. */
async function listedLinks(client: Client): Promise<string[]> {
  const list = await client.get<{ data: Json[] }>('/_sandbox/transactions');
  expect(list.status).toBe(200);
  return list.body.data.flatMap((tx) => (typeof tx.redirectUrl === 'string' ? [tx.redirectUrl] : []));
}

describe('payments-sandbox start --mock', () => {
  it('honours --public-url and --pix-expiry, writes nothing under --data, and says so', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sandbox-mockcli-'));
    const data = join(dir, 'data');
    const seedFile = join(dir, 'fixtures.yaml');
    writeFileSync(seedFile, 'accounts: []\n');
    const sb = await spawnSandbox(['--mock', '--data', join(data, 'sandbox.json'), '--public-url', 'https://mock.example.test', '--pix-expiry', '5400000', '--seed-file', seedFile]);
    procs.push(sb);
    const client = new Client(sb.url, 'sk_test_sandbox');
    const pix = (await client.post<Json>('/transactions/v2/purchase', BODIES.createPurchase)).body;
    expect(Date.parse(String(pix.expiresAt)) - Date.parse(String(pix.createdAt))).toBe(5_400_000);
    const links = await listedLinks(client);
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) expect(link.startsWith('https://mock.example.test/_sandbox/checkout/'), link).toBe(true);
    expect(sb.output()).toMatch(/store: none \(mock mode keeps nothing\)/);
    expect(sb.output()).toContain('mock mode keeps no state');
    expect(sb.output()).toContain('--seed-file');
    sb.child.kill('SIGTERM');
    expect(await sb.exited).toBe(0);
    expect(existsSync(data)).toBe(false);
    expect(readdirSync(dir)).toEqual(['fixtures.yaml']);
  });

  it('without --public-url, its links name the port it is bound to', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sandbox-mockcli-'));
    const sb = await spawnSandbox(['--mock', '--in-memory']);
    procs.push(sb);
    const port = new URL(sb.url).port;
    const links = await listedLinks(new Client(sb.url, 'sk_test_sandbox'));
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) expect(link.startsWith(`http://localhost:${port}/_sandbox/checkout/`), link).toBe(true);
  });
});
