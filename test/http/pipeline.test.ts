import { Router } from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Accounts, type AccountRecord } from '../../src/accounts/accounts.js';
import { systemClock } from '../../src/clock.js';
import { DomainError } from '../../src/errors.js';
import type { AnyCall as Call, AnyReply } from '../../src/http/call.js';
import type { Endpoints } from '../../src/http/endpoint.js';
import { HttpError } from '../../src/http/errors.js';
import { FaultAnswer, type HttpFaults } from '../../src/http/faults.js';
import { createPipeline, type Pipeline } from '../../src/http/pipeline.js';
import { RequestLog, UNAUTHENTICATED } from '../../src/http/request-log.js';
import type { Exchange } from '../../src/http/request-logging.js';
import { SharedUse } from '../../src/http/shared-use.js';
import { createHttpServer } from '../../src/http/transport.js';
import { testBudget } from '../helpers/budget.js';
import type { Logger } from '../../src/log.js';
import type { OpenApiDocument } from '../../src/spec/openapi.js';
import { EmbeddedRepository } from '../../src/store/embedded/repository.js';
import type { Unit, UnitOfWork } from '../../src/store/ports.js';
import { basic } from '../helpers/sandbox.js';

type OperationHandler = (call: Call) => AnyReply | Promise<AnyReply>;

/**
 * The request pipeline on its own (route → 401 → body → 403 → 415 → 400 → handler → commit → reply),
 * on the sandbox's node:http server, against a small document of its own: each step can be reached directly, and
 * the file runs in well under a second, which is what lets mutation testing cover the router.
 */
const json = (schema: object) => ({ required: true, content: { 'application/json': { schema } } });
const ok = { '200': { description: 'ok' } };
const DOCUMENT = {
  openapi: '3.1.0',
  info: { title: 'router test', version: '1' },
  // The router answers 501 for what its document lists as not emulated, as openapi.yaml does.
  'x-not-emulated': [{ method: 'POST', path: '/transactions/purchase', instead: 'v1 purchase; the sandbox emulates POST /transactions/v2/purchase' }],
  components: {
    securitySchemes: {
      basicAuth: { type: 'http', scheme: 'basic' },
      adminToken: { type: 'http', scheme: 'bearer' },
      apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
    },
  },
  security: [{ basicAuth: [] }],
  paths: {
    '/v2/things': {
      post: {
        operationId: 'createThing',
        'x-permission': 'isInvoiceAvailable',
        requestBody: json({
          type: 'object',
          required: ['name'],
          properties: {
            name: { type: 'string', minLength: 1, 'x-message': 'must be a non-empty text' },
            amount: { type: 'integer', minimum: 100, 'x-exact-message': { minimum: 'Sale value below minimum' } },
            tags: { type: 'object', properties: { color: { type: 'string' } }, unevaluatedProperties: false },
            nest: {},
          },
          unevaluatedProperties: false,
        }),
        responses: ok,
      },
      get: {
        operationId: 'listThings',
        parameters: [{ name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1 } }],
        responses: ok,
      },
    },
    '/v2/things/{id}': {
      get: { operationId: 'getThing', parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }], responses: ok },
    },
    '/v2/things/{id}/image': {
      post: {
        operationId: 'uploadThing',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        requestBody: { required: true, content: { 'multipart/form-data': { schema: { type: 'object', properties: { image: { type: 'string', format: 'binary' } } } } } },
        responses: ok,
      },
    },
    '/transactions/things/{id}': {
      get: { operationId: 'getTxThing', parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }], responses: ok },
    },
    '/open': { get: { operationId: 'openThing', security: [], responses: ok } },
    '/admin': { post: { operationId: 'adminOrKey', security: [{ adminToken: [] }, { basicAuth: [] }], responses: ok } },
    '/both': { get: { operationId: 'adminAndKey', security: [{ adminToken: [], basicAuth: [] }], responses: ok } },
    '/unhandled': { get: { operationId: 'unhandled', responses: ok } },
    '/other': { get: { operationId: 'otherScheme', security: [{ apiKey: [] }], responses: ok } },
  },
} as unknown as OpenApiDocument;

const ADMIN = 'admin-token-1';
const UNAUTHORIZED = 'API key invalid or absent: send Authorization: Basic base64("secret:" + secretKey)';

