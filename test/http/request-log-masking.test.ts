import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '../../src/spec/openapi-types.js';
import { spawnSandbox } from '../helpers/process.js';
import { VALID_CARD, cardBody } from '../helpers/purchases.js';
import { basic, Client, startSandbox, type TestSandbox } from '../helpers/sandbox.js';

type Entry = components['schemas']['RequestLogEntry'];
type Account = components['schemas']['Account'];

/**
 * Issue 22 / contract v3 (Shared use, Secrets): the request log masked only Authorization;
 * Cookie, X-Api-Key, `?key=`, card numbers and CVVs were readable, and the answers of
 * `/_sandbox/accounts` (secret key, webhook secret) sat in the log of whichever account's key
 * created them; at debug level the server log printed new accounts' keys and webhook secrets.
 */

describe('the request log', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ instructionDelayMs: 600_000 });
  });
  afterAll(() => sb.stop());

  const entryOf = async (client: Client, traceId: string | null, unauthenticated = false): Promise<Entry> => {
    const path = unauthenticated ? '/_sandbox/requests/unauthenticated' : '/_sandbox/requests';
    const page = await client.get<{ data: Entry[] }>(`${path}?traceId=${traceId ?? ''}`);
    expect(page.status).toBe(200);
    const [entry] = page.body.data;
    if (!entry) throw new Error(`no entry ${traceId ?? ''}`);
    return entry;
  };

  it("masks the secret key and webhook secret in the answers of /_sandbox/accounts and who-am-I", async () => {
    const made = await sb.client.post<Account>('/_sandbox/accounts', { name: 'masked' });
    expect(made.status).toBe(201);
    const { secretKey, webhookSecret } = made.body;
    const created = await entryOf(sb.client, made.headers.get('x-trace-id'));
    expect(created.responseBody).toMatchObject({ secretKey: `****${secretKey.slice(-4)} (masked)`, webhookSecret: `****${webhookSecret.slice(-4)} (masked)`, name: 'masked' });
    const mine = sb.clientFor(secretKey);
    const me = await mine.get('/_sandbox/account');
    const shown = await entryOf(mine, me.headers.get('x-trace-id'));
    expect(shown.responseBody).toMatchObject({ webhookSecret: `****${webhookSecret.slice(-4)} (masked)` });
    const everything = JSON.stringify([(await sb.client.get('/_sandbox/requests?limit=100')).body, (await mine.get('/_sandbox/requests?limit=100')).body]);
    expect(everything).not.toContain(secretKey);
    expect(everything).not.toContain(webhookSecret);
  });

  it('masks Cookie, Proxy-Authorization, X-Api-Key and query parameters named like key, token or secret', async () => {
    const res = await sb.client.get('/_sandbox/webhooks?limit=2&key=k_0123456789&access_token=t_0123456789&apiSecret=s_0123456789', {
      headers: { cookie: 'sid=cookie-secret-value', 'proxy-authorization': 'Basic cHJveHk6cGFzc3dvcmQ=', 'x-api-key': 'xkey_0123456789' },
    });
    const entry = await entryOf(sb.client, res.headers.get('x-trace-id'));
    expect(entry.query).toEqual({ limit: '2', key: '****6789 (masked)', access_token: '****6789 (masked)', apiSecret: '****6789 (masked)' });
    expect(entry.requestHeaders).toMatchObject({ cookie: 'sid=****', 'proxy-authorization': 'Basic **** (masked)', 'x-api-key': '****6789 (masked)' });
    expect(JSON.stringify(entry)).not.toMatch(/cookie-secret-value|cHJveHk6cGFzc3dvcmQ=|xkey_0123456789|_0123456789/);
  });

  it('masks card numbers (all but the last 4 digits) and CVVs in bodies, whole or cut at 64 KiB', async () => {
    const ok = await sb.client.post('/transactions/v2/purchase', cardBody());
    expect(ok.status).toBe(201);
    const entry = await entryOf(sb.client, ok.headers.get('x-trace-id'));
    expect(entry.requestBody).toMatchObject({ card: { number: '************1111', cvv: '****', holderName: VALID_CARD.holderName } });
    const big = await sb.client.post('/transactions/v2/purchase', cardBody({ padding: 'x'.repeat(70 * 1024) }));
    expect(big.status).toBe(400);
    const cut = await entryOf(sb.client, big.headers.get('x-trace-id'));
    expect(cut.requestBodyTruncated).toBe(true);
    expect(cut.requestBody as string).toContain('"number":"************1111"');
    for (const shown of [entry, cut]) {
      expect(JSON.stringify(shown)).not.toContain(VALID_CARD.number);
      expect(JSON.stringify(shown)).not.toContain(`"${VALID_CARD.cvv}"`);
    }
  });

  it('masks the same in the unauthenticated log', async () => {
    const res = await fetch(`${sb.url}/_sandbox/clock?token=tok_0123456789`, { headers: { authorization: basic('sk_test_not_a_key_9876'), cookie: 'sid=abc-secret' } });
    expect(res.status).toBe(401);
    const entry = await entryOf(sb.client, res.headers.get('x-trace-id'), true);
    expect(entry.query).toEqual({ token: '****6789 (masked)' });
    expect(entry.requestHeaders).toMatchObject({ authorization: 'Basic secret:****9876 (masked)', cookie: 'sid=****' });
  });
});

describe('the server log of the started sandbox', () => {
  it("never shows a secret key or webhook secret, at debug level either", async () => {
    const proc = await spawnSandbox(['--in-memory', '--log-level', 'debug']);
    try {
      const client = new Client(proc.url, 'sk_test_sandbox');
      const made = await client.post<Account>('/_sandbox/accounts', { name: 'logged' });
      expect(made.status).toBe(201);
      const mine = new Client(proc.url, made.body.secretKey);
      await mine.put('/_sandbox/webhook-url', { url: 'http://127.0.0.1:9/hooks' });
      const me = await mine.get<{ webhookSecret: string }>('/_sandbox/account');
      const defaultSecret = (await client.get<{ webhookSecret: string }>('/_sandbox/account')).body.webhookSecret;
      await new Promise((resolve) => setTimeout(resolve, 200));
      // The start banner prints the default key on purpose (contract: Running it); the log lines are the JSON ones.
      const logLines = proc.output().split('\n').filter((line) => line.startsWith('{'));
      expect(logLines.some((line) => line.includes('"msg":"request"') && line.includes('"responseBody"'))).toBe(true);
      for (const secret of ['sk_test_sandbox', made.body.secretKey, me.body.webhookSecret, defaultSecret]) {
        expect(logLines.filter((line) => line.includes(secret))).toEqual([]);
      }
    } finally {
      proc.child.kill('SIGKILL');
      await proc.exited;
    }
  });
});
