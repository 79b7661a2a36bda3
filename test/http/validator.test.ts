import type { ErrorObject } from 'ajv';
import { describe, expect, it } from 'vitest';
import { createAjv, describeEveryProblem, describeValidationErrors } from '../../src/http/validator.js';

/** The errors Ajv reports for `value`, as the request validator's would (paths under /requestBody). */
function errorsOf(schema: object, value: unknown, allErrors: boolean): ErrorObject[] {
  const validate = createAjv({ allErrors }).compile({ type: 'object', properties: { requestBody: schema } });
  expect(validate({ requestBody: value })).toBe(false);
  return validate.errors ?? [];
}

const BODY = {
  type: 'object',
  additionalProperties: false,
  'x-message': 'is not a field',
  required: ['name', 'email', 'amount'],
  properties: {
    name: { type: 'string', minLength: 1, 'x-message': 'must be 1 to 255 characters' },
    email: { type: 'string', format: 'email', 'x-message': 'must be a valid e-mail address' },
    phone: { type: 'string' },
    amount: { type: 'integer', minimum: 1, 'x-message': 'must be a positive integer number of centavos' },
    note: { oneOf: [{ type: 'string' }, { type: 'null' }], 'x-message': 'must be a string or null' },
    rail: { type: 'string', enum: ['PIX', 'BOLETO'], 'x-message': 'must be PIX or BOLETO' },
  },
  allOf: [{ if: { properties: { amount: { const: 5 } }, required: ['amount'] }, then: { 'x-context': 'for 5', required: ['phone'] } }],
};

describe('describeEveryProblem', () => {
  it("lists every problem once, in the body's declared field order, undeclared fields last", () => {
    const errors = errorsOf(BODY, { zzz: 1, amount: 5, email: 'nope' }, true);
    expect(describeEveryProblem(errors, ['name', 'email', 'phone', 'amount', 'note'])).toEqual([
      'name is required',
      'email must be a valid e-mail address',
      'phone is required for 5',
      'zzz is not a field',
    ]);
  });

  it("phrases a oneOf's field by its own x-message, not by its branches", () => {
    const errors = errorsOf(BODY, { name: 'a', email: 'a@b.co', amount: 1, note: 3 }, true);
    expect(describeEveryProblem(errors, ['name', 'email', 'phone', 'amount', 'note'])).toEqual(['note must be a string or null']);
  });
});

describe('describeValidationErrors on a value of the wrong JSON type', () => {
  it.each([
    [{ name: 42, email: 'a@b.co', amount: 1 }, 'name must be a string, not a number'],
    [{ name: [], email: 'a@b.co', amount: 1 }, 'name must be a string, not an array'],
    [{ name: null, email: 'a@b.co', amount: 1 }, 'name must be a string, not null'],
    [{ name: 'a', email: false, amount: 1 }, 'email must be a string, not a boolean'],
    // The phrase names the type already: kept.
    [{ name: 'a', email: 'a@b.co', amount: 'ten' }, 'amount must be a positive integer number of centavos'],
    [{ name: 'a', email: 'a@b.co', amount: 1, note: 3 }, 'note must be a string or null'],
    // A field of listed values: the list says more than the type.
    [{ name: 'a', email: 'a@b.co', amount: 1, rail: 1 }, 'rail must be PIX or BOLETO'],
  ])('%j → %s', (value, message) => {
    expect(describeValidationErrors(errorsOf(BODY, value, false))).toBe(message);
  });

  it('shows a field of an empty name as "" (a query `?=1`)', () => {
    expect(describeValidationErrors(errorsOf(BODY, { '': 1, name: 'a', email: 'a@b.co', amount: 1 }, false))).toBe('"" is not a field');
  });

  it('names the fields an empty body may set (minProperties), leaving out the forbidden ones', () => {
    const schema = { type: 'object', minProperties: 1, properties: { url: { type: 'string' }, delivery: { type: 'string' }, imageUrl: { not: {} } } };
    expect(describeValidationErrors(errorsOf(schema, {}, false))).toBe('body must contain at least one field: url or delivery');
  });
});
