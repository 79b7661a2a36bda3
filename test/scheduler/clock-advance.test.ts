import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/spec/types.js';
import { LATEST_ACCOUNT_TIME_MS } from '../../src/scheduler/advance-clock.js';
import { createAccount, expectTransactionError } from '../helpers/catalog.js';
import { control, created, pixBody } from '../helpers/purchases.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startSandbox();
});
afterAll(() => sb.stop());

describe('POST /_sandbox/clock/advance', () => {
  it('advances sent at the same time add up, one after the other', async () => {
    const { client } = await createAccount(sb);
    const results = await Promise.all([4000, 4000, 2000].map((ms) => client.post<Clock>('/_sandbox/clock/advance', { ms })));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    expect((await client.get<Clock>('/_sandbox/clock')).body.offsetMs).toBe(10_000);
  });

  it('stops at the year 9999: an advance past it is 400 and leaves the clock, the account keeps working', async () => {
    const { client } = await createAccount(sb);
    const CENTURY = 3_153_600_000_000;
    let clock = (await client.get<Clock>('/_sandbox/clock')).body;
    // The largest advances the API takes, until the next would pass the stop.
    while (Date.parse(clock.now) + CENTURY <= LATEST_ACCOUNT_TIME_MS) {
      const res = await client.post<Clock>('/_sandbox/clock/advance', { ms: CENTURY });
      expect(res.status).toBe(200);
      clock = res.body;
    }
    expect(clock.now.slice(0, 2)).toBe('99');
    const refused = await client.post('/_sandbox/clock/advance', { ms: CENTURY });
    expectTransactionError(refused, 400, /^ms would take the account clock past 9999-01-01T00:00:00\.000Z/);
    expect(refused.headers.get('x-sandbox-hint')).toMatch(/reset the account/);
    expect((await client.get<Clock>('/_sandbox/clock')).body.offsetMs).toBe(clock.offsetMs);
    // Up to the stop itself is allowed.
    const toStop = LATEST_ACCOUNT_TIME_MS - Date.parse((await client.get<Clock>('/_sandbox/clock')).body.now) - 60_000;
    expect((await client.post<Clock>('/_sandbox/clock/advance', { ms: toStop })).status).toBe(200);
    // What failed there before: a Pix paid (its end-to-end id has a four-digit year), a lookup of the clock.
    const tx = await created(client, pixBody());
    const paid = await control(client, tx.id, 'pay');
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    expect(paid.body.endToEndId).toMatch(/^E[0-9]{8}9998[0-9]{8}[A-Za-z0-9]{11}$/);
    expect((await client.get<Clock>('/_sandbox/clock')).status).toBe(200);
  });
});

