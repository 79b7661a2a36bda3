import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/spec/types.js';
import { createAccount } from '../helpers/catalog.js';
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
});
