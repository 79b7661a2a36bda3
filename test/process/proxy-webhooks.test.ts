// Webhooks through `payments-sandbox proxy` as a real process: a sandbox stands for the real
// service (its postbackUrl points at the proxy's /_proxy/webhooks), a loopback receiver for the
// app (--webhooks-to). What the app gets is what the sender sent, byte for byte and header for
// header; the sender gets the app's answer; the signature is checked with --webhook-secret.
import { createHmac } from 'node:crypto';
import { request } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Finding } from '../../src/proxy/check.js';
import type { HarEntry, HarLog } from '../../src/proxy/har.js';
import { createAccount } from '../helpers/catalog.js';
import { spawnProxy, type ProxyProcess } from '../helpers/proxy-process.js';
import { created, pixBody } from '../helpers/purchases.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';
import { payOk, sortedDeep, startReceiver, waitUntil, type Delivery, type ReceivedRequest, type Receiver } from '../helpers/webhooks.js';

interface WebhookLine {
  method: string;
  target: string;
  status: number;
  findings: Finding[];
  webhook: { event: string | null; forwardedTo: string | null };
}

const APP_ANSWER = 'taken by the app';

let sandbox: TestSandbox;
let client: Client;
let webhookSecret: string;
let secretKey: string;
let app: Receiver;
let proxy: ProxyProcess;
let dir: string;
let har: string;
/** Lines of the proxy's stdout read so far. */
let seen = 0;

