import { Router } from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Accounts } from '../../src/accounts/accounts.js';
import { systemClock } from '../../src/clock.js';
import { parseResponseValidationMode, resolveConfig, type ResponseValidationMode } from '../../src/config.js';
import { INVALID_HEADER, ResponseValidator } from '../../src/http/response-validation.js';
import type { Endpoints } from '../../src/http/endpoint.js';
import { Routes } from '../../src/http/match.js';
import { createPipeline } from '../../src/http/pipeline.js';
import { RequestLog } from '../../src/http/request-log.js';
import { SharedUse } from '../../src/http/shared-use.js';
import { createHttpServer } from '../../src/http/transport.js';
import { testBudget } from '../helpers/budget.js';
import { loadOpenApi, type OpenApiDocument } from '../../src/spec/openapi.js';
import { EmbeddedRepository } from '../../src/store/embedded/repository.js';
import type { Store } from '../../src/store/store.js';
import { basic, startSandbox } from '../helpers/sandbox.js';

const KEY = 'sk_test_response_validation';

/** Handlers that break the contract on purpose (their types would not let them: hence the cast). */
const BROKEN = {
  // Health's status is the constant "ok" and it has no other fields.
  getHealth: { handle: () => ({ status: 200, json: { status: 'degraded', version: '1', uptimeMs: 1, store: { kind: 'embedded', ok: true } } }) },
  // 202 is not a status getClock documents.
  getClock: { handle: () => ({ status: 202, json: { accountId: 'acc_default', now: new Date().toISOString(), offsetMs: 0 } }) },
  // A JSON body where the spec documents an HTML page.
  getCheckoutPage: { handle: () => ({ status: 200, json: { html: '<p>' } }) },
  // A valid answer: errors and successes that match pass untouched.
  getAutopilot: { handle: () => ({ status: 200, json: { source: 'none', rules: [] } }) },
} as unknown as Endpoints;

interface Harness {
  url: string;
  logs: Array<Record<string, unknown>>;
}

let document: OpenApiDocument;
let servers: Array<{ server: Server; store: Store }> = [];

beforeAll(async () => {
  document = await loadOpenApi();
});

afterEach(async () => {
  for (const { server, store } of servers) {
    await new Promise((resolve) => server.close(resolve));
    await store.close();
  }
  servers = [];
});

/** The sandbox's pipeline and server (src/http/pipeline.ts, transport.ts), with BROKEN handlers. */
async function harness(mode: ResponseValidationMode): Promise<Harness> {
  const logs: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) });
  const repository = await EmbeddedRepository.open({ now: () => systemClock.nowMs(), compactMinBytes: 1 << 30, logger });
  const store = repository.store;
  const accounts = new Accounts({ repository, clock: systemClock });
  await repository.units.run((unit) => accounts.ensureDefault(unit, KEY));
  const pipeline = createPipeline({
    document,
    endpoints: BROKEN,
    accounts,
    adminToken: undefined,
    units: repository.units,
    committed: repository.committed,
    logger,
    requestLog: new RequestLog(10),
    shared: new SharedUse({ host: '127.0.0.1', allowedHosts: undefined, allowedOrigins: [], publicUrl: undefined }),
    jsonLimitBytes: 100,
    validateResponses: mode,
  });
  const server = createHttpServer({ pipeline, people: { routes: () => Router(), owns: () => false }, budget: testBudget() }).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  servers.push({ server, store });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, logs };
}

const get = (h: Harness, path: string, init: RequestInit = {}) =>
  fetch(`${h.url}${path}`, { ...init, headers: { authorization: basic(KEY), ...(init.headers as Record<string, string>) } });

