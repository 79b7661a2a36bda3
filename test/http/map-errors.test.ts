import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/errors.js';
import { HttpError } from '../../src/http/errors.js';
import { FaultAnswer } from '../../src/http/faults.js';
import { DOMAIN_STATUS, ErrorMapper, statusOf } from '../../src/http/map-errors.js';
import type { Logger } from '../../src/log.js';
import { CursorNotFound, StoreUnavailable, UniqueViolation } from '../../src/store/ports.js';

/** src/http/map-errors.ts: every error a request can end in, and the answer it gets. */
const logged: unknown[] = [];
const mapper = new ErrorMapper({ error: (obj: unknown) => void logged.push(obj) } as unknown as Logger);
const at = (path: string) => ({ method: 'POST', path, traceId: 'trace-1' });

describe('the error stage', () => {
  it('maps each domain error code to its one status, keeping message and hint', () => {
    expect(DOMAIN_STATUS).toEqual({ invalid: 400, not_found: 404, conflict: 409, quota_exceeded: 413 });
    expect(mapper.answerFor(new DomainError('quota_exceeded', 'quota exceeded: records per account (3)', 'reset the account'))).toEqual({ status: 413, message: 'quota exceeded: records per account (3)', hint: 'reset the account' });
    expect(mapper.answerFor(new DomainError('not_found', 'Transaction not found', 'no such id here'))).toEqual({ status: 404, message: 'Transaction not found', hint: 'no such id here' });
    expect(mapper.answerFor(new DomainError('conflict', 'Transaction already processed'))).toMatchObject({ status: 409, message: 'Transaction already processed' });
    expect(statusOf(new DomainError('invalid', 'x'))).toBe(400);
  });

  it('answers an HttpError as it says, with its hint and headers', () => {
    expect(mapper.answerFor(new HttpError(405, 'DELETE is not allowed', { headers: { allow: 'GET, POST' } }))).toEqual({ status: 405, message: 'DELETE is not allowed', hint: undefined, headers: { allow: 'GET, POST' } });
    expect(mapper.answerFor(new HttpError(400, 'Sale value below minimum', { hint: 'amount must be >= 100' }))?.hint).toBe('amount must be >= 100');
    expect(statusOf(new HttpError(413, 'too large'))).toBe(413);
  });

  it("answers the store's errors: unavailable is a 503 to retry, a clash a 409, a lost cursor a 400", () => {
    expect(mapper.answerFor(new StoreUnavailable('connection refused'))).toEqual({ status: 503, message: 'the store is unavailable; try again', hint: 'connection refused', headers: { 'retry-after': '1' } });
    expect(mapper.answerFor(new UniqueViolation('products', 'externalId', 'x'))?.status).toBe(409);
    expect(mapper.answerFor(new CursorNotFound('prd_1'))).toEqual({ status: 400, message: 'startingAfter prd_1 is not an item of this list' });
  });

  it('says the same status for an error wherever it is asked: the payer pages (statusOf) and the API (answerFor) read one table', () => {
    const errors: unknown[] = [
      new DomainError('invalid', 'x'),
      new DomainError('not_found', 'x'),
      new DomainError('conflict', 'x'),
      new DomainError('quota_exceeded', 'x'),
      new HttpError(405, 'no'),
      new StoreUnavailable('down'),
      // 500 from statusOf and 400/409 from answerFor, before there was one table.
      new CursorNotFound('prd_1'),
      new UniqueViolation('products', 'externalId', 'x'),
      Object.assign(new URIError('bad escape'), { status: 400 }),
      new Error('a bug of the sandbox'),
    ];
    for (const error of errors) expect(statusOf(error), String(error)).toBe(mapper.answerFor(error)?.status ?? 500);
    expect(statusOf(new CursorNotFound('prd_1'))).toBe(400);
    expect(statusOf(new UniqueViolation('products', 'externalId', 'x'))).toBe(409);
    expect(statusOf(new Error('a bug of the sandbox'))).toBe(500);
  });

  it("answers an error that carries a 4xx status (express's router, on a page path it cannot decode) with it", () => {
    expect(mapper.answerFor(Object.assign(new URIError("Failed to decode param '%E0'"), { status: 400 }))).toEqual({ status: 400, message: "Failed to decode param '%E0'" });
  });

  it('makes every answer a reply in the family shape: 401 and 403 say the exact word, the rest goes in the hint', () => {
    expect(mapper.replyFor(at('/v2/products'), new HttpError(401, 'API key invalid'))).toEqual({
      status: 401,
      json: { status: 401, error: 'Unauthorized' },
      headers: { 'x-sandbox-hint': 'API key invalid' },
    });
    expect(mapper.replyFor(at('/transactions/1'), new DomainError('not_found', 'Transaction not found', 'não há'))).toEqual({
      status: 404,
      json: { statusCode: 404, message: 'Transaction not found', error: 'Not Found' },
      headers: { 'x-sandbox-hint': 'n%C3%A3o h%C3%A1' },
    });
  });

  it("answers a fault rule's status with HTTP's reason, its hint and Retry-After, exempt from response validation", () => {
    expect(mapper.replyFor(at('/transactions/v2/purchase'), new FaultAnswer(503, 3, 'fault rule flt_1 answered 503'))).toEqual({
      status: 503,
      json: { statusCode: 503, message: 'Service Unavailable', error: 'Service Unavailable' },
      headers: { 'x-sandbox-hint': 'fault rule flt_1 answered 503', 'retry-after': '3' },
      unchecked: true,
    });
    expect(mapper.replyFor(at('/v2/products'), new FaultAnswer(418, undefined, 'teapot'))).toMatchObject({ status: 418, json: { status: 418, error: "I'm a Teapot" } });
  });

  it('logs what it does not know with the trace id, and answers a 500', () => {
    logged.length = 0;
    expect(mapper.replyFor(at('/v2/products'), new TypeError('boom'))).toEqual({ status: 500, json: { status: 500, error: 'internal error of the sandbox; see its log' }, headers: {} });
    expect(logged).toEqual([expect.objectContaining({ traceId: 'trace-1', method: 'POST', path: '/v2/products' })]);
  });

  it('leaves anything else to the logged 500', () => {
    expect(mapper.answerFor(new TypeError('boom'))).toBeUndefined();
    expect(mapper.answerFor(Object.assign(new Error('server side'), { status: 500 }))).toBeUndefined();
    expect(mapper.answerFor('a string')).toBeUndefined();
    expect(statusOf(new TypeError('boom'))).toBe(500);
  });
});