let server: Server;
let base: string;
/** A second router: no handlers, a fallback, no admin token. */
let fallbackServer: Server;
let fallbackBase: string;
const logged: { obj: Record<string, unknown>; msg: string }[] = [];
const logger = {
  error: (obj: Record<string, unknown>, msg: string) => void logged.push({ obj, msg }),
  warn: () => undefined,
  info: () => undefined,
  debug: () => undefined,
  isLevelEnabled: () => false,
} as unknown as Logger;
let full: AccountRecord;
let reader: AccountRecord;
/** What happened, in order: handler calls, commits, faults. */
const events: string[] = [];
const calls: Call[] = [];
let commitFails = false;
let faultDecision: 'proceed' | 'answer' | 'afterCommit' = 'proceed';
/** The first router's request log. */
const requestLog = new RequestLog(100);

const handler = (reply: (call: Call) => ReturnType<OperationHandler>): OperationHandler => (call) => {
  events.push(`handle ${call.req.path}`);
  calls.push(call);
  return reply(call);
};

const handlers: Record<string, OperationHandler> = {
  createThing: handler((call) => {
    const body = call.body as { name: string };
    if (body.name === 'missing') throw new DomainError('not_found', 'Thing not found', 'no thing has that name in this account');
    if (body.name === 'taken') throw new DomainError('conflict', 'Thing already exists');
    if (body.name === 'odd') throw new DomainError('invalid', 'name is odd');
    if (body.name === 'huge') throw new HttpError(413, 'too large');
    if (body.name === 'crash') throw new TypeError('boom');
    if (body.name === 'hint') throw new DomainError('invalid', 'name is odd', 'não é válido — see the docs');
    // Issue 22: a lone surrogate in a hint made encodeURIComponent throw in the error path.
    if (body.name === 'surrogate') throw new DomainError('not_found', 'Thing not found', 'no thing \ud83d or 😀 here');
    // A header value node refuses (a line break): the reply fails only when it is written.
    if (body.name === 'unwritable') return { status: 201, json: { created: body.name }, headers: { 'x-thing': 'a\nb' } };
    return { status: 201, json: { created: body.name }, headers: { 'x-thing': 'made' } };
  }),
  listThings: handler(async (call) => ({ status: 200, json: { limit: call.query.limit ?? null, admin: call.admin } })),
  getThing: handler((call) => ({ status: 200, bytes: `thing ${call.params.id ?? ''}`, contentType: 'text/plain' })),
  uploadThing: handler(() => ({ status: 200, json: { uploaded: true } })),
  getTxThing: handler((call) => {
    throw new DomainError('not_found', `Transaction ${call.params.id ?? ''} not found`);
  }),
  openThing: handler((call) => ({ status: 303, redirect: `/elsewhere?who=${call.account?.id ?? 'nobody'}` })),
  adminOrKey: handler((call) => ({ status: 200, json: { admin: call.admin, account: call.account?.id ?? null } })),
  adminAndKey: handler((call) => ({ status: 200, json: { admin: call.admin, account: call.account?.id ?? null } })),
  otherScheme: handler(() => ({ status: 200, json: {} })),
};

const faults = {
  async apply(accountId: string, operationId: string, exchange: Exchange) {
    events.push(`fault ${operationId} ${accountId}`);
    if (faultDecision === 'answer') {
      exchange.fault = 'flt_answer';
      throw new FaultAnswer(503, 2, 'answered by the fault');
    }
    if (faultDecision === 'afterCommit') return { kind: 'afterCommit', fire: async () => new FaultAnswer(502, undefined, 'after the commit') };
    return { kind: 'proceed' };
  },
} as unknown as HttpFaults;

async function request(method: string, path: string, options: { key?: string; auth?: string; body?: string; type?: string } = {}) {
  const headers: Record<string, string> = {};
  const auth = options.auth ?? (options.key ? basic(options.key) : undefined);
  if (auth) headers.authorization = auth;
  if (options.type) headers['content-type'] = options.type;
  const res = await fetch(`${base}${path}`, { method, headers, body: options.body, redirect: 'manual' });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return { status: res.status, body, headers: res.headers };
}
const postThing = (body: unknown, key = full.secretKey) => request('POST', '/v2/things', { key, body: JSON.stringify(body), type: 'application/json' });