describe('response validation, strict', () => {
  it('replaces a body that does not match its schema with a 500 naming the mismatch, and logs it', async () => {
    const h = await harness('strict');
    const res = await get(h, '/_sandbox/health');
    expect(res.status).toBe(500);
    const body = (await res.json()) as { statusCode: number; message: string };
    expect(body.statusCode).toBe(500);
    expect(body.message).toMatch(/^response does not match openapi\.yaml: getHealth 200: \/status must be equal to one of the allowed values/);
    expect(res.headers.get(INVALID_HEADER)).toMatch(/^getHealth 200: \/status/);
    const logged = h.logs.find((l) => l.level === 50);
    expect(logged).toMatchObject({ operation: 'getHealth', method: 'GET', path: '/_sandbox/health', status: 200 });
    expect(logged?.msg).toMatch(/^response does not match openapi\.yaml: getHealth 200/);
    expect(logged?.errors).toEqual([expect.objectContaining({ instancePath: '/status', keyword: 'enum' })]);
    expect(logged?.body).toBe('{"status":"degraded","version":"1","uptimeMs":1,"store":{"kind":"embedded","ok":true}}');
  });

  it('catches a status the operation does not document', async () => {
    const h = await harness('strict');
    const res = await get(h, '/_sandbox/clock');
    expect(res.status).toBe(500);
    expect(((await res.json()) as { message: string }).message).toBe('response does not match openapi.yaml: getClock does not document status 202');
    expect(h.logs.find((l) => l.level === 50)).toMatchObject({ operation: 'getClock', status: 202, errors: [] });
  });

  it('catches JSON where the spec documents another media type', async () => {
    const h = await harness('strict');
    const res = await fetch(`${h.url}/_sandbox/checkout/100000000`);
    expect(res.status).toBe(500);
    expect(res.headers.get(INVALID_HEADER)).toBe('getCheckoutPage documents status 200 without a JSON body');
  });

  it('lets matching responses through untouched: successes, router errors, unrouted requests, body errors', async () => {
    const h = await harness('strict');
    const cases: Array<[string, RequestInit, number]> = [
      ['/_sandbox/autopilot', {}, 200],
      // 401 from the security handler, in the family shapes.
      ['/v2/products', { headers: { authorization: basic('sk_test_wrong') } }, 401],
      ['/_sandbox/clock', { headers: { authorization: basic('sk_test_wrong') } }, 401],
      // 400 from request validation, 415 from the media-type check.
      ['/v2/products?limit=0', {}, 400],
      ['/v2/products', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' }, 415],
      // No operation: 404 and 405 in their family's error shape.
      ['/v2/nothing', {}, 404],
      ['/_sandbox/nothing', {}, 404],
      ['/v2/products', { method: 'PUT' }, 405],
      // The body stage's 413.
      ['/v2/products', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'x'.repeat(200) }) }, 413],
    ];
    for (const [path, init, status] of cases) {
      const res = await get(h, path, init);
      expect(res.status, path).toBe(status);
      expect(res.headers.get(INVALID_HEADER), path).toBeNull();
      await res.arrayBuffer();
    }
    expect(h.logs.filter((l) => l.level === 50)).toEqual([]);
  });

  it('checks error bodies too: an unrouted error in the wrong shape is caught', () => {
    const validator = new ResponseValidator(document);
    // The operation the match stage found (none for an unrouted path): the validator routes nothing itself.
    const routes = new Routes(document);
    const operationOf = (method: string, path: string) => {
      const matched = routes.match(method, path);
      return typeof matched === 'string' ? undefined : matched;
    };
    const check = (method: string, path: string, status: number, body: unknown) => validator.check(operationOf(method, path), method, path, status, body);
    expect(operationOf('GET', '/v2/nothing')).toBeUndefined();
    expect(check('GET', '/v2/nothing', 404, { status: 404, error: 'no route' })).toBeUndefined();
    expect(check('GET', '/v2/nothing', 404, { statusCode: 404, message: 'no route' })).toMatchObject({
      operationId: undefined,
      reason: "GET /v2/nothing 404: body must have required property 'status'",
    });
    expect(check('GET', '/v2/products/prd_x', 404, { status: 404, error: 'not found' })).toBeUndefined();
    expect(check('GET', '/v2/products/prd_x', 404, { statusCode: 404, message: 'not found' })?.operationId).toBe('getProduct');
    expect(check('GET', '/_sandbox/health', 500, { statusCode: 500, message: 'x', error: 'Internal Server Error' })?.reason).toBe(
      'getHealth does not document status 500',
    );
  });
});

describe('response validation, log', () => {
  it('sends the original body with x-sandbox-response-invalid, and logs it', async () => {
    const h = await harness('log');
    const res = await get(h, '/_sandbox/health');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'degraded', version: '1', uptimeMs: 1, store: { kind: 'embedded', ok: true } });
    expect(res.headers.get(INVALID_HEADER)).toMatch(/^getHealth 200: \/status must be equal to one of the allowed values/);
    expect(h.logs.filter((l) => l.level === 50)).toHaveLength(1);
    const undocumented = await get(h, '/_sandbox/clock');
    expect(undocumented.status).toBe(202);
    expect(undocumented.headers.get(INVALID_HEADER)).toBe('getClock does not document status 202');
  });
});

describe('response validation, off', () => {
  it('checks nothing: a body that does not match goes out as the handler made it, unmarked', async () => {
    const h = await harness('off');
    const res = await get(h, '/_sandbox/health');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'degraded' });
    expect(res.headers.get(INVALID_HEADER)).toBeNull();
    expect((await get(h, '/_sandbox/clock')).status).toBe(202);
    expect(h.logs.filter((l) => l.level === 50)).toEqual([]);
  });

  it('is off by default; the test helper turns strict on for the whole suite', async () => {
    expect(resolveConfig({}).validateResponses).toBe('off');
    const strict = await startSandbox();
    try {
      expect(strict.config.validateResponses).toBe('strict');
    } finally {
      await strict.stop();
    }
  });
});

describe('configuration', () => {
  it('reads the flag and env values', () => {
    expect(parseResponseValidationMode(undefined)).toBe('off');
    expect(parseResponseValidationMode(true)).toBe('log');
    for (const v of ['1', 'true', 'log', 'on', 'LOG']) expect(parseResponseValidationMode(v)).toBe('log');
    for (const v of ['0', 'false', 'off', '']) expect(parseResponseValidationMode(v)).toBe('off');
    expect(parseResponseValidationMode('strict')).toBe('strict');
    expect(() => parseResponseValidationMode('loud')).toThrow(/log, strict or off/);
    expect(resolveConfig({ validateResponses: true }).validateResponses).toBe('log');
    expect(resolveConfig({ mock: true }).inMemory).toBe(true);
    expect(resolveConfig({}).mockSeed).toBe(1);
  });
});
