import { describe, expect, it } from 'vitest';
import { toMs } from '../../src/scenarios/duration.js';
import { match } from '../../src/scenarios/match.js';
import { render, TemplateError } from '../../src/scenarios/template.js';

const context = {
  steps: { buy: { status: 201, response: { id: '100000001', amount: 15000, items: [{ sku: 'A' }], nested: { ok: true } }, headers: { 'x-sandbox-delivery': 'whd_1' } } },
  account: { secretKey: 'sk_test_x' },
  env: { REGION: 'br' } as Record<string, string | undefined>,
  run: { id: 'r1' },
};

describe('templates', () => {
  it('a whole-value template keeps the type; mixed text is interpolated', () => {
    expect(render('{{ steps.buy.response.amount }}', context)).toBe(15000);
    expect(render('{{steps.buy.response.nested}}', context)).toEqual({ ok: true });
    expect(render('order-{{ run.id }}-{{ steps.buy.status }}', context)).toBe('order-r1-201');
    expect(render('n={{ steps.buy.response.nested }}', context)).toBe('n={"ok":true}');
    expect(render({ a: ['{{ steps.buy.response.items[0].sku }}', '{{ steps.buy.response.items.0.sku }}'], b: 1 }, context)).toEqual({ a: ['A', 'A'], b: 1 });
    expect(render('{{ steps.buy.headers.x-sandbox-delivery }} {{ env.REGION }}', context)).toBe('whd_1 br');
    expect(render('no templates', context)).toBe('no templates');
  });

  it('a missing value is an error that says what is there', () => {
    expect(() => render('{{ steps.buy.response.idd }}', context)).toThrow(new TemplateError('{{ steps.buy.response.idd }}: steps.buy.response has no "idd" (keys: id, amount, items, nested)'));
    expect(() => render('{{ steps.sell.response.id }}', context)).toThrow(/no step with id "sell" has run before this one \(ids so far: buy\)/);
    expect(() => render('{{ env.MISSING }}', context)).toThrow(/environment variable MISSING is not set/);
    expect(() => render('{{ steps.buy.response.items[3] }}', context)).toThrow(/has 1 item\(s\), no \[3\]/);
  });
});

describe('matchers', () => {
  it('literals, partial objects, arrays item by item', () => {
    expect(match({ a: 1, b: { c: 'x' } }, { a: 1, b: { c: 'x', d: 2 }, e: 3 })).toEqual([]);
    expect(match({ a: 1 }, { a: '1' })).toEqual([{ path: 'a', expected: 1, actual: '1' }]);
    expect(match([1, 2], [1, 2, 3])).toEqual([{ path: '', expected: [1, 2], actual: [1, 2, 3], note: 'expected 2 item(s), got 3' }]);
    expect(match({ list: [{ id: 'a' }] }, { list: [{ id: 'b' }] })).toEqual([{ path: 'list[0].id', expected: 'a', actual: 'b' }]);
    expect(match({ a: null }, {})).toEqual([{ path: 'a', expected: null, actual: undefined, note: 'missing' }]);
  });

  it('matches, exists, oneOf, ranges, length, equals', () => {
    expect(match({ matches: '^E\\d+' }, 'E123')).toEqual([]);
    expect(match({ matches: '^E' }, 'X')).toHaveLength(1);
    expect(match({ a: { exists: true } }, { a: null })).toEqual([]);
    expect(match({ a: { exists: false } }, {})).toEqual([]);
    expect(match({ a: { exists: true } }, {})[0]?.note).toBe('missing');
    expect(match({ oneOf: ['PIX', 'BOLETO'] }, 'BOLETO')).toEqual([]);
    expect(match({ oneOf: ['PIX', 'BOLETO'] }, 'CARD')).toHaveLength(1);
    expect(match({ gte: 1, lte: 10 }, 10)).toEqual([]);
    expect(match({ gt: 1 }, 1)).toHaveLength(1);
    expect(match({ lt: 1 }, 'a')[0]?.note).toBe('expected a number, got a string');
    expect(match({ length: 2 }, [1, 2])).toEqual([]);
    expect(match({ length: { gte: 3 } }, 'ab')[0]?.note).toBe('length is 2');
    expect(match({ equals: { a: 1 } }, { a: 1, b: 2 })).toHaveLength(1);
    expect(match({ equals: { a: 1 } }, { a: 1 })).toEqual([]);
  });
});

describe('durations', () => {
  it('milliseconds or a number with a unit', () => {
    expect([toMs(1500), toMs('1500ms'), toMs('2s'), toMs('1.5s'), toMs('5m'), toMs('1h'), toMs('4d')]).toEqual([1500, 1500, 2000, 1500, 300_000, 3_600_000, 345_600_000]);
    expect(() => toMs('4 days')).toThrow(/not a duration/);
  });
});