/**
 * Units of work of an in-memory store, observed: the commit comes when the handler has returned
 * or thrown, and a commit that fails fails the unit.
 */
let repository: EmbeddedRepository;
const units: UnitOfWork = {
  async run<T>(work: (unit: Unit) => Promise<T>): Promise<T> {
    let failure: { error: unknown } | undefined;
    let result: T | undefined;
    try {
      result = await repository.units.run(work);
    } catch (error) {
      failure = { error };
    }
    events.push('commit');
    if (commitFails) throw new Error('ENOSPC: no space left on device');
    if (failure) throw failure.error;
    return result as T;
  },
};

beforeAll(async () => {
  repository = await EmbeddedRepository.open({ now: () => systemClock.nowMs() });
  const accounts = new Accounts({ repository, clock: systemClock });
  full = await repository.units.run((unit) => accounts.create(unit, { name: 'full' }));
  reader = await repository.units.run((unit) => accounts.create(unit, { name: 'reader', permissions: ['createTransaction'] }));
  const shared = new SharedUse({ host: '127.0.0.1', allowedHosts: undefined, allowedOrigins: [], publicUrl: undefined });
  const pipeline = createPipeline({
    document: DOCUMENT,
    // The test document's operations are not openapi.yaml's: the endpoints' types cannot apply.
    endpoints: Object.fromEntries(Object.entries(handlers).map(([id, handle]) => [id, { handle }])) as unknown as Endpoints,
    accounts,
    adminToken: ADMIN,
    units,
    committed: repository.committed,
    logger,
    requestLog,
    shared,
    faults,
  });
  ({ server, base } = await serve(pipeline));

  const fallbackPipeline = createPipeline({
    document: DOCUMENT,
    endpoints: {},
    accounts,
    adminToken: undefined,
    units: { run: (work) => repository.units.run(work) },
    committed: repository.committed,
    logger,
    requestLog: new RequestLog(100),
    shared,
    fallback: (operation) => ({ status: 200, json: { mocked: operation.operationId ?? null } }),
  });
  ({ server: fallbackServer, base: fallbackBase } = await serve(fallbackPipeline));
});