beforeAll(async () => {
  sandbox = await startSandbox({ instructionDelayMs: 60_000 });
  const opened = await createAccount(sandbox, undefined, { name: 'Loja Proxy' });
  client = opened.client;
  webhookSecret = opened.account.webhookSecret;
  secretKey = opened.account.secretKey;
  app = await startReceiver({ status: 202, body: APP_ANSWER });
  dir = mkdtempSync(join(tmpdir(), 'proxy-webhooks-process-'));
  har = join(dir, 'session.har');
  proxy = await spawnProxy(['--upstream', sandbox.url, '--webhooks-to', app.url, '--webhook-secret', webhookSecret, '--record', har, '--json']);
});
afterAll(async () => {
  proxy.child.kill('SIGTERM');
  await proxy.exited;
  await app.close();
  await sandbox.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The proxy's next line: printed once the webhook is answered and in the HAR file. */
async function nextLine(): Promise<WebhookLine> {
  const lines = await proxy.lines(++seen);
  return JSON.parse(lines[seen - 1] ?? '') as WebhookLine;
}

const harEntries = (): HarEntry[] => (JSON.parse(readFileSync(har, 'utf8')) as HarLog).log.entries;

/** The sandbox's delivery of a transaction once its first attempt is logged. */
const deliveryOf = (transactionId: string): Promise<Delivery> =>
  waitUntil(async () => {
    const res = await client.get<{ data: Delivery[] }>(`/_sandbox/webhooks?transactionId=${transactionId}`);
    const delivery = res.body.data[0];
    return delivery !== undefined && delivery.attempts.length > 0 ? delivery : undefined;
  }, `the delivery of ${transactionId}`, 10_000);

/** The app's request of a delivery, by its x-sandbox-delivery header. */
const appRequestOf = (deliveryId: string): Promise<ReceivedRequest> =>
  waitUntil(() => app.requests.find((r) => r.headers['x-sandbox-delivery'] === deliveryId), `the app's request of ${deliveryId}`, 10_000);

/** The headers of a request as a receiver sees them, less those each hop sets for itself. */
const endToEnd = (headers: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(headers).filter(([name]) => name !== 'host' && name !== 'connection'));

describe('webhooks through payments-sandbox proxy (process)', () => {
  it("forwards a real delivery's exact bytes and headers to --webhooks-to, answers the sender with the app's answer, signature good", async () => {
    const tx = await created(client, pixBody({ externalId: 'proxy-webhook-1', postbackUrl: `${proxy.url}/_proxy/webhooks/cashin?from=sandbox` }));
    await payOk(client, tx.id);
    const line = await nextLine();
    const delivery = await deliveryOf(tx.id);
    const received = await appRequestOf(delivery.id);

    expect(received.method).toBe('POST');
    expect(received.path).toBe('/hook/cashin?from=sandbox');
    expect(received.rawBody).toBe(delivery.request.body);
    expect(endToEnd(received.headers)).toEqual(delivery.attempts[0]?.requestHeaders);
    expect(received.headers.host).toBe(new URL(app.url).host);
    // The sender was answered with the app's answer: status and body.
    expect(delivery.attempts[0]).toMatchObject({ httpStatus: 202, responseBody: APP_ANSWER });
    expect(delivery.status).toBe('delivered');

    expect(line).toMatchObject({ method: 'POST', target: '/_proxy/webhooks/cashin?from=sandbox', status: 202, findings: [], webhook: { event: 'cashin.paid', forwardedTo: `${app.url}/cashin?from=sandbox` } });
    const entry = harEntries().at(-1);
    expect(entry).toMatchObject({ _webhook: true, _findings: [], request: { method: 'POST' }, response: { status: 202, content: { text: APP_ANSWER } } });
    expect(JSON.parse(entry?.request.postData?.text ?? '')).toEqual(JSON.parse(delivery.request.body));
  });

  it('flags a bad signature (the sandbox forging one on purpose) and still forwards the webhook as it came', async () => {
    const rules = await client.put('/_sandbox/faults', { rules: [{ id: 'forged', match: { operation: 'webhook', event: 'cashin.paid' }, action: { badSignature: true }, times: 1 }] });
    expect(rules.status, JSON.stringify(rules.body)).toBe(200);
    const tx = await created(client, pixBody({ externalId: 'proxy-webhook-forged', postbackUrl: `${proxy.url}/_proxy/webhooks` }));
    await payOk(client, tx.id);
    const line = await nextLine();
    const delivery = await deliveryOf(tx.id);
    const received = await appRequestOf(delivery.id);

    expect(line.webhook.event).toBe('cashin.paid');
    expect(line.findings.map((f) => [f.pointer, f.rule])).toEqual([['/header/x-signature', 'signature']]);
    expect(received.headers['x-signature']).toBe(delivery.attempts[0]?.requestHeaders?.['x-signature']);
    expect(received.rawBody).toBe(delivery.request.body);
    expect(harEntries().at(-1)?._findings.map((f) => f.rule)).toEqual(['signature']);
  });

  it('flags a planted schema difference where it was planted, signed right, headers forwarded as sent', async () => {
    const body = { event: 'cashout.success', environment: 'sandbox', payload: { transaction_id: null, withdrawal_id: 'w-1', external_id: null, amount: '10000', end_to_end_id: null, payer: null, receiver: { name: 'Ana', document: '52998224725', ispb: '18236120', institution: 'NU PAGAMENTOS - IP' }, error_message: null } };
    const text = JSON.stringify(sortedDeep(body));
    const headers = { 'content-type': 'application/json', 'x-signature': createHmac('sha256', webhookSecret).update(text).digest('hex'), 'x-trace-id': 'trace-planted-1', 'x-sandbox-event': 'cashout.success' };
    // Sent with node:http, so the headers are exactly these (fetch would add its own).
    const answer = await new Promise<{ status: number; findings: string | undefined; body: string }>((resolve, reject) => {
      const req = request(`${proxy.url}/_proxy/webhooks`, { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(text)) } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, findings: res.headers['x-sandbox-findings'] as string | undefined, body: Buffer.concat(chunks).toString() }));
      });
      req.once('error', reject);
      req.end(text);
    });
    const line = await nextLine();
    expect(answer).toEqual({ status: 202, findings: '1', body: APP_ANSWER });
    expect(line.findings.map((f) => [f.pointer, f.rule])).toEqual([['/body/payload/amount', 'type']]);
    const received = await waitUntil(() => app.requests.find((r) => r.headers['x-trace-id'] === 'trace-planted-1'), 'the planted webhook at the app');
    expect(received.rawBody).toBe(text);
    expect(endToEnd(received.headers)).toEqual({ ...headers, 'content-length': String(Buffer.byteLength(text)) });
  });

  it('has every webhook in the HAR file, marked, and no secret in its text', () => {
    const text = readFileSync(har, 'utf8');
    const log = (JSON.parse(text) as HarLog).log;
    expect(log.version).toBe('1.2');
    const webhooks = log.entries.filter((e) => e._webhook === true);
    expect(webhooks.map((e) => e._findings.map((f) => f.rule))).toEqual([[], ['signature'], ['type']]);
    expect(text).not.toContain(webhookSecret);
    expect(text).not.toContain(secretKey);
  });
});
