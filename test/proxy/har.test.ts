import { describe, expect, it } from 'vitest';
import { harEntry, type ExchangeRecord } from '../../src/proxy/har.js';

const record = (overrides: Partial<ExchangeRecord> = {}): ExchangeRecord => ({
  started: new Date('2026-12-02T12:00:00.000Z'),
  ms: 12,
  method: 'POST',
  url: new URL('https://api.example.com/transactions/v2/purchase?token=tok_live_0123456789abcdef&page=2'),
  requestHeaders: { authorization: 'Bearer sk_live_0123456789abcdef', cookie: 'session=s3cr3t; theme=dark', 'content-type': 'application/json' },
  requestBody: Buffer.from(JSON.stringify({ amount: 100, card: { number: '4111 1111 1111 1111', cvv: '123' } })),
  status: 201,
  responseHeaders: { 'content-type': 'application/json; charset=utf-8' },
  responseBody: Buffer.from(JSON.stringify({ secretKey: 'sk_test_abcdefghijklmnop', webhookSecret: 'whsec_abcdefghijklmnop', id: 'acc_1' })),
  findings: [],
  ...overrides,
});

describe('HAR entries', () => {
  it('mask credentials in headers, query and bodies, and card data', () => {
    const entry = harEntry(record());
    const text = JSON.stringify(entry);
    for (const secret of ['sk_live_0123456789abcdef', 'tok_live_0123456789abcdef', 's3cr3t', 'sk_test_abcdefghijklmnop', 'whsec_abcdefghijklmnop', '4111 1111 1111 1111', '"123"']) expect(text).not.toContain(secret);
    expect(entry.request.headers).toContainEqual({ name: 'authorization', value: 'Bearer ****' });
    expect(entry.request.queryString).toContainEqual({ name: 'page', value: '2' });
    expect(entry.request.url).toMatch(/^https:\/\/api\.example\.com\/transactions\/v2\/purchase\?token=.*&page=2$/);
    expect(JSON.parse(entry.request.postData?.text ?? '{}')).toEqual({ amount: 100, card: { number: '**** **** **** 1111', cvv: '****' } });
    expect((JSON.parse(entry.response.content.text) as { id: string }).id).toBe('acc_1');
  });

  it('keep the HAR 1.2 fields every viewer reads', () => {
    const entry = harEntry(record({ status: 404, requestBody: Buffer.alloc(0) }));
    expect(entry.startedDateTime).toBe('2026-12-02T12:00:00.000Z');
    expect(entry.response).toMatchObject({ status: 404, statusText: 'Not Found', httpVersion: 'HTTP/1.1', redirectURL: '', headersSize: -1 });
    expect(entry.request.postData).toBeUndefined();
    expect(entry.timings.wait).toBe(12);
  });

  it('mask secrets in a body that says JSON but does not parse', () => {
    const entry = harEntry(record({ requestBody: Buffer.from('{"secretKey": "sk_test_abcdefghijklmnop", "cvv": "123"') }));
    expect(entry.request.postData?.text).not.toContain('sk_test_abcdefghijklmnop');
    expect(entry.request.postData?.text).not.toContain('123');
  });
});
