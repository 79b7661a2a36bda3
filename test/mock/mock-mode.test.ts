import { Router } from 'express';
import type { AddressInfo } from 'node:net';
import { OpenAPIBackend, OpenAPIRouter, type Operation } from 'openapi-backend';
import type { OpenAPIV3_1 } from 'openapi-types';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Accounts } from '../../src/accounts/accounts.js';
import { systemClock } from '../../src/clock.js';
import { createPipeline } from '../../src/http/pipeline.js';
import { RequestLog } from '../../src/http/request-log.js';
import { SharedUse } from '../../src/http/shared-use.js';
import { createHttpServer } from '../../src/http/transport.js';
import { testBudget } from '../helpers/budget.js';
import { createAjv } from '../../src/http/validator.js';
import { MOCK_HEADER, MockResponder } from '../../src/http/mock.js';
import { preferredStatus } from '../../src/mock/prefer.js';
import { loadOpenApi, type OpenApiDocument } from '../../src/spec/openapi.js';
import { EmbeddedRepository } from '../../src/store/embedded/repository.js';
import { basic, startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { expectTransactionError } from '../helpers/catalog.js';
import { assertMatchesSpec } from '../helpers/spec.js';
import { BODIES, PNG, PRODUCT_ID, pathOf } from '../helpers/mock-requests.js';

type ResponseObject = OpenAPIV3_1.ResponseObject;

interface Route {
  method: string;
  template: string;
  operation: Operation;
  responses: Record<string, ResponseObject>;
}

function routes(document: OpenApiDocument): Route[] {
  return new OpenAPIRouter({ definition: document }).getOperations().map((operation) => ({
    method: operation.method.toUpperCase(),
    template: operation.path,
    operation,
    responses: (operation.responses ?? {}) as Record<string, ResponseObject>,
  }));
}

/** The status the mock answers without a preference: first 2xx, else first 3xx, else first sendable one. */
function expectedStatus(responses: Record<string, ResponseObject>): number {
  const codes = Object.keys(responses).map(Number).filter((c) => c >= 200).sort((a, b) => a - b);
  const status = codes.find((c) => c < 300) ?? codes.find((c) => c < 400) ?? codes[0];
  if (status === undefined) throw new Error('no sendable status');
  return status;
}

const jsonSchemaOf = (response: ResponseObject | undefined) => response?.content?.['application/json']?.schema;

let document: OpenApiDocument;
let sb: TestSandbox;
beforeAll(async () => {
  document = await loadOpenApi();
  sb = await startSandbox({ mock: true });
});
afterAll(() => sb.stop());

/** One request for an operation, JSON through the spec-checking client, other media by hand. */
async function call(target: TestSandbox, route: Route, headers: Record<string, string> = {}) {
  const path = pathOf(route.template);
  const operationId = route.operation.operationId ?? '';
  const requestBody = route.operation.requestBody as OpenAPIV3_1.RequestBodyObject | undefined;
  if (requestBody?.content['multipart/form-data']) {
    const form = new FormData();
    form.append('image', new Blob([PNG], { type: 'image/png' }), 'one.png');
    return target.client.request(route.method, path, { raw: form, headers });
  }
  if (requestBody?.content['application/json']) {
    if (!(operationId in BODIES)) throw new Error(`no sample request body for ${operationId}: add one to BODIES`);
    return target.client.request(route.method, path, { body: BODIES[operationId], headers });
  }
  return target.client.request(route.method, path, { headers });
}

const hasJson2xx = (route: Route): boolean => Object.entries(route.responses).some(([s, r]) => /^2\d\d$/.test(s) && jsonSchemaOf(r));

describe('mock mode (--mock)', () => {
  it('answers every JSON operation with its first documented 2xx, generated and valid per openapi.yaml', async () => {
    const json = routes(document).filter(hasJson2xx);
    expect(json.length).toBeGreaterThan(25);
    for (const route of json) {
      // The client checks the status is documented and the body matches its schema; the sandbox itself runs strict.
      const res = await call(sb, route);
      expect(res.status, `${route.method} ${route.template}`).toBe(expectedStatus(route.responses));
      expect(res.headers.get(MOCK_HEADER)).toBe('seed=1');
      expect(res.headers.get('x-sandbox-response-invalid')).toBeNull();
    }
  });

  it('answers the operations without a JSON 2xx too: pages, images, redirects, the event stream over plain HTTP', async () => {
    const others = routes(document).filter((route) => !hasJson2xx(route));
    expect(others.map((r) => r.operation.operationId).sort()).toEqual(
      [
        'approveBoleto',
        'approveCheckout',
        'approvePix',
        'approveSpei',
        'getBoletoPage',
        'getCheckoutPage',
        'getEventStream',
        'getListenStream',
        'getObject',
        'getPixPage',
        'getPixQr',
        'getSpeiPage',
        'rejectBoleto',
        'rejectCheckout',
        'rejectPix',
        'rejectSpei',
      ].sort(),
    );
    for (const route of others) {
      const url = new URL(pathOf(route.template), sb.url);
      const res = await fetch(url, { method: route.method, headers: { authorization: basic(sb.config.secretKey) }, redirect: 'manual' });
      const status = expectedStatus(route.responses);
      expect(res.status, `${route.method} ${route.template}`).toBe(status);
      const documented = route.responses[String(status)];
      const contentType = res.headers.get('content-type') ?? '';
      const body = contentType.startsWith('application/json') ? await res.json() : Buffer.from(await res.arrayBuffer());
      await assertMatchesSpec(route.method, url, res.status, contentType, body);
      const mediaTypes = Object.keys(documented?.content ?? {});
      if (mediaTypes.length > 0) expect(mediaTypes.some((m) => contentType.startsWith(m))).toBe(true);
      if (contentType.startsWith('image/png')) expect((body as Buffer).subarray(1, 4).toString()).toBe('PNG');
      if (status === 303) expect(res.headers.get('location')).toBe(url.pathname.replace(/\/[^/]+$/, ''));
    }
  });

  // Seven seeds over every documented JSON response (a 429 on each limited operation among them): longer than the default timeout on a busy machine.
  it('generates bodies valid for their schema for every documented JSON response, with several seeds', { timeout: 90_000 }, async () => {
    const api = new OpenAPIBackend({ definition: document, quick: true, customizeAjv: (_ajv, options) => createAjv(options) });
    api.init();
    let checked = 0;
    for (const seed of [1, 2, 3, 42, 4010, 65535, 2 ** 31]) {
      const mock = new MockResponder({ seed });
      for (const route of routes(document)) {
        for (const [status, response] of Object.entries(route.responses)) {
          const schema = jsonSchemaOf(response);
          if (!schema) continue;
          const body = mock.body(route.operation.operationId ?? '', Number(status), schema as OpenAPIV3_1.SchemaObject);
          const result = api.validator.validateResponse(body, route.operation.operationId ?? '', Number(status));
          expect(result.errors, `${route.operation.operationId} ${status} seed ${seed}: ${JSON.stringify(body)}`).toBeNull();
          // Health's 503 is a health report (the store unavailable), not an error body.
          if (Number(status) >= 400 && route.operation.operationId !== 'getHealth') expect(body).toMatchObject(route.template.startsWith('/v2/') ? { status: Number(status) } : { statusCode: Number(status) });
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(7 * 100);
  });

  it('respects formats and patterns: ids, timestamps, URLs, e-mails', async () => {
    const product = (await sb.client.get<Record<string, unknown>>(`/v2/products/${PRODUCT_ID}`)).body;
    expect(product.id).toMatch(/^prd_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(product.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const account = (await sb.client.post<Record<string, unknown>>('/_sandbox/accounts', BODIES.createAccount)).body;
    expect(account.id).toMatch(/^acc_/);
    const purchase = (await sb.client.post<Record<string, unknown>>('/transactions/v2/purchase', BODIES.createPurchase)).body;
    expect(['COP', 'ARS', 'BRL', 'MXN']).toContain(purchase.currency);
  });

  it('is stable for a seed, whatever the order of requests, and changes with the seed', async () => {
    const same = await startSandbox({ mock: true });
    const other = await startSandbox({ mock: true, mockSeed: 7 });
    try {
      const paths = [`/v2/products/${PRODUCT_ID}`, '/v2/products', '/transactions/100000000', '/_sandbox/clock'];
      const bodies = async (target: TestSandbox, order: string[]) => {
        const out: Record<string, unknown> = {};
        for (const path of order) out[path] = (await target.client.get(path)).body;
        return out;
      };
      const first = await bodies(sb, paths);
      const again = await bodies(same, [...paths].reverse());
      const seven = await bodies(other, paths);
      expect(again).toEqual(first);
      for (const path of paths) expect(seven[path], path).not.toEqual(first[path]);
      expect((await other.client.get('/_sandbox/clock')).headers.get(MOCK_HEADER)).toBe('seed=7');
    } finally {
      await Promise.all([same.stop(), other.stop()]);
    }
  });

  it('still authenticates: no key or a wrong key is 401, in the family shape', async () => {
    const none = await sb.clientFor(undefined).get(`/v2/products/${PRODUCT_ID}`);
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ status: 401 });
    const wrong = await sb.clientFor('sk_test_wrong').get('/transactions/100000000');
    expect(wrong.status).toBe(401);
    expect(wrong.body).toMatchObject({ statusCode: 401 });
    expect((await sb.clientFor(undefined).get('/_sandbox/health')).status).toBe(200);
  });

  it('still validates requests: 400 naming the field, 415, unknown routes 404', async () => {
    const invalid = await sb.client.post('/v2/products', { name: '' });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toEqual({ status: 400, error: 'name must be 1 to 255 characters long after trimming' });
    const query = await sb.client.get('/v2/products?Active=true');
    expect(query.status).toBe(400);
    const media = await sb.client.post('/transactions/v2/purchase', undefined, { raw: 'amount=1', headers: { 'content-type': 'text/plain' } });
    expect(media.status).toBe(415);
    expect((await sb.client.get('/v2/nothing')).status).toBe(404);
    expect((await sb.client.put('/v2/products', {})).status).toBe(405);
  });

  it('stores nothing: a created product echoes the request, a read of it is another generated product', async () => {
    const created = await sb.client.post<Record<string, unknown>>('/v2/products', { name: 'Produto que não fica', externalId: 'never-stored' });
    expect(created.status).toBe(201);
    // The answer agrees with what was asked, as the service's does…
    expect(created.body).toMatchObject({ name: 'Produto que não fica', externalId: 'never-stored', active: true, imageUrl: null, deletedAt: null });
    // …but nothing is kept: reading it back gives a generated product under that id.
    const read = await sb.client.get<Record<string, unknown>>(`/v2/products/${String(created.body.id)}`);
    expect(read.status).toBe(200);
    expect(read.body.id).toBe(created.body.id);
    expect(read.body.name).not.toBe('Produto que não fica');
    // Another id reads the same generated product, under its own id: there is no state to tell them apart.
    const other = (await sb.client.get<Record<string, unknown>>(`/v2/products/${PRODUCT_ID}`)).body;
    expect({ ...other, id: read.body.id }).toEqual(read.body);
    const listed = await sb.client.get<{ data: Array<{ externalId: unknown }> }>('/v2/products?externalId=never-stored');
    expect(listed.body.data.some((p) => p.externalId === 'never-stored')).toBe(false);
    expect(sb.config.inMemory).toBe(true);
  });

  it('Prefer: code=404 answers the documented 404 instead; an undocumented code is ignored', async () => {
    const missing = await sb.client.get(`/v2/products/${PRODUCT_ID}`, { headers: { prefer: 'code=404' } });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ status: 404, error: `product ${PRODUCT_ID} not found` });
    expect(missing.headers.get('preference-applied')).toBe('code=404');
    // The endpoint's real message, the one integrations match on.
    const unknown = await sb.client.get('/transactions/100000042', { headers: { prefer: 'code=404' } });
    expect(unknown.body).toEqual({ statusCode: 404, message: 'Transaction not found', error: 'Not Found' });
    const conflict = await sb.client.post('/_sandbox/transactions/100000000/pay', {}, { headers: { prefer: 'respond-async, code="409"' } });
    expect(conflict.status).toBe(409);
    expect(conflict.body).toEqual({ statusCode: 409, message: 'Transaction already processed', error: 'Conflict' });
    expect(conflict.headers.get('x-sandbox-hint')).toBe('transaction 100000000 is APPROVED (paid by PIX); only a PENDING transaction can be paid');
    const teapot = await sb.client.get(`/v2/products/${PRODUCT_ID}`, { headers: { prefer: 'code=418' } });
    expect(teapot.status).toBe(200);
    expect(teapot.headers.get('preference-applied')).toBeNull();
    // Request checks come first: a preference never bypasses auth.
    expect((await sb.clientFor(undefined).get(`/v2/products/${PRODUCT_ID}`, { headers: { prefer: 'code=200' } })).status).toBe(401);
  });
});

describe('mock mode, as an integration sees it', () => {
  it('a BRL Pix purchase answers a BRL Pix transaction with its code and the QR of that code', async () => {
    const res = await sb.client.post<Record<string, unknown>>('/transactions/v2/purchase', { ...(BODIES.createPurchase as object), externalId: 'mock-pix-1' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ currency: 'BRL', method: 'PIX', status: 'PENDING', statusReason: null, amount: 15000, externalId: 'mock-pix-1', transactionId: res.body.id });
    expect(String(res.body.pixCode)).toMatch(/^000201/);
    const png = Buffer.from(String(res.body.qrCode), 'base64');
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect(png.length).toBeGreaterThan(200);
    const looked = await sb.client.get<Record<string, unknown>>('/transactions/100000777');
    expect([looked.body.id, looked.body.transactionId]).toEqual(['100000777', '100000777']);
  });

  it('a cash-out echoes its request, a key that does not fit its type is refused as the service refuses it, and a lookup names the withdrawal asked for', async () => {
    const body = { amount: 12_345, pixType: 'EMAIL', pixKey: 'Seller@Example.com', externalId: 'payout-mock-1', postbackUrl: 'http://127.0.0.1:9/payouts' };
    const paid = await sb.client.post<Record<string, unknown>>('/withdraws/cash-out', body);
    expect(paid.status).toBe(201);
    expect(paid.body).toMatchObject({ amount: 12_345, totalAmount: 12_445, pixType: 'EMAIL', receiverPix: 'seller@example.com', externalId: 'payout-mock-1', postbackUrl: 'http://127.0.0.1:9/payouts', status: 'WITHDRAW_REQUEST' });
    const refused = await sb.client.post('/withdraws/cash-out', { amount: 1_000, pixType: 'CPF', pixKey: '529.982.247-25' });
    expectTransactionError(refused, 400, /^Invalid PIX key or account closed$/);
    expect(refused.headers.get('x-sandbox-hint')).toMatch(/CPF key is 11 digits without punctuation/);
    const looked = await sb.client.get<Record<string, unknown>>(`/withdraws/collect/${String(paid.body.id)}`);
    expect(looked.body.withdrawalId).toBe(paid.body.id);
    expect((await sb.client.get<Record<string, unknown>>('/withdraws/collect/payout-mock-1?searchBy=externalId')).body.externalId).toBe('payout-mock-1');
  });

  it("Prefer: code=404 and 409 answer what the stateful sandbox answers in those cases", async () => {
    const real = await startSandbox();
    try {
      const paid = await real.client.post<{ id: string }>('/transactions/v2/purchase', BODIES.createPurchase);
      expect((await real.client.post(`/_sandbox/transactions/${paid.body.id}/pay`, { rail: 'PIX' })).status).toBe(200);
      const headers = (prefer: string) => ({ headers: { prefer } });
      const unknownReal = await real.client.get('/transactions/999999999');
      const unknownMock = await sb.client.get('/transactions/999999999', headers('code=404'));
      expect([unknownMock.status, unknownMock.body]).toEqual([unknownReal.status, unknownReal.body]);
      const againReal = await real.client.post(`/_sandbox/transactions/${paid.body.id}/pay`, {});
      const againMock = await sb.client.post('/_sandbox/transactions/100000000/pay', {}, headers('code=409'));
      expect(againReal.body).toMatchObject({ statusCode: 409, message: 'Transaction already processed' });
      expect(againReal.headers.get('x-sandbox-hint')).toBe(`transaction ${paid.body.id} is APPROVED (paid by PIX); only a PENDING transaction can be paid`);
      expect(againMock.body).toEqual(againReal.body);
      expect(againMock.headers.get('x-sandbox-hint')).toBe(againReal.headers.get('x-sandbox-hint')?.replace(paid.body.id, '100000000'));
    } finally {
      await real.stop();
    }
  });
});

describe('Prefer header parsing', () => {
  it('reads code= among other preferences', () => {
    expect(preferredStatus('code=404')).toBe(404);
    expect(preferredStatus('respond-async, code=409; foo=bar')).toBe(409);
    expect(preferredStatus(['wait=5', 'CODE = "201"'])).toBe(201);
    expect(preferredStatus('example=foo')).toBeUndefined();
    expect(preferredStatus('code=4040')).toBeUndefined();
    expect(preferredStatus(undefined)).toBeUndefined();
  });
});

describe('stateful mode', () => {
  it('answers an operation without a handler from its schema instead of 501', async () => {
    const repository = await EmbeddedRepository.open({ now: () => systemClock.nowMs(), compactMinBytes: 1 << 30, logger: pino({ level: 'silent' }) });
    const store = repository.store;
    const accounts = new Accounts({ repository, clock: systemClock });
    await repository.units.run((unit) => accounts.ensureDefault(unit, 'sk_test_fallback'));
    const pipeline = createPipeline({
      document,
      endpoints: { getHealth: { handle: () => ({ status: 200, json: { status: 'ok', version: 'handled', uptimeMs: 1, store: { kind: 'embedded', ok: true } } }) } },
      accounts,
      adminToken: undefined,
      units: repository.units,
      committed: repository.committed,
      logger: pino({ level: 'silent' }),
      requestLog: new RequestLog(10),
      shared: new SharedUse({ host: '127.0.0.1', allowedHosts: undefined, allowedOrigins: [], publicUrl: undefined }),
      fallback: (operation, req) => new MockResponder({ seed: 1 }).respond(operation, req),
    });
    const server = createHttpServer({ pipeline, people: { routes: () => Router(), owns: () => false }, budget: testBudget() }).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const health = await fetch(`${base}/_sandbox/health`);
      expect(await health.json()).toEqual({ status: 'ok', version: 'handled', uptimeMs: 1, store: { kind: 'embedded', ok: true } });
      expect(health.headers.get(MOCK_HEADER)).toBeNull();
      const url = new URL('/_sandbox/clock', base);
      const clock = await fetch(url, { headers: { authorization: basic('sk_test_fallback') } });
      expect(clock.status).toBe(200);
      expect(clock.headers.get(MOCK_HEADER)).toBe('seed=1');
      await assertMatchesSpec('GET', url, clock.status, clock.headers.get('content-type') ?? '', await clock.json());
      // Request checks still come first.
      expect((await fetch(url)).status).toBe(401);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await store.close();
    }
  });
});
