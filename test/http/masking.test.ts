import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { maskCardNumber, maskHeaders, maskJson, maskJsonText } from '../../src/http/masking.js';
import { LOG_REDACT, REDACTED } from '../../src/log.js';
import { basic } from '../helpers/sandbox.js';

/** The masks and the server log's redaction on their own; over HTTP: test/http/request-log-masking.test.ts. */

describe('the masks (src/http/masking.ts)', () => {
  it('keep the last four digits of a card number, whatever separates them', () => {
    expect(maskCardNumber('4111111111111111')).toBe('************1111');
    expect(maskCardNumber('4111 1111 1111 1234')).toBe('**** **** **** 1234');
    expect(maskCardNumber('123')).toBe('123');
  });

  it('mask credential headers, keeping the scheme and cookie names', () => {
    expect(
      maskHeaders({
        authorization: basic('sk_test_0123456789abcdef'),
        'proxy-authorization': 'Bearer very-secret-proxy-token',
        cookie: 'session=abc123; theme=dark',
        'x-api-key': 'key_live_0123456789',
        'x-other': 'shown',
      }),
    ).toEqual({
      authorization: 'Basic secret:****cdef (masked)',
      'proxy-authorization': 'Bearer **** (masked)',
      cookie: 'session=****; theme=****',
      'x-api-key': '****6789 (masked)',
      'x-other': 'shown',
    });
  });

  it('mask secrets and card data at any depth of a parsed body, without changing it, __proto__ included', () => {
    const body = JSON.parse(
      '{"secretKey":"sk_test_0123456789","nested":[{"webhookSecret":"whsec_0123456789"}],"card":{"number":"4111111111111111","cvv":"123","holderName":"MARIA"},"cardNumber":"5555555555554444","address":{"number":"1200"},"__proto__":{"password":"hunter2hunter2"}}',
    ) as Record<string, unknown>;
    const before = JSON.stringify(body);
    const masked = maskJson(body) as Record<string, unknown>;
    expect(JSON.stringify(body)).toBe(before);
    expect(JSON.parse(JSON.stringify(masked))).toEqual({
      secretKey: '****6789 (masked)',
      nested: [{ webhookSecret: '****6789 (masked)' }],
      card: { number: '************1111', cvv: '****', holderName: 'MARIA' },
      cardNumber: '************4444',
      address: { number: '1200' },
      ['__proto__']: { password: '****ter2 (masked)' },
    });
    expect(Object.getPrototypeOf(masked)).toBe(Object.prototype);
  });

  it('mask the same fields in a body kept as text, even where the cut left a value unclosed', () => {
    const text = '{"card":{"number":"4111111111111111","cvv":"123"},"secretKey":"sk_test_abcdef012345","webhookSecret":"whsec_0123456789abcd';
    expect(maskJsonText(text)).toBe('{"card":{"number":"************1111","cvv":"****"},"secretKey":"****2345 (masked)","webhookSecret":"****abcd (masked)');
  });
});

describe('the server log', () => {
  it('redacts secret fields at any level (pino redact), keeping the rest of the line', () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => void (lines.push(chunk.toString()), done()) });
    const logger = pino({ level: 'trace', redact: LOG_REDACT }, sink);
    logger.info({ url: 'http://x', secretKey: 'sk_test_redact_me', webhookSecret: 'whsec_redact_me' }, 'ready');
    logger.debug({ responseBody: { secretKey: 'sk_test_redact_me', name: 'kept' }, headers: { authorization: 'Basic redact_me' } }, 'request');
    expect(lines.join('')).not.toMatch(/redact_me/);
    const [ready, request] = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(ready).toMatchObject({ url: 'http://x', secretKey: REDACTED, webhookSecret: REDACTED });
    expect(request).toMatchObject({ responseBody: { secretKey: REDACTED, name: 'kept' }, headers: { authorization: REDACTED } });
  });
});
