import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Product } from '../../src/spec/types.js';
import { Client } from '../helpers/sandbox.js';
import { spawnSandbox, type SandboxProcess } from '../helpers/process.js';

let dir: string;
const procs: SandboxProcess[] = [];
afterEach(() => {
  for (const p of procs.splice(0)) p.child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

describe('payments-sandbox start seeding flags', () => {
  it('SANDBOX_SEED_FILE seeds an account with a fixed key at start', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sandbox-seedcli-'));
    const seedFile = join(dir, 'fixtures.yaml');
    writeFileSync(seedFile, 'accounts:\n  - id: acc_ci\n    secretKey: sk_test_ci_fixed_key\n    products:\n      - { externalId: P-1, name: Seeded }\n');
    const sb = await spawnSandbox(['--data', join(dir, 'sandbox.json')], { SANDBOX_SEED_FILE: seedFile });
    procs.push(sb);
    const list = await new Client(sb.url, 'sk_test_ci_fixed_key').get<{ data: Product[] }>('/v2/products');
    expect(list.body.data.map((p) => p.externalId)).toEqual(['P-1']);
  });

  it('--seed still sets the mock seed but warns that it is now --mock-seed', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sandbox-seedcli-'));
    const sb = await spawnSandbox(['--mock', '--seed', '7']);
    procs.push(sb);
    expect(sb.output()).toContain('--seed is deprecated');
    expect(sb.output()).toContain('seed 7');
    const renamed = await spawnSandbox(['--mock', '--mock-seed', '8']);
    procs.push(renamed);
    expect(renamed.output()).toContain('seed 8');
    expect(renamed.output()).not.toContain('deprecated');
  });
});
