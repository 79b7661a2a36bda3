import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookValidator } from '../../src/http/webhook-validation.js';
import { formatExchange } from '../../src/proxy/cli.js';
import type { HarLog } from '../../src/proxy/har.js';
import { FINDINGS_HEADER, startProxy, type Exchange, type RunningProxy } from '../../src/proxy/proxy.js';
import { WebhookChecker, webhookTarget } from '../../src/proxy/webhooks.js';
import { loadOpenApi } from '../../src/spec/openapi.js';
import { closedPortUrl, sortedDeep, startReceiver, type Receiver } from '../helpers/webhooks.js';

const SECRET = 'whsec_proxy_test_0123456789';

/** A cash-in webhook as the contract describes one, in the order given (the sandbox sends it key-sorted). */
const paid = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  event: 'cashin.paid',
  environment: 'sandbox',
  payload: {
    transaction_id: '100000123',
    withdrawal_id: null,
    external_id: 'order-7',
    amount: 15000,
    end_to_end_id: 'E18236120202612031530aB3dE5fG7hJ',
    payer: { name: 'Maria Silva', document: '52998224725', ispb: '18236120', institution: 'NU PAGAMENTOS - IP' },
    receiver: { name: 'Minha Loja', document: '11222333000181' },
    error_message: null,
    ...overrides,
  },
});

const hmac = (text: string, secret = SECRET): string => createHmac('sha256', secret).update(text).digest('hex');

/** A webhook as a sender posts it: the body key-sorted and signed, as the contract says. */
function signed(body: Record<string, unknown>, secret = SECRET): { text: string; headers: Record<string, string> } {
  const text = JSON.stringify(sortedDeep(body));
  return { text, headers: { 'content-type': 'application/json', 'x-signature': hmac(text, secret) } };
}

describe('webhookTarget', () => {
  it('keeps --webhooks-to for /_proxy/webhooks itself and appends the path under it and the query', () => {
    const to = new URL('http://127.0.0.1:3000/hooks/');
    expect(webhookTarget(to, '/_proxy/webhooks').href).toBe('http://127.0.0.1:3000/hooks/');
    expect(webhookTarget(to, '/_proxy/webhooks/cashin/br').href).toBe('http://127.0.0.1:3000/hooks/cashin/br');
    expect(webhookTarget(new URL('http://127.0.0.1:3000/hooks?tenant=7'), '/_proxy/webhooks').href).toBe('http://127.0.0.1:3000/hooks?tenant=7');
    expect(webhookTarget(new URL('http://127.0.0.1:3000'), '/_proxy/webhooks/x?a=1').href).toBe('http://127.0.0.1:3000/x?a=1');
  });
});

describe('WebhookChecker', () => {
  let validator: WebhookValidator;
  beforeAll(async () => {
    validator = new WebhookValidator(await loadOpenApi());
  });

  it('passes a contract webhook, signed, and names its event', () => {
    const { text, headers } = signed(paid());
    expect(new WebhookChecker(validator, SECRET).check(headers, Buffer.from(text))).toEqual({ event: 'cashin.paid', findings: [] });
    // Without the secret the signature is not checked: a wrong one passes the schema's pattern.
    expect(new WebhookChecker(validator, undefined).check({ ...headers, 'x-signature': hmac(text, 'another') }, Buffer.from(text)).findings).toEqual([]);
  });

  it('flags a signature of another secret, and one of the unsorted bytes with what it is', () => {
    const checker = new WebhookChecker(validator, SECRET);
    const { text, headers } = signed(paid());
    expect(checker.check({ ...headers, 'x-signature': hmac(text, 'another') }, Buffer.from(text)).findings).toEqual([
      { side: 'request', operationId: undefined, pointer: '/header/x-signature', rule: 'signature', message: expect.stringMatching(/not the HMAC-SHA256 of the key-sorted body/) as unknown },
    ]);
    const unsorted = JSON.stringify(paid());
    expect(checker.check({ ...headers, 'x-signature': hmac(unsorted) }, Buffer.from(unsorted)).findings.map((f) => [f.pointer, f.rule, f.message])).toEqual([
      ['/header/x-signature', 'signature', expect.stringMatching(/HMAC-SHA256 of the bytes as sent, not of the key-sorted body/)],
    ]);
    // The same unsorted body signed as the contract says is fine: the key-sorted form is what is signed.
    expect(checker.check({ ...headers, 'x-signature': hmac(JSON.stringify(sortedDeep(paid()))) }, Buffer.from(unsorted)).findings).toEqual([]);
  });

  it('flags what is not JSON, and a planted schema difference where it was planted', () => {
    const checker = new WebhookChecker(validator, SECRET);
    expect(checker.check({ 'content-type': 'text/plain', 'x-signature': 'a'.repeat(64) }, Buffer.from('paid')).findings.map((f) => f.rule)).toEqual(['media-type']);
    expect(checker.check({ 'content-type': 'application/json', 'x-signature': 'a'.repeat(64) }, Buffer.from('{"event":')).findings.map((f) => f.rule)).toEqual(['json']);
    const { text, headers } = signed(paid({ amount: '15000' }));
    expect(checker.check(headers, Buffer.from(text)).findings.map((f) => [f.pointer, f.rule])).toEqual([['/body/payload/amount', 'type']]);
  });
});