/** The pipeline on the sandbox's own server (src/http/transport.ts), with no pages for people. */
async function serve(pipeline: Pipeline): Promise<{ server: Server; base: string }> {
  const server = createHttpServer({ pipeline, people: { routes: () => Router(), owns: () => false }, budget: testBudget() }).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

afterAll(async () => {
  for (const s of [server, fallbackServer]) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});

beforeEach(() => {
  events.length = 0;
  calls.length = 0;
  commitFails = false;
  faultDecision = 'proceed';
  logged.length = 0;
});

describe('routing', () => {
  it('a path the document does not have is 404 in the family shape, naming method and path', async () => {
    expect(await request('GET', '/v2/nothing', { key: full.secretKey })).toMatchObject({
      status: 404,
      body: { status: 404, error: 'GET /v2/nothing is not emulated by the sandbox: the spec has no such endpoint' },
    });
    expect((await request('GET', '/transactions/nothing/at/all')).body).toEqual({
      statusCode: 404,
      message: 'GET /transactions/nothing/at/all is not emulated by the sandbox: the spec has no such endpoint',
      error: 'Not Found',
    });
    expect(events).toEqual([]);
  });

  it('a path the document has with other methods is 405', async () => {
    expect(await request('DELETE', '/v2/things', { key: full.secretKey })).toMatchObject({
      status: 405,
      body: { status: 405, error: 'DELETE is not allowed on /v2/things' },
    });
  });

  it('a known endpoint of the real service that is not emulated is 501 before anything else', async () => {
    const res = await request('POST', '/transactions/purchase');
    expect(res.status).toBe(501);
    expect(res.body).toMatchObject({ statusCode: 501, error: 'Not Implemented' });
    expect((res.body as { message: string }).message).toMatch(/^POST \/transactions\/purchase is not emulated by the sandbox \(/);
  });

  it('a path with a bad percent escape names nothing: 404, not a 500', async () => {
    expect(await request('GET', '/v2/things/%E0%A4%A', { key: full.secretKey })).toMatchObject({
      status: 404,
      body: { status: 404, error: 'no route for GET /v2/things/%E0%A4%A' },
    });
  });

  it('with a fallback, an operation without a handler is answered by it, after the same checks', async () => {
    const res = await fetch(`${fallbackBase}/v2/things?limit=3`, { headers: { authorization: basic(full.secretKey) } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ mocked: 'listThings' });
    expect((await fetch(`${fallbackBase}/v2/things`)).status).toBe(401);
  });

  it('an operation without a handler is 501 naming its route', async () => {
    expect(await request('GET', '/unhandled', { key: full.secretKey })).toMatchObject({
      status: 501,
      body: { statusCode: 501, message: 'GET /unhandled is not emulated by this version of the sandbox yet', error: 'Not Implemented' },
    });
  });
});

describe('authentication and authorization', () => {
  it('no key, a wrong key or another scheme is 401 in the family shape (transaction 401s have no error field)', async () => {
    for (const auth of [undefined, basic('sk_wrong'), `Bearer ${full.secretKey}`, 'Basic', `Basic ${Buffer.from(`user:${full.secretKey}`).toString('base64')}`]) {
      const product = await request('GET', '/v2/things', { auth });
      // Exactly the framework's word, which integrations match; the explanation in the hint.
      expect(product).toMatchObject({ status: 401, body: { status: 401, error: 'Unauthorized' } });
      // Each mistake named before what to send (src/http/authenticate.ts unauthorizedHint); without a header, just what to send.
      const hint = auth === undefined ? UNAUTHORIZED : expect.stringMatching(/^API key invalid or absent: .+; send Authorization: Basic base64\("secret:" \+ secretKey\)$/);
      expect(product.headers.get('x-sandbox-hint')).toEqual(hint);
      const transaction = await request('GET', '/transactions/things/1', { auth });
      expect(transaction.status).toBe(401);
      expect(transaction.body).toEqual({ statusCode: 401, message: 'Unauthorized' });
      expect(transaction.headers.get('x-sandbox-hint')).toEqual(hint);
    }
    expect(events).toEqual([]);
  });

  it('a key without the operation\'s x-permission is 403 naming it, before the body is looked at', async () => {
    const res = await request('POST', '/v2/things', { key: reader.secretKey, body: 'not json at all', type: 'text/plain' });
    expect(res).toMatchObject({ status: 403, body: { status: 403, error: 'Forbidden' } });
    expect(res.headers.get('x-sandbox-hint')).toBe('API key lacks the permission isInvoiceAvailable');
    // The same key may call operations without a permission.
    expect((await request('GET', '/v2/things', { key: reader.secretKey })).status).toBe(200);
  });

  it('security: [] needs nothing, and still tells the handler who called', async () => {
    const anonymous = await request('GET', '/open');
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get('location')).toBe('/elsewhere?who=nobody');
    expect((await request('GET', '/open', { key: full.secretKey })).headers.get('location')).toBe(`/elsewhere?who=${full.id}`);
  });

  it('alternative requirements: the admin token or a key; a wrong token alone is 401', async () => {
    expect((await request('POST', '/admin', { auth: `Bearer ${ADMIN}` })).body).toEqual({ admin: true, account: null });
    expect((await request('POST', '/admin', { key: full.secretKey })).body).toEqual({ admin: false, account: full.id });
    expect((await request('POST', '/admin', { auth: 'Bearer not-the-token' })).status).toBe(401);
    expect((await request('POST', '/admin')).status).toBe(401);
  });

  it('a scheme the sandbox does not implement is never satisfied, not even by the admin token', async () => {
    expect((await request('GET', '/other', { auth: `Bearer ${ADMIN}` })).status).toBe(401);
    expect((await request('GET', '/other', { key: full.secretKey })).status).toBe(401);
  });

  it('without an admin token configured, no Bearer token is one', async () => {
    const res = await fetch(`${fallbackBase}/admin`, { method: 'POST', headers: { authorization: 'Bearer anything' } });
    expect(res.status).toBe(401);
  });

  it('one requirement naming two schemes needs both', async () => {
    expect((await request('GET', '/both', { auth: `Bearer ${ADMIN}` })).status).toBe(401);
    expect((await request('GET', '/both', { key: full.secretKey })).status).toBe(401);
  });

  it('files an authenticated request under its account for the request log', async () => {
    await request('GET', '/v2/things?limit=2', { key: full.secretKey });
    const entry = (await requestLog.list(full.id, { path: '/v2/things' })).data[0];
    expect(entry).toMatchObject({ method: 'GET', path: '/v2/things', query: { limit: '2' }, status: 200 });
    // Without a key: no account to file it under, and not a 401.
    const opened = async (): Promise<number> => (await requestLog.list(full.id, { path: '/open' })).data.length;
    const before = await opened();
    expect((await request('GET', '/open')).status).toBe(303);
    expect(await opened()).toBe(before);
    expect((await requestLog.list(UNAUTHENTICATED, { path: '/open' })).data).toEqual([]);
  });
});

describe('media type and validation', () => {
  it('a JSON operation refuses another media type with 415, and takes JSON with parameters or a +json suffix', async () => {
    const form = await request('POST', '/v2/things', { key: full.secretKey, body: 'name=x', type: 'application/x-www-form-urlencoded' });
    expect(form).toMatchObject({ status: 415, body: { status: 415, error: 'Content-Type must be application/json' } });
    const near = await request('POST', '/v2/things', { key: full.secretKey, body: '{"name":"x"}', type: 'application/jsonx' });
    expect(near.status).toBe(415);
    const charset = await request('POST', '/v2/things', { key: full.secretKey, body: '{"name":"a"}', type: 'application/json; charset=utf-8' });
    expect(charset.status).toBe(201);
    const suffixed = await request('POST', '/v2/things', { key: full.secretKey, body: '{"name":"b"}', type: 'application/merchant+json' });
    expect(suffixed.status).toBe(201);
  });

  it('a JSON operation without a body is a 400 of validation, not a 415', async () => {
    expect(await request('POST', '/v2/things', { key: full.secretKey })).toMatchObject({ status: 400, body: { status: 400, error: 'request body is required' } });
  });

  it('the media type is read from the start of Content-Type, and a streamed (chunked) body counts as a body', async () => {
    const prefixed = await request('POST', '/v2/things', { key: full.secretKey, body: '{"name":"a"}', type: 'text/application/json' });
    expect(prefixed.status).toBe(415);
    const chunked = await fetch(`${base}/v2/things`, {
      method: 'POST',
      headers: { authorization: basic(full.secretKey), 'content-type': 'text/plain' },
      body: new Blob(['name=a']).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(415);
    expect(await chunked.json()).toEqual({ status: 415, error: 'Content-Type must be application/json' });
  });

  it('multipart is recognised with or without parameters, and only as the whole media type', async () => {
    const upload = (type: string) => request('POST', '/v2/things/t1/image', { key: full.secretKey, body: '--x--', type });
    expect((await upload('multipart/form-data')).status).toBe(200);
    expect((await upload('multipart/form-data ; boundary=x')).status).toBe(200);
    expect((await upload('multipart/form-datax')).status).toBe(415);
    expect((await upload('text/multipart/form-data')).status).toBe(415);
  });

  it('a multipart operation refuses JSON with 415', async () => {
    const res = await request('POST', '/v2/things/t1/image', { key: full.secretKey, body: '{}', type: 'application/json' });
    expect(res).toMatchObject({ status: 415, body: { status: 415, error: 'Content-Type must be multipart/form-data' } });
    const form = new FormData();
    form.append('image', new Blob([Buffer.from('GIF89a')], { type: 'image/gif' }), 'a.gif');
    const upload = await fetch(`${base}/v2/things/t1/image`, { method: 'POST', headers: { authorization: basic(full.secretKey) }, body: form });
    expect(upload.status).toBe(200);
  });

  it('a schema failure is 400 with the field and the rule; an exact message goes in message, the explanation in x-sandbox-hint', async () => {
    expect((await postThing({ name: '' })).body).toEqual({ status: 400, error: 'name must be a non-empty text' });
    expect((await postThing({ name: 'a', colour: 'red' })).body).toEqual({ status: 400, error: 'colour is not an allowed field' });
    const exact = await postThing({ name: 'a', amount: 5 });
    expect(exact.body).toEqual({ status: 400, error: 'Sale value below minimum' });
    expect(exact.headers.get('x-sandbox-hint')).toBe('amount must be >= 100');
    expect((await postThing({ name: 'a', amount: 500 })).headers.get('x-sandbox-hint')).toBeNull();
    expect(events).toEqual(['fault createThing ' + full.id, 'fault createThing ' + full.id, 'fault createThing ' + full.id, 'fault createThing ' + full.id, `handle /v2/things`, 'commit']);
  });

  it('a field named like a member of Object.prototype is refused like any unknown field, at any depth', async () => {
    const res = await request('POST', '/v2/things', { key: full.secretKey, body: '{"name":"a","constructor":1}', type: 'application/json' });
    expect(res.body).toEqual({ status: 400, error: 'constructor is not an allowed field' });
    const nested = await request('POST', '/v2/things', { key: full.secretKey, body: '{"name":"a","tags":{"toString":"x"}}', type: 'application/json' });
    expect(nested.body).toEqual({ status: 400, error: 'tags.toString is not an allowed field' });
    expect(calls).toEqual([]);
  });

  it('numbers JSON cannot keep are refused naming the field', async () => {
    const res = await request('POST', '/v2/things', { key: full.secretKey, body: '{"name":"a","amount":1e999}', type: 'application/json' });
    expect(res.body).toEqual({ status: 400, error: 'amount is a number JSON cannot keep (too large, e.g. 1e999)' });
  });

  it('query and path parameters reach the handler coerced to their schema types', async () => {
    expect((await request('GET', '/v2/things?limit=7', { key: full.secretKey })).body).toEqual({ limit: 7, admin: false });
    expect((await request('GET', '/v2/things?limit=zero', { key: full.secretKey })).status).toBe(400);
    const thing = await request('GET', '/v2/things/t%20one', { key: full.secretKey });
    expect(thing).toMatchObject({ status: 200, body: 'thing t one' });
    expect(thing.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(calls.at(-1)?.account?.id).toBe(full.id);
  });
});

describe('bodies the store could not keep', () => {
  const nested = (levels: number): string => '['.repeat(levels) + ']'.repeat(levels);

  it('a field nested deeper than 64 levels is 400 naming it; one level less passes that check', async () => {
    const deep = await request('POST', '/v2/things', { key: full.secretKey, body: `{"name":"a","nest":${nested(64)}}`, type: 'application/json' });
    expect(deep.body).toEqual({ status: 400, error: 'nest is nested deeper than 64 levels' });
    const fits = await request('POST', '/v2/things', { key: full.secretKey, body: `{"name":"a","nest":${nested(63)}}`, type: 'application/json' });
    expect(fits).toMatchObject({ status: 201, body: { created: 'a' } });
    const scalars = await request('POST', '/v2/things', { key: full.secretKey, body: `{"name":"a","nest":[null,1,"x",{"a":null}]}`, type: 'application/json' });
    expect(scalars.status).toBe(201);
  });

  it('a body that is itself too deep is named "body"', async () => {
    const res = await request('POST', '/v2/things', { key: full.secretKey, body: nested(70), type: 'application/json' });
    expect(res.body).toEqual({ status: 400, error: 'body is nested deeper than 64 levels' });
  });
});

describe('handling and the durability barrier', () => {
  it('a reply leaves after the commit, with the handler\'s headers; the handler sees the validated body', async () => {
    const res = await postThing({ name: 'widget', tags: { color: 'blue' } });
    expect(res).toMatchObject({ status: 201, body: { created: 'widget' } });
    expect(res.headers.get('x-thing')).toBe('made');
    expect(events).toEqual([`fault createThing ${full.id}`, 'handle /v2/things', 'commit']);
    expect(calls[0]?.body).toEqual({ name: 'widget', tags: { color: 'blue' } });
    expect(calls[0]?.admin).toBe(false);
  });

  it('domain errors map to 404 / 409 / 400 in the family shape, after a commit (the handler may have changed state)', async () => {
    const missing = await postThing({ name: 'missing' });
    expect(missing).toMatchObject({ status: 404, body: { status: 404, error: 'Thing not found' } });
    expect(missing.headers.get('x-sandbox-hint')).toBe('no thing has that name in this account');
    expect(await postThing({ name: 'taken' })).toMatchObject({ status: 409, body: { status: 409, error: 'Thing already exists' } });
    expect(await postThing({ name: 'odd' })).toMatchObject({ status: 400, body: { status: 400, error: 'name is odd' } });
    expect(await postThing({ name: 'huge' })).toMatchObject({ status: 413, body: { status: 413, error: 'too large' } });
    expect(events.filter((e) => e === 'commit')).toHaveLength(4);
    expect(await request('GET', '/transactions/things/42', { key: full.secretKey })).toMatchObject({
      status: 404,
      body: { statusCode: 404, message: 'Transaction 42 not found', error: 'Not Found' },
    });
  });

  it('a hint with characters a header cannot carry is percent-escaped, not dropped', async () => {
    const res = await postThing({ name: 'hint' });
    expect(res.status).toBe(400);
    expect(res.headers.get('x-sandbox-hint')).toBe(`n${encodeURIComponent('ã')}o ${encodeURIComponent('é')} v${encodeURIComponent('á')}lido ${encodeURIComponent('—')} see the docs`);
  });

  it('a hint with a lone surrogate is answered (its half as U+FFFD), not an unhandled rejection that ends the process', async () => {
    const res = await postThing({ name: 'surrogate' });
    expect(res).toMatchObject({ status: 404, body: { status: 404, error: 'Thing not found' } });
    expect(res.headers.get('x-sandbox-hint')).toBe('no thing %EF%BF%BD or %F0%9F%98%80 here');
    expect(logged).toEqual([]);
  });

  // A handler that throws, and a reply that fails only as it is written at the end of the turn.
  it.each([
    { failure: 'an unexpected error', name: 'crash', error: { message: 'boom' } },
    { failure: 'a reply that fails as it is written', name: 'unwritable', error: { code: 'ERR_INVALID_CHAR' } },
  ])('$failure is a 500 in the family shape, never a crash, and is logged with the request', async ({ name, error }) => {
    expect(await postThing({ name })).toMatchObject({
      status: 500,
      body: { status: 500, error: 'internal error of the sandbox; see its log' },
    });
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ msg: 'request failed', obj: { method: 'POST', path: '/v2/things', err: error } });
    expect(logged[0]?.obj.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect((await postThing({ name: 'fine' })).status).toBe(201);
  });

  it('a failed commit answers 500, after a success as after a domain error: nothing unflushed is acknowledged', async () => {
    commitFails = true;
    expect(await postThing({ name: 'widget' })).toMatchObject({ status: 500, body: { status: 500, error: 'internal error of the sandbox; see its log' } });
    expect(await postThing({ name: 'taken' })).toMatchObject({ status: 500 });
  });
});

describe('faults', () => {
  it('are asked after authentication with the account and operation; an answered fault ends the request', async () => {
    faultDecision = 'answer';
    const faulted = await postThing({ name: 'widget' });
    expect(faulted).toMatchObject({ status: 503, body: { status: 503, error: 'Service Unavailable' } });
    expect(faulted.headers.get('x-sandbox-fault')).toBe('flt_answer');
    expect(faulted.headers.get('retry-after')).toBe('2');
    expect(faulted.headers.get('x-sandbox-hint')).toBe('answered by the fault');
    expect(events).toEqual([`fault createThing ${full.id}`]);
    expect((await request('GET', '/v2/things')).status).toBe(401);
    expect(events).toEqual([`fault createThing ${full.id}`]);
  });

  it('are asked before the permission and validation checks', async () => {
    faultDecision = 'answer';
    expect((await request('POST', '/v2/things', { key: reader.secretKey, body: '{}', type: 'application/json' })).status).toBe(503);
    expect(events).toEqual([`fault createThing ${reader.id}`]);
  });

  it('afterCommit: the change is handled and committed, then the fault answers instead of the reply', async () => {
    faultDecision = 'afterCommit';
    expect(await postThing({ name: 'widget' })).toMatchObject({ status: 502, body: { status: 502, error: 'Bad Gateway' } });
    expect(events).toEqual([`fault createThing ${full.id}`, 'handle /v2/things', 'commit']);
  });

  it('are not asked for anonymous calls', async () => {
    faultDecision = 'answer';
    expect((await request('GET', '/open')).status).toBe(303);
    expect(events).toEqual(['handle /open', 'commit']);
  });
});
