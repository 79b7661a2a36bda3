// `listen --forward-to [EVENTS=]URL`: how a delivery picks where it is posted (src/listen/listener.ts).
import { describe, expect, it } from 'vitest';
import { formatReport, parseRoute, targetOf, waitingLine } from '../../src/listen/listener.js';

describe('listen routes', () => {
  it('parses URL and EVENTS=URL, a URL with = in its query staying whole', () => {
    expect(parseRoute('http://localhost:3000/hooks?a=b')).toMatchObject({ events: undefined, url: 'http://localhost:3000/hooks?a=b' });
    const route = parseRoute('cashin.*,infraction.updated=http://localhost:3000/in?x=1');
    expect(route.url).toBe('http://localhost:3000/in?x=1');
    expect(route.events?.text).toBe('cashin.*,infraction.updated');
    expect(() => parseRoute('localhost:3000')).toThrow(/not an http\(s\) URL/);
    expect(() => parseRoute('cashin.*=ftp://x')).toThrow(/not an http\(s\) URL/);
  });

  it('the first route whose events match wins; one without events takes the rest; none given: the delivery\'s own URL', () => {
    const routes = ['cashin.*=http://a.test/in', 'cashout.success=http://b.test/out', 'http://c.test/rest'].map(parseRoute);
    expect(targetOf(routes, 'cashin.paid', 'http://own.test')).toBe('http://a.test/in');
    expect(targetOf(routes, 'cashout.success', null)).toBe('http://b.test/out');
    expect(targetOf(routes, 'cashout.failed', null)).toBe('http://c.test/rest');
    expect(targetOf(routes.slice(0, 2), 'infraction.updated', 'http://own.test')).toBeUndefined();
    expect(targetOf([], 'cashin.paid', 'http://own.test/hooks')).toBe('http://own.test/hooks');
    expect(targetOf([], 'cashin.paid', null)).toBeUndefined();
  });

  it('one readable line per delivery', () => {
    const line = formatReport({ at: '2030-01-01T12:00:01.000Z', event: 'cashin.paid', deliveryId: 'whd_1', attempt: 2, replay: false, transactionId: '100000001', withdrawalId: null, target: 'http://localhost:3000/hooks', status: 500, durationMs: 12, error: null });
    expect(line).toBe('12:00:01  cashin.paid        whd_1 #2  tx 100000001  → http://localhost:3000/hooks  500  12 ms');
    const refused = formatReport({ at: '2030-01-01T12:00:01.000Z', event: 'cashin.paid', deliveryId: 'whd_1', attempt: 1, replay: false, transactionId: '100000001', withdrawalId: null, target: 'http://localhost:3000/hooks', status: null, durationMs: 1, error: 'ECONNREFUSED' });
    // Still one line, and it says what to do.
    expect(refused).toBe('12:00:01  cashin.paid        whd_1 #1  tx 100000001  → http://localhost:3000/hooks  failed: ECONNREFUSED (start your app there or point --forward-to at it; the sandbox retries)  1 ms');
  });

  it('says at connect how many deliveries waited for a listener', () => {
    expect([0, 1, 3].map(waitingLine)).toEqual([
      'no delivery was waiting for a listener',
      '1 delivery was waiting for a listener: offered now, oldest first',
      '3 deliveries were waiting for a listener: offered now, oldest first',
    ]);
  });
});