describe('the proxy at /_proxy/webhooks', () => {
  let upstream: Receiver;
  let dir: string;
  const proxies: RunningProxy[] = [];
  beforeAll(async () => {
    // The upstream the proxy forwards the API to: webhooks never reach it.
    upstream = await startReceiver(200);
    dir = mkdtempSync(join(tmpdir(), 'proxy-webhooks-'));
  });
  afterAll(async () => {
    await Promise.all(proxies.map((p) => p.stop()));
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function proxy(options: { webhooksTo?: string; record?: string }): Promise<{ url: string; exchanges: Exchange[] }> {
    const exchanges: Exchange[] = [];
    const running = await startProxy({
      upstream: new URL(upstream.url),
      webhookSecret: SECRET,
      ...(options.webhooksTo !== undefined && { webhooksTo: new URL(options.webhooksTo) }),
      ...(options.record !== undefined && { record: options.record }),
      onExchange: (e) => exchanges.push(e),
    });
    proxies.push(running);
    return { url: running.url, exchanges };
  }

  it('without --webhooks-to: checks and records the webhook and answers 503, so the sender retries it', async () => {
    const har = join(dir, 'kept.har');
    const { url, exchanges } = await proxy({ record: har });
    const { text, headers } = signed(paid({ amount: -1.5 }));
    const res = await fetch(`${url}/_proxy/webhooks`, { method: 'POST', headers, body: text });
    expect(res.status).toBe(503);
    expect(res.headers.get(FINDINGS_HEADER)).toBe('1');
    expect(((await res.json()) as { message: string }).message).toMatch(/not forwarded: the proxy has no --webhooks-to/);
    expect(exchanges).toHaveLength(1);
    expect(exchanges[0]).toMatchObject({ status: 503, webhook: { event: 'cashin.paid', forwardedTo: null }, error: 'not forwarded: no --webhooks-to' });
    expect(formatExchange(exchanges[0] as Exchange)).toMatch(/^webhook cashin\.paid POST \/_proxy\/webhooks 503 \d+ms ✗ request \/body\/payload\/amount type: .* · not forwarded: no --webhooks-to$/);
    const entry = (JSON.parse(readFileSync(har, 'utf8')) as HarLog).log.entries[0];
    expect(entry).toMatchObject({ _webhook: true, request: { method: 'POST', url: `${url}/_proxy/webhooks` }, response: { status: 503 } });
    expect(entry?._findings.map((f) => f.pointer)).toEqual(['/body/payload/amount']);
    expect(upstream.requests).toHaveLength(0);
  });

  it("forwards to --webhooks-to and answers with the app's answer; an app that is down is a 502 that says so", async () => {
    const app = await startReceiver({ status: 401, body: 'bad signature, says the app' });
    try {
      const { url, exchanges } = await proxy({ webhooksTo: app.url });
      const { text, headers } = signed(paid());
      const res = await fetch(`${url}/_proxy/webhooks/cashin`, { method: 'POST', headers, body: text });
      expect(res.status).toBe(401);
      expect(await res.text()).toBe('bad signature, says the app');
      expect(res.headers.get(FINDINGS_HEADER)).toBeNull();
      expect(app.requests.map((r) => [r.path, r.rawBody])).toEqual([['/hook/cashin', text]]);
      expect(formatExchange(exchanges[0] as Exchange)).toBe(`webhook cashin.paid POST /_proxy/webhooks/cashin 401 ${exchanges[0]?.ms}ms → ${app.url}/cashin ✓`);
    } finally {
      await app.close();
    }
    const down = await proxy({ webhooksTo: await closedPortUrl() });
    const { text, headers } = signed(paid());
    const res = await fetch(`${down.url}/_proxy/webhooks`, { method: 'POST', headers, body: text });
    expect(res.status).toBe(502);
    expect(((await res.json()) as { message: string }).message).toMatch(/\(--webhooks-to\) gave no answer/);
    expect(down.exchanges[0]?.error).toMatch(/^no answer from --webhooks-to: /);
    expect(upstream.requests).toHaveLength(0);
  });

  it('takes POST only at /_proxy/webhooks, and forwards nothing else under /_proxy', async () => {
    const { url, exchanges } = await proxy({});
    const get = await fetch(`${url}/_proxy/webhooks`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect((await fetch(`${url}/_proxy/other`, { method: 'POST', body: '{}' })).status).toBe(404);
    expect(exchanges.map((e) => [e.status, e.webhook === undefined])).toEqual([
      [405, false],
      [404, true],
    ]);
    expect(upstream.requests).toHaveLength(0);
  });
});
