import type { Operation } from 'openapi-backend';
import { describe, expect, it } from 'vitest';
import { notUsedFields } from '../../src/http/not-used.js';

function operation(notUsed: unknown): Operation {
  const schema = { type: 'object' as const, 'x-not-used': notUsed };
  return { method: 'post', path: '/things', operationId: 'createThing', responses: {}, requestBody: { content: { 'application/json': { schema } } } };
}

const RULES = [
  { when: { kind: 'a' }, fields: ['x', 'y'] },
  { when: { kind: ['b', null], mode: 'm' }, fields: ['z'] },
];

describe('x-not-used', () => {
  const op = operation(RULES);
  const ignore = notUsedFields([op]);

  it('drops the fields of the variant the body is, whatever their value, and keeps the rest', () => {
    expect(ignore(op, { kind: 'a', x: null, y: { deep: 1 }, z: 3, keep: 'k' })).toEqual({ kind: 'a', z: 3, keep: 'k' });
    expect(ignore(op, { mode: 'm', z: 'n/a', x: 1 })).toEqual({ mode: 'm', x: 1 });
    expect(ignore(op, { kind: 'b', mode: 'm', z: [] })).toEqual({ kind: 'b', mode: 'm' });
  });

  it('leaves a body of no listed variant, or with none of the fields, as the same object', () => {
    for (const body of [{ kind: 'c', x: 1 }, { kind: 'b', z: 1 }, { kind: 'a' }, { kind: 1, x: 1 }, { kind: null, mode: 'm', z: 1 }]) {
      expect(ignore(op, body)).toBe(body);
    }
    // The body the client sent is not changed: what is dropped is dropped from a copy.
    const sent = { kind: 'a', x: 1 };
    ignore(op, sent);
    expect(sent).toEqual({ kind: 'a', x: 1 });
  });

  it('passes anything that is not an object through, and operations without the extension', () => {
    for (const body of [undefined, null, 'text', 3, [{ kind: 'a', x: 1 }]]) expect(ignore(op, body)).toBe(body);
    const other = operation(undefined);
    delete (other.requestBody as { content: Record<string, { schema: Record<string, unknown> }> }).content['application/json']!.schema['x-not-used'];
    const body = { kind: 'a', x: 1 };
    expect(notUsedFields([other])(other, body)).toBe(body);
  });

  it('fails the start on a malformed entry, naming it', () => {
    const malformed: [unknown, RegExp][] = [
      [{ when: { kind: 'a' } }, /must be a list/],
      [[null], /\[0\] must be an object/],
      [[{ fields: ['x'] }], /\[0\]\.when must name at least one field/],
      [[{ when: {}, fields: ['x'] }], /\[0\]\.when must name at least one field/],
      [[{ when: { kind: 'a' }, fields: [] }], /\[0\]\.fields must be a list of field names/],
      [[{ when: { kind: 'a' }, fields: ['x', 3] }], /\[0\]\.fields must be a list of field names/],
      [[{ when: { kind: 1 }, fields: ['x'] }], /\[0\]\.when\.kind must be a string, null, or a list of them/],
      [[{ when: { kind: [] }, fields: ['x'] }], /\[0\]\.when\.kind must be a string, null, or a list of them/],
      [[{ when: { kind: 'a' }, fields: ['kind'] }], /\[0\] ignores kind, a field its own condition reads/],
    ];
    for (const [notUsed, message] of malformed) expect(() => notUsedFields([operation(notUsed)]), JSON.stringify(notUsed)).toThrow(message);
  });
});
