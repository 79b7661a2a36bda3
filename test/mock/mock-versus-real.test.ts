import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { OpenAPIRouter, type Operation } from 'openapi-backend';
import type { OpenAPIV3_1 } from 'openapi-types';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorMapper } from '../../src/http/map-errors.js';
import { tooManyRequests } from '../../src/http/rate-limit.js';
import { loadOpenApi } from '../../src/spec/openapi.js';
import type { Transaction, Withdrawal } from '../../src/spec/types.js';
import { StoreUnavailable } from '../../src/store/ports.js';
import { createProduct } from '../helpers/catalog.js';
import { BODIES, PNG, PRODUCT_ID, multipart } from '../helpers/mock-requests.js';
import { boletoBody, copBody, mxnBody, pixBody } from '../helpers/purchases.js';
import { basic, startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { cashOutBody, cashedOut, control, fund } from '../helpers/withdrawals.js';

/**
 * Mock mode answers `Prefer: code=NNN` with what openapi.yaml says of that status
 * (`x-message`); this provokes every documented error status of every operation on a stateful
 * sandbox and checks that the mock's answer is the real one: the same status, the same body
 * (the family's shape, the exact message). What cannot be provoked over HTTP is listed in
 * NOT_PROVOKED_STATUSES with why, and any other status an operation documents without a way to
 * provoke it here fails the test.
 */

type ResponseObject = OpenAPIV3_1.ResponseObject & { 'x-message'?: string };

const ADMIN = 'admin-token-mock-versus-real';
/** Small body limits, the same on both sandboxes: a 413 needs only a few kilobytes. */
const LIMIT = 4096;
const UNKNOWN_TRANSACTION = '999999999';
const UNKNOWN_ACCOUNT = 'acc_00000000-0000-4000-8000-000000000000';
/** Operations whose requests carry the admin token on a sandbox that has one. */
const ADMIN_ACTS: ReadonlySet<string> = new Set(['createAccount', 'resetAccount', 'listUnauthenticatedRequests', 'setAccountRateLimit']);

/** What makes a GET a WebSocket handshake (node:http hands back a refusal as a response). */
const HANDSHAKE = { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' };

/** Statuses not provoked over HTTP here, with why; each operation's is compared another way below. */
const NOT_PROVOKED_STATUSES: ReadonlyMap<number, string> = new Map([
  [503, "the store away, which only a shared store can be over HTTP (test/http/store-outage.test.ts): the x-message is compared with the error stage's own below"],
  [408, "a body trickled past the request timeout (30 s by default), too slow for this suite: test/http/request-timeout.test.ts provokes it in both families and checks the answer's shape"],
  [501, "mock mode's own refusal of a WebSocket handshake, which the stateful sandbox completes: test/mock-app.test.ts checks it"],
  [429, "a drained bucket per operation (these sandboxes limit nothing): test/http/rate-limit.test.ts provokes it in both families, and the x-message is compared with the rate-limit stage's own below"],
]);

interface Sent {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
}

interface Answer {
  status: number;
  body: unknown;
  headers: IncomingHttpHeaders;
}

/** One request over loopback (node:http: a Host header of its own is what provokes the 403). */
function send(base: string, sent: Sent): Promise<Answer> {
  const url = new URL(sent.path, base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, method: sent.method, path: `${url.pathname}${url.search}`, headers: { ...sent.headers, ...(sent.body !== undefined && { 'content-length': String(Buffer.byteLength(sent.body)) }) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const json = (res.headers['content-type'] ?? '').startsWith('application/json');
          resolve({ status: res.statusCode ?? 0, body: json ? (JSON.parse(text) as unknown) : text, headers: res.headers });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(sent.body);
  });
}

interface Route {
  id: string;
  method: string;
  template: string;
  operation: Operation;
  responses: Record<string, ResponseObject>;
}

let routes: Route[];
let real: TestSandbox;
let mock: TestSandbox;
/** What the stateful sandbox holds for the answers that need a state: ids, and a paid charge's payer token per page kind. */
const state = { product: '', paid: '', pending: '', withdrawal: '', delivery: '', pages: {} as Record<string, { id: string; token: string }> };

beforeAll(async () => {
  const document = await loadOpenApi();
  routes = new OpenAPIRouter({ definition: document }).getOperations().map((operation) => ({
    id: operation.operationId ?? '',
    method: operation.method.toUpperCase(),
    template: operation.path,
    operation,
    responses: (operation.responses ?? {}) as Record<string, ResponseObject>,
  }));
  [real, mock] = await Promise.all([
    startSandbox({ adminToken: ADMIN, jsonLimitBytes: LIMIT, imageLimitBytes: LIMIT }),
    startSandbox({ mock: true, jsonLimitBytes: LIMIT, imageLimitBytes: LIMIT }),
  ]);
  const client = real.client;
  state.product = (await createProduct(client, { name: 'Com imagem' })).id;
  const purchase = async (body: Record<string, unknown>, pay: boolean): Promise<string> => {
    const created = await client.post<Transaction>('/transactions/v2/purchase', body);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    if (pay) expect((await client.post(`/_sandbox/transactions/${created.body.id}/pay`, {})).status).toBe(200);
    return created.body.id;
  };
  state.paid = await purchase(pixBody(), true);
  state.pending = await purchase(pixBody(), false);
  const kinds = { checkout: copBody(), boleto: boletoBody(), pix: pixBody(), spei: mxnBody() };
  for (const [kind, body] of Object.entries(kinds)) {
    const id = await purchase(body, true);
    const pages = await client.get<{ token: string }>(`/_sandbox/transactions/${id}/payer-pages`);
    state.pages[kind] = { id, token: pages.body.token };
  }
  await fund(client, 100_000);
  const withdrawal: Withdrawal = await cashedOut(client, cashOutBody({ externalId: 'mock-versus-real-1' }));
  expect((await control(client, withdrawal.id, 'reject')).status).toBe(200);
  state.withdrawal = withdrawal.id;
  // The paid charges had no postbackUrl and the account has no webhook URL: their deliveries had nowhere to go.
  const deliveries = await client.get<{ data: { id: string; status: string }[] }>('/_sandbox/webhooks');
  state.delivery = deliveries.body.data.find((d) => d.status === 'undeliverable')?.id ?? '';
  expect(state.delivery).not.toBe('');
});

afterAll(async () => {
  await Promise.all([real?.stop(), mock?.stop()]);
});

const isPublic = (route: Route): boolean => Array.isArray(route.operation.security) && route.operation.security.length === 0;

function authOf(route: Route, target: TestSandbox): Record<string, string> {
  if (isPublic(route)) return {};
  if (target === real && ADMIN_ACTS.has(route.id)) return { authorization: `Bearer ${ADMIN}` };
  return { authorization: basic(target.config.secretKey) };
}

const jsonBody = (route: Route): boolean => Boolean((route.operation.requestBody as OpenAPIV3_1.RequestBodyObject | undefined)?.content['application/json']);
const multipartBody = (route: Route): boolean => Boolean((route.operation.requestBody as OpenAPIV3_1.RequestBodyObject | undefined)?.content['multipart/form-data']);

/** A path of the template naming nothing either sandbox holds: a product id of the right form, else an id no charge has. */
const unknownPath = (template: string): string =>
  template.replace('{key}', `img_${PRODUCT_ID.slice(4)}.png`).replace('{id}', template.startsWith('/v2/') ? PRODUCT_ID : UNKNOWN_TRANSACTION);

/** A request the operation accepts, to either sandbox. */
function accepted(route: Route, target: TestSandbox, path = unknownPath(route.template)): Sent {
  const headers = authOf(route, target);
  if (multipartBody(route)) {
    const form = multipart(PNG);
    return { method: route.method, path, headers: { ...headers, 'content-type': form.contentType }, body: form.body };
  }
  if (jsonBody(route)) {
    if (!(route.id in BODIES)) throw new Error(`no sample request body for ${route.id}: add one to test/helpers/mock-requests.ts`);
    return { method: route.method, path, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(BODIES[route.id]) };
  }
  return { method: route.method, path, headers };
}

const withBody = (sent: Sent, body: unknown): Sent => ({ ...sent, headers: { ...sent.headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** The 400s documented with an operation's own message, and the bad request that gets it. */
const BAD: Readonly<Record<string, (route: Route) => Sent>> = {
  createPurchase: (route) => withBody(accepted(route, real), { ...(BODIES.createPurchase as object), amount: 1 }),
  createProduct: (route) => withBody(accepted(route, real), { name: '   ' }),
  updateProduct: (route) => withBody(accepted(route, real), { name: '' }),
  createOffer: (route) => withBody(accepted(route, real), { ...(BODIES.createOffer as object), amount: 0 }),
  createCashOut: (route) => withBody(accepted(route, real), { amount: 1_000, pixType: 'CPF', pixKey: '529.982.247-25' }),
};

/** A payer page's button on a charge of its kind already paid, with its link's token. */
const paidPage = (kind: string) => (route: Route): Sent => {
  const page = state.pages[kind];
  if (!page) throw new Error(`no paid ${kind} charge`);
  return accepted(route, real, `${route.template.replace('{id}', page.id)}?token=${page.token}`);
};

/** Each 409 and the state that gets it. */
const CONFLICTS: Readonly<Record<string, (route: Route) => Sent>> = {
  // Paid: it cannot be paid, expired or declined again.
  payTransaction: (route) => accepted(route, real, route.template.replace('{id}', state.paid)),
  expireTransaction: (route) => accepted(route, real, route.template.replace('{id}', state.paid)),
  declineTransaction: (route) => accepted(route, real, route.template.replace('{id}', state.paid)),
  // Never paid: nothing to refund or charge back.
  refundTransaction: (route) => accepted(route, real, route.template.replace('{id}', state.pending)),
  refundPurchase: (route) => accepted(route, real, route.template.replace('{id}', state.pending)),
  chargebackTransaction: (route) => accepted(route, real, route.template.replace('{id}', state.pending)),
  // A second cash-out with the same externalId.
  createCashOut: (route) => withBody(accepted(route, real), cashOutBody({ externalId: 'mock-versus-real-1' })),
  // Rejected: it has ended.
  approveWithdrawal: (route) => accepted(route, real, route.template.replace('{id}', state.withdrawal)),
  rejectWithdrawal: (route) => accepted(route, real, route.template.replace('{id}', state.withdrawal)),
  failWithdrawal: (route) => accepted(route, real, route.template.replace('{id}', state.withdrawal)),
  returnWithdrawal: (route) => accepted(route, real, route.template.replace('{id}', state.withdrawal)),
  replayWebhook: (route) => accepted(route, real, route.template.replace('{id}', state.delivery)),
  // An account that exists, on a sandbox that limits no rates.
  setAccountRateLimit: (route) => accepted(route, real, route.template.replace('{id}', real.running.sandbox.defaultAccount.id)),
  approveCheckout: paidPage('checkout'),
  rejectCheckout: paidPage('checkout'),
  approveBoleto: paidPage('boleto'),
  rejectBoleto: paidPage('boleto'),
  approvePix: paidPage('pix'),
  rejectPix: paidPage('pix'),
  approveSpei: paidPage('spei'),
  rejectSpei: paidPage('spei'),
};
/** How the stateful sandbox is brought to answer a status, or why it is not. */
function provoke(route: Route, status: number): Sent | undefined {
  const ok = accepted(route, real);
  switch (status) {
    case 400:
      return BAD[route.id]?.(route) ?? { ...ok, path: `${ok.path}?unexpected=1` };
    case 401: {
      const { authorization: _dropped, ...headers } = ok.headers ?? {};
      // A WebSocket operation (its 101) authenticates its handshake; a plain GET of it is its 426.
      return { ...ok, headers: '101' in route.responses ? { ...headers, ...HANDSHAKE } : headers };
    }
    case 403:
      return { ...ok, headers: { ...ok.headers, host: 'evil.example' } };
    case 404:
      if (route.id === 'resetAccount') return withBody(ok, { accountId: UNKNOWN_ACCOUNT });
      return ok;
    case 409:
      return CONFLICTS[route.id]?.(route);
    case 413:
      if (multipartBody(route)) {
        const form = multipart(Buffer.alloc(LIMIT + 1));
        return { ...accepted(route, real, route.template.replace('{id}', state.product)), headers: { ...ok.headers, 'content-type': form.contentType }, body: form.body };
      }
      return { ...ok, headers: { ...ok.headers, 'content-type': 'application/json' }, body: JSON.stringify({ padding: 'x'.repeat(LIMIT) }) };
    case 415:
      return { ...ok, headers: { ...ok.headers, 'content-type': 'text/plain' }, body: 'x' };
    case 426:
      return ok;
    default:
      return undefined;
  }
}

/** The same operation asked of the mock: an accepted request (the same path, so that the ids named agree) with `Prefer: code=NNN`. */
function preferred(route: Route, status: number, provoked: Sent): Sent {
  const path = status === 404 ? provoked.path : unknownPath(route.template);
  const sent = accepted(route, mock, path);
  const body = status === 404 && route.id === 'resetAccount' ? JSON.stringify({ accountId: UNKNOWN_ACCOUNT }) : sent.body;
  return { ...sent, body, headers: { ...sent.headers, prefer: `code=${status}` } };
}

describe('mock mode against the stateful sandbox, every operation of openapi.yaml', () => {
  it('answers each documented error status with the status and body the stateful sandbox answers', async () => {
    const mismatches: string[] = [];
    const unprovoked: string[] = [];
    let compared = 0;
    for (const route of routes) {
      for (const status of Object.keys(route.responses).map(Number).filter((s) => s >= 400)) {
        const key = `${route.id} ${status}`;
        const provoked = NOT_PROVOKED_STATUSES.has(status) ? undefined : provoke(route, status);
        if (!provoked) {
          if (!NOT_PROVOKED_STATUSES.has(status)) unprovoked.push(key);
          continue;
        }
        const [fromReal, fromMock] = await Promise.all([send(real.url, provoked), send(mock.url, preferred(route, status, provoked))]);
        compared++;
        expect(fromMock.headers['preference-applied'], key).toBe(`code=${status}`);
        if (fromReal.status !== status) mismatches.push(`${key}: the stateful sandbox answered ${fromReal.status} ${JSON.stringify(fromReal.body)}`);
        else if (JSON.stringify(fromMock.body) !== JSON.stringify(fromReal.body)) mismatches.push(`${key}: mock ${JSON.stringify(fromMock.body)} ≠ real ${JSON.stringify(fromReal.body)}`);
      }
    }
    expect(mismatches).toEqual([]);
    // Every other documented error is provoked: a new one needs its way here, or its reason above.
    expect(unprovoked).toEqual([]);
    expect(compared).toBeGreaterThan(300);
  });

  it('words a rate limit refusal as the rate-limit stage does, for each family', () => {
    const refusal = tooManyRequests({ rateClass: 'write', limit: { perSecond: 1, burst: 1 }, source: 'sandbox', retryAfterMs: 1 }, { who: 'account acc_x', id: 'acc_x' });
    const limited = routes.flatMap((route) => (route.responses['429'] === undefined ? [] : [route.responses['429']['x-message']]));
    expect(limited.length).toBeGreaterThan(50);
    expect(new Set(limited)).toEqual(new Set([refusal.message]));
    expect(refusal.status).toBe(429);
  });

  it('words a store outage as the error stage does, for each family', () => {
    const answer = new ErrorMapper(pino({ level: 'silent' })).answerFor(new StoreUnavailable('connection refused'));
    const unavailable = routes.flatMap((route) => (route.id === 'getHealth' ? [] : [route.responses['503']?.['x-message']]));
    expect(unavailable.length).toBeGreaterThan(60);
    expect(new Set(unavailable)).toEqual(new Set([answer?.message]));
    expect(answer?.status).toBe(503);
  });
});
