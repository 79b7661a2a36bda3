import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RawConnection, requestHead } from '../helpers/raw-http.js';
import { basic, startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { assertMatchesSpec } from '../helpers/spec.js';

/**
 * src/http/request-timeout.ts: a body must arrive whole within the request timeout of its
 * headers (a short one here), however steadily it trickles; past it the request is answered
 * 408 in its endpoint's error shape, and the connection is closed.
 */

const TIMEOUT_MS = 400;

let sb: TestSandbox;
let authorization: string;
beforeAll(async () => {
  sb = await startSandbox({ requestTimeoutMs: TIMEOUT_MS });
  authorization = basic(sb.config.secretKey);
});
afterAll(() => sb.stop());

const open: RawConnection[] = [];
const trickles: NodeJS.Timeout[] = [];
afterEach(() => {
  for (const timer of trickles.splice(0)) clearInterval(timer);
  for (const c of open.splice(0)) c.destroy();
});

/** Sends the headers of a JSON request declaring `length` bytes, then one byte of `body` every 50 ms, never all of it in time. */
async function trickle(path: string, body: string, headers: Record<string, string> = { authorization }): Promise<RawConnection> {
  const c = await RawConnection.open(Number(new URL(sb.url).port));
  open.push(c);
  c.write(requestHead('POST', path, { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }));
  let sent = 0;
  const timer = setInterval(() => {
    if (c.closed || sent >= body.length) return clearInterval(timer);
    c.write(body.charAt(sent++));
  }, 50);
  trickles.push(timer);
  return c;
}

// 200 bytes at 20 a second: 10 s to arrive, far past the timeout.
const productBody = JSON.stringify({ name: 'Slow', description: 'x'.repeat(160) });

describe('the request timeout', () => {
  it('answers a product body trickled past it 408 in the product shape, then closes the connection', async () => {
    const c = await trickle('/v2/products', productBody);
    const answer = await c.answer();
    expect(answer.status).toBe(408);
    const body: unknown = JSON.parse(answer.body);
    expect(body).toEqual({ status: 408, error: 'request body not received in time' });
    await assertMatchesSpec('POST', new URL('/v2/products', sb.url), 408, answer.headers['content-type'] ?? '', body);
    expect(decodeURIComponent(answer.headers['x-sandbox-hint'] ?? '')).toContain(`within ${TIMEOUT_MS} ms of its headers (SANDBOX_REQUEST_TIMEOUT_MS)`);
    expect(answer.headers.connection).toBe('close');
    await c.ended;
    expect(c.closed).toBe(true);
  });

  it('answers a transaction body the same in the transaction shape', async () => {
    const c = await trickle('/transactions/v2/purchase', JSON.stringify({ name: 'Slow', description: 'x'.repeat(200), amount: 15000, paymentMethod: 'PIX' }));
    const answer = await c.answer();
    const body: unknown = JSON.parse(answer.body);
    expect(body).toEqual({ statusCode: 408, message: 'request body not received in time', error: 'Request Timeout' });
    await assertMatchesSpec('POST', new URL('/transactions/v2/purchase', sb.url), 408, answer.headers['content-type'] ?? '', body);
    await c.ended;
  });

  it('ends the connection of a request answered before its body was wanted (401), once the body is late', async () => {
    const c = await trickle('/v2/products', productBody, { authorization: basic('sk_test_nobody') });
    expect((await c.answer()).status).toBe(401);
    // Still trickling after its answer: the connection is ended at the timeout, not when the body is in (10 s).
    await c.ended;
    expect(c.closed).toBe(true);
  });

  it('leaves a body that arrives in time alone, and its connection open', async () => {
    const c = await RawConnection.open(Number(new URL(sb.url).port));
    open.push(c);
    const body = JSON.stringify({ name: 'In time' });
    c.write(requestHead('POST', '/v2/products', { authorization, 'content-type': 'application/json', 'content-length': String(body.length) }));
    c.write(body.slice(0, 5));
    await new Promise((resolve) => setTimeout(resolve, 20));
    c.write(body.slice(5));
    const created = await c.answer();
    expect(created.status).toBe(201);
    // The timer of that request is gone: the connection outlives the timeout, and serves the next request.
    await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS * 2));
    expect(c.closed).toBe(false);
    expect((await c.ask('GET', '/_sandbox/health')).status).toBe(200);
  });
});
