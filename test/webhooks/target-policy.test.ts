import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, expectTransactionError } from '../helpers/catalog.js';
import { created, pixBody } from '../helpers/purchases.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { payOk, receiversClosedAfterEach, waitForDelivery } from '../helpers/webhooks.js';

/**
 * Webhook targets (contract v3, Shared use): http(s) only, never link-local or cloud-metadata
 * addresses, narrowed by SANDBOX_WEBHOOK_ALLOW, over HTTP. Nothing here connects anywhere but
 * loopback: forbidden literals are refused where they are given (the connect-time check of
 * names is in connect-lookup.test.ts).
 */
const receiver = receiversClosedAfterEach();

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startSandbox({ instructionDelayMs: 600_000 });
});
afterAll(() => sb.stop());

/** Literal targets no user may name; the URL parser normalises the odd spellings first. */
const FORBIDDEN = [
  'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
  'http://169.254.170.2/v2/credentials',
  'http://[fe80::1]/',
  'http://[fe80::a:b%25eth0]/',
  'http://[fd00:ec2::254]/latest/meta-data/',
  'http://[::ffff:169.254.169.254]/',
  // The same IPv4 hosts in IPv6 spellings a network still delivers to them: NAT64, IPv4-compatible, IPv4-translated.
  'http://[64:ff9b::a9fe:a9fe]/',
  'http://[64:ff9b::169.254.169.254]/',
  'http://[::a9fe:a9fe]/',
  'http://[::169.254.170.2]/',
  'http://[::ffff:0:a9fe:a9fe]/',
  'http://[64:ff9b::6464:64c8]/latest/meta-data/',
  'http://2852039166/',
  'http://0xA9.0xFE.0xA9.0xFE/',
  'http://metadata.google.internal/computeMetadata/v1/',
  'http://METADATA.GOOGLE.INTERNAL./computeMetadata/v1/',
  'http://100.100.100.200/latest/meta-data/',
  'https://168.63.129.16/machine?comp=goalstate',
];

describe('reproductions (issue 22)', () => {
  it('a postbackUrl of 169.254.169.254 (or any link-local / metadata address) is refused where it is given: 400 naming postbackUrl', async () => {
    for (const postbackUrl of FORBIDDEN) {
      const res = await sb.client.post('/transactions/v2/purchase', pixBody({ postbackUrl }));
      expectTransactionError(res, 400, /^postbackUrl /);
    }
  });

  it('a delivery to a target the allow-list refuses is recorded as refused, without posting and without any answer (no port scanner)', async () => {
    const internal = await receiver({ status: 200, body: 'internal-service-secret: hunter2' });
    const dir = await startSandbox({ instructionDelayMs: 600_000 });
    await dir.client.put('/_sandbox/webhook-url', { url: internal.url });
    await dir.running.stop();
    // The operator narrows the targets: URLs stored before are checked when their webhook leaves.
    const narrowed = await startSandbox({ dataFile: dir.config.dataFile, instructionDelayMs: 600_000, webhookAllow: ['hooks.example.com'] });
    try {
      const tx = await created(narrowed.client, pixBody());
      await payOk(narrowed.client, tx.id);
      const delivery = await waitForDelivery(narrowed.client, tx.id, (d) => d.attempts.length > 0, 'an attempt');
      expect(delivery.status).toBe('failed');
      expect(delivery.nextAttemptAt).toBeNull();
      expect(delivery.attempts).toHaveLength(1);
      const [attempt] = delivery.attempts;
      expect(attempt).toMatchObject({ httpStatus: null, responseBody: null });
      expect(attempt!.error).toMatch(/refused by the webhook target policy/);
      expect(attempt!.error).toContain('SANDBOX_WEBHOOK_ALLOW');
      expect(attempt!.error).toContain('switch the account to listeners mode (payments-sandbox listen --take-over');
      expect(JSON.stringify(delivery)).not.toContain('hunter2');
      expect(internal.requests).toHaveLength(0);
    } finally {
      await narrowed.stop();
      await dir.stop().catch(() => undefined);
    }
  });
});

