import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startSandbox();
});
afterAll(() => sb.stop());

describe('health', () => {
  it('answers without auth', async () => {
    const res = await sb.clientFor(undefined).get<{ status: string }>('/_sandbox/health');
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('ok');
  });
});
