import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/errors.js';
import { HttpError } from '../../src/http/errors.js';
import { DOMAIN_STATUS, ErrorMapper, statusOf } from '../../src/http/map-errors.js';
import type { Logger } from '../../src/log.js';
import { CursorNotFound, StoreUnavailable, UniqueViolation } from '../../src/store/ports.js';

/** src/http/map-errors.ts: every error a request can end in, and the answer it gets. */
const mapper = new ErrorMapper({ error: () => undefined } as unknown as Logger, 1024 * 1024);

describe('the error stage', () => {
  it('maps each domain error code to its one status, keeping message and hint', () => {
    expect(DOMAIN_STATUS).toEqual({ invalid: 400, not_found: 404, conflict: 409 });
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

  it("answers body-parser's failures in its terms: bad JSON, not an object, over the limit", () => {
    const parse = (body: string) => Object.assign(new Error('Unexpected token'), { status: 400, type: 'entity.parse.failed', body });
    expect(mapper.answerFor(parse('{"a":'))).toEqual({ status: 400, message: 'request body is not valid JSON: Unexpected token' });
    expect(mapper.answerFor(parse('"text"'))).toEqual({ status: 400, message: 'request body must be a JSON object' });
    expect(mapper.answerFor(Object.assign(new Error('request entity too large'), { status: 413, type: 'entity.too.large' }))).toEqual({
      status: 413,
      message: 'request body is larger than the limit of 1 MB (1048576 bytes)',
    });
    expect(mapper.answerFor(Object.assign(new Error('unsupported charset "LATIN-9"'), { status: 415, type: 'charset.unsupported' }))).toEqual({ status: 415, message: 'unsupported charset "LATIN-9"' });
  });

  it('leaves anything else to the logged 500', () => {
    expect(mapper.answerFor(new TypeError('boom'))).toBeUndefined();
    expect(mapper.answerFor(Object.assign(new Error('server side'), { status: 500 }))).toBeUndefined();
    expect(mapper.answerFor('a string')).toBeUndefined();
    expect(statusOf(new TypeError('boom'))).toBe(500);
  });
});