describe('where a URL is given', () => {
  it('an IPv4 link-local address in an IPv6 spelling is refused naming 169.254.0.0/16, not fe80::/10', async () => {
    for (const [postbackUrl, carried] of [
      ['http://[::ffff:169.254.169.254]/', '169.254.169.254'],
      ['http://[64:ff9b::a9fe:a9fe]/', '169.254.169.254'],
      ['http://[::a9fe:a9fe]/', '169.254.169.254'],
    ] as const) {
      const res = await sb.client.post<{ message: string }>('/transactions/v2/purchase', pixBody({ postbackUrl }));
      expectTransactionError(res, 400, /^postbackUrl /);
      expect(res.body.message, postbackUrl).toContain(`the IPv6 form of ${carried}, a link-local address (169.254.0.0/16)`);
      expect(res.body.message, postbackUrl).not.toContain('fe80::/10');
    }
    // A real IPv6 link-local address still names its own range; a metadata address in NAT64 form is a metadata address.
    expect((await sb.client.post<{ message: string }>('/transactions/v2/purchase', pixBody({ postbackUrl: 'http://[fe80::1]/' }))).body.message).toContain('fe80::/10');
    expect((await sb.client.post<{ message: string }>('/transactions/v2/purchase', pixBody({ postbackUrl: 'http://[64:ff9b::6464:64c8]/' }))).body.message).toContain('the IPv6 form of 100.100.100.200, a cloud metadata address');
    // Loopback in those spellings stays a loopback target; :: and ::1 are not IPv4 addresses.
    for (const postbackUrl of ['http://[::ffff:127.0.0.1]:9/', 'http://[::1]:9/']) {
      expect((await sb.client.post('/transactions/v2/purchase', pixBody({ postbackUrl }))).status, postbackUrl).toBe(201);
    }
  });

  it('the account webhook URL (PUT /_sandbox/webhook-url, account creation) refuses the same targets, naming its field', async () => {
    for (const url of FORBIDDEN.slice(0, 4)) {
      expectTransactionError(await sb.client.put('/_sandbox/webhook-url', { url }), 400, /^url /);
      expectTransactionError(await sb.clientFor(undefined).post('/_sandbox/accounts', { webhookUrl: url }), 400, /^webhookUrl /);
    }
    for (const url of ['ftp://example.com/hook', 'file:///etc/passwd', 'gopher://127.0.0.1:6379/_INFO']) {
      expectTransactionError(await sb.client.put('/_sandbox/webhook-url', { url }), 400, /^url /);
      expectTransactionError(await sb.client.post('/transactions/v2/purchase', pixBody({ postbackUrl: url })), 400, /^postbackUrl /);
    }
  });

  it('a target policy refusal carries x-sandbox-code webhook-target-refused, which clients match on; a malformed URL does not', async () => {
    const url = FORBIDDEN[0];
    for (const res of [
      await sb.client.put('/_sandbox/webhook-url', { url }),
      await sb.clientFor(undefined).post('/_sandbox/accounts', { webhookUrl: url }),
      await sb.client.post('/transactions/v2/purchase', pixBody({ postbackUrl: url })),
    ]) {
      expect(res.status).toBe(400);
      expect(res.headers.get('x-sandbox-code')).toBe('webhook-target-refused');
    }
    const malformed = await sb.client.put('/_sandbox/webhook-url', { url: 'ftp://example.com/hook' });
    expect(malformed.status).toBe(400);
    expect(malformed.headers.get('x-sandbox-code')).toBeNull();
  });

  it('loopback, private and public targets stay allowed by default (a sandbox posts to what its users name)', async () => {
    for (const postbackUrl of ['http://127.0.0.1:9/hook', 'http://localhost:9/hook', 'http://10.0.0.5/hook', 'https://merchant.example.com/hook', 'http://[::1]:9/']) {
      expect((await sb.client.post('/transactions/v2/purchase', pixBody({ postbackUrl }))).status, postbackUrl).toBe(201);
    }
  });

  it('SANDBOX_WEBHOOK_ALLOW narrows targets to its hosts and CIDRs', async () => {
    const narrowed = await startSandbox({ instructionDelayMs: 600_000, webhookAllow: ['hooks.example.com', '*.ci.example.com', '127.0.0.0/8'] });
    try {
      for (const postbackUrl of ['https://hooks.example.com/x', 'https://runner-1.ci.example.com/x', 'http://127.0.0.1:9/x', 'http://localhost:9/x']) {
        expect((await narrowed.client.post('/transactions/v2/purchase', pixBody({ postbackUrl }))).status, postbackUrl).toBe(201);
      }
      // A name outside the list may still resolve into one of its CIDRs: it is checked on its address when its webhook leaves.
      expect((await narrowed.client.post('/transactions/v2/purchase', pixBody({ postbackUrl: 'https://example.com/x' }))).status).toBe(201);
      for (const postbackUrl of ['http://10.0.0.5/x', 'http://[::1]:9/x']) {
        expectTransactionError(await narrowed.client.post('/transactions/v2/purchase', pixBody({ postbackUrl })), 400, /^postbackUrl .*SANDBOX_WEBHOOK_ALLOW/);
      }
      expectTransactionError(await narrowed.client.post('/transactions/v2/purchase', pixBody({ postbackUrl: 'http://169.254.169.254/' })), 400, /^postbackUrl 169\.254\.169\.254 is a link-local address/);
    } finally {
      await narrowed.stop();
    }
    const namesOnly = await startSandbox({ webhookAllow: ['hooks.example.com'] });
    try {
      // No CIDR in the list: a name outside it cannot be let through by its address.
      expectTransactionError(await namesOnly.client.put('/_sandbox/webhook-url', { url: 'http://localhost:9/x' }), 400, /^url /);
    } finally {
      await namesOnly.stop();
    }
  });

  it('an allowed name is delivered to once its resolved address passes (localhost → 127.0.0.1 within 127.0.0.0/8)', async () => {
    const hook = await receiver(200);
    const narrowed = await startSandbox({ instructionDelayMs: 600_000, webhookAllow: ['127.0.0.0/8'] });
    try {
      const { client } = await createAccount(narrowed, undefined, { webhookUrl: hook.url.replace('127.0.0.1', 'localhost') });
      const tx = await created(client, pixBody());
      await payOk(client, tx.id);
      const delivery = await waitForDelivery(client, tx.id, (d) => d.status === 'delivered', 'delivered');
      expect(delivery.attempts[0]).toMatchObject({ httpStatus: 200, error: null });
    } finally {
      await narrowed.stop();
    }
  });
});

describe('at start', () => {
  it('a seed file naming a refused target, or an allow-list it cannot read, fails the start with the reason', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sandbox-targets-'));
    try {
      const seedFile = join(dir, 'seed.yaml');
      writeFileSync(seedFile, 'accounts:\n  - id: acc_meta\n    secretKey: sk_test_meta_0001\n    webhookUrl: http://169.254.169.254/latest/meta-data/\n');
      await expect(startSandbox({ dataFile: join(dir, 'a', 'sandbox.json'), seedFile })).rejects.toThrow(
        `seed file ${seedFile}: accounts.0.webhookUrl 169.254.169.254 is a link-local address`,
      );
      await expect(startSandbox({ dataFile: join(dir, 'b', 'sandbox.json'), webhookAllow: ['10.0.0.0/33'] })).rejects.toThrow(/SANDBOX_WEBHOOK_ALLOW: "10.0.0.0\/33"/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
