import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRulesFile } from '../../src/autopilot/load-rules.js';
import { loadOpenApi } from '../../src/spec/openapi.js';
import type { AutopilotState } from '../../src/spec/types.js';
import { createAccount } from '../helpers/catalog.js';
import { boletoBody, copBody, created, hybridBody, lookup, pixBody, type Body } from '../helpers/purchases.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';

let sb: TestSandbox;
beforeAll(async () => {
  // The shipped rules, and an instruction delay long enough that only the autopilot fills.
  sb = await startSandbox({ autopilotFile: 'default', instructionDelayMs: 600_000 });
});
afterAll(() => sb.stop());

async function freshAccount(): Promise<Client> {
  return (await createAccount(sb)).client;
}

const advance = (client: Client, ms: number) => client.post('/_sandbox/clock/advance', { ms });

async function statusAfter(client: Client, body: Body, ms: number): Promise<{ before: string; after: string; tx: Awaited<ReturnType<typeof lookup>> }> {
  const tx = await created(client, body);
  const before = (await lookup(client, tx.id)).status;
  await advance(client, ms);
  const after = await lookup(client, tx.id);
  return { before, after: after.status, tx: after };
}

describe('the default rules (magic values)', () => {
  it('an amount ending in 01 is paid 3 s after creation on the account clock, not before', async () => {
    const client = await freshAccount();
    const tx = await created(client, pixBody({ amount: 15001 }));
    const due = Date.parse(tx.createdAt) + 3000;
    await advance(client, 2000);
    // Real time runs on the account clock too: on a loaded machine it may reach the instant
    // without the advance, so what is checked is when the charge was paid, never before it.
    const early = await lookup(client, tx.id);
    if (early.status === 'PENDING') expect(early.approvedAt).toBeNull();
    else expect(Date.parse(String(early.approvedAt))).toBeGreaterThanOrEqual(due);
    await advance(client, 1000);
    const paid = await lookup(client, tx.id);
    expect(paid.status).toBe('APPROVED');
    expect(Date.parse(String(paid.approvedAt))).toBeGreaterThanOrEqual(due);
    expect(paid.paidRail).toBe('PIX');
    expect(paid.pixCode).not.toBe('');
  });

  it('works in COP too (amount ending in 01)', async () => {
    const client = await freshAccount();
    const { before, after } = await statusAfter(client, copBody({ amount: 1500001 }), 3000);
    expect([before, after]).toEqual(['PENDING', 'APPROVED']);
  });

  it('an amount ending in 02 is paid by boleto', async () => {
    const client = await freshAccount();
    const { after, tx } = await statusAfter(client, hybridBody({ amount: 15002 }), 3000);
    expect(after).toBe('APPROVED');
    expect(tx.paidRail).toBe('BOLETO');
  });

  it('an amount ending in 05 is declined and 09 expires: both BLOCKED, with their statusReason', async () => {
    const client = await freshAccount();
    const declined = await statusAfter(client, pixBody({ amount: 15005 }), 3000);
    expect([declined.after, declined.tx.statusReason]).toEqual(['BLOCKED', 'DECLINED']);
    const expired = await statusAfter(client, boletoBody({ amount: 15009 }), 3000);
    expect([expired.after, expired.tx.statusReason]).toEqual(['BLOCKED', 'EXPIRED']);
  });

  it('an amount ending in 07 is paid then refunded, 08 paid then charged back', async () => {
    const client = await freshAccount();
    const refunded = await created(client, pixBody({ amount: 15007 }));
    const chargedBack = await created(client, copBody({ amount: 1500008 }));
    await advance(client, 3000);
    expect((await lookup(client, refunded.id)).status).toBe('APPROVED');
    expect((await lookup(client, chargedBack.id)).status).toBe('APPROVED');
    await advance(client, 3000);
    expect(await lookup(client, refunded.id)).toMatchObject({ status: 'REFUNDED', statusReason: 'REFUNDED' });
    expect(await lookup(client, chargedBack.id)).toMatchObject({ status: 'CHARGEBACK', statusReason: 'CHARGEBACK' });
  });

  it('[pay] in the description and an autopay- externalId pay whatever the amount', async () => {
    const client = await freshAccount();
    expect((await statusAfter(client, pixBody({ amount: 15000, description: 'Pedido [pay]' }), 3000)).after).toBe('APPROVED');
    expect((await statusAfter(client, pixBody({ amount: 15000, externalId: 'autopay-77' }), 3000)).after).toBe('APPROVED');
  });

  it('other amounts stay PENDING', async () => {
    const client = await freshAccount();
    const { after, tx } = await statusAfter(client, hybridBody({ amount: 15000 }), 10_000);
    expect(after).toBe('PENDING');
    expect(tx.pixCode).toBe('');
  });

  it('steps aside when the transaction was already paid by hand', async () => {
    const client = await freshAccount();
    const tx = await created(client, pixBody({ amount: 15005 }));
    expect((await client.post(`/_sandbox/transactions/${tx.id}/pay`)).status).toBe(200);
    await advance(client, 3000);
    expect((await lookup(client, tx.id)).status).toBe('APPROVED');
  });
});

describe('/_sandbox/autopilot', () => {
  it('shows the sandbox rules until the account sets its own, and back after DELETE', async () => {
    const client = await freshAccount();
    const initial = await client.get<AutopilotState>('/_sandbox/autopilot');
    expect(initial.body.source).toBe('sandbox');
    expect(initial.body.rules.length).toBeGreaterThan(3);

    const rules = { rules: [{ name: 'COP expires at once', match: { currency: 'COP' }, actions: [{ do: 'expire' }] }] };
    const set = await client.put<AutopilotState>('/_sandbox/autopilot', rules);
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ source: 'account', ...rules });
    const cop = await created(client, copBody());
    await advance(client, 0);
    expect(await lookup(client, cop.id)).toMatchObject({ status: 'BLOCKED', statusReason: 'EXPIRED' });
    // The account's rules replace the sandbox's: a magic 01 amount no longer pays.
    expect((await statusAfter(client, pixBody({ amount: 15001 }), 3000)).after).toBe('PENDING');

    const cleared = await client.delete<AutopilotState>('/_sandbox/autopilot');
    expect(cleared.body.source).toBe('sandbox');
    expect((await statusAfter(client, pixBody({ amount: 15001 }), 3000)).after).toBe('APPROVED');
  });

  it('an empty rule list turns the autopilot off for that account only', async () => {
    const quiet = await freshAccount();
    const other = await freshAccount();
    expect((await quiet.put<AutopilotState>('/_sandbox/autopilot', { rules: [] })).body).toEqual({ source: 'account', rules: [] });
    expect((await statusAfter(quiet, pixBody({ amount: 15001 }), 3000)).after).toBe('PENDING');
    expect((await statusAfter(other, pixBody({ amount: 15001 }), 3000)).after).toBe('APPROVED');
  });

  it('matches amount ranges, currencies and methods, and runs actions in order of their delays', async () => {
    const client = await freshAccount();
    await client.put('/_sandbox/autopilot', {
      rules: [
        {
          name: 'big hybrids: fill at 1 s, pay by boleto at 5 s',
          match: { currency: ['BRL'], method: 'PIX_BOLETO', amount: { min: 100000, max: 200000 } },
          actions: [{ do: 'pay', rail: 'BOLETO', afterMs: 5000 }, { do: 'fill', afterMs: 1000 }],
        },
      ],
    });
    const small = await created(client, hybridBody({ amount: 99999 }));
    const big = await created(client, hybridBody({ amount: 150000 }));
    await advance(client, 1000);
    const filled = await lookup(client, big.id);
    expect(filled.status).toBe('PENDING');
    expect(filled.pixCode).not.toBe('');
    await advance(client, 4000);
    expect((await lookup(client, big.id)).paidRail).toBe('BOLETO');
    expect((await lookup(client, small.id)).status).toBe('PENDING');
  });

  it('refuses invalid rules with 400 naming the field', async () => {
    const client = await freshAccount();
    const cases: [unknown, RegExp][] = [
      [{ rules: [{ name: 'x', actions: [{ do: 'explode' }] }] }, /rules\[0\]\.actions\[0\]\.do must be one of fill, pay, expire, decline/],
      [{ rules: [{ name: 'x', actions: [] }] }, /actions/],
      [{ rules: [{ name: 'x', match: { amount: { endsWith: 'ab' } }, actions: [{ do: 'pay' }] }] }, /endsWith/],
      [{ rules: [{ name: 'x', match: { colour: 'red' }, actions: [{ do: 'pay' }] }] }, /colour/],
      [{ rules: [{ name: 'x', actions: [{ do: 'pay', afterMs: -5 }] }] }, /afterMs/],
      // Text conditions are capped at what the fields they match can hold (Security: linear-time matching).
      [{ rules: [{ name: 'x', match: { description: { contains: 'a'.repeat(256) } }, actions: [{ do: 'pay' }] }] }, /description\.contains must be 1 to 255 characters/],
      [{ rules: [{ name: 'x', match: { externalId: { equals: 'a'.repeat(256) } }, actions: [{ do: 'pay' }] }] }, /externalId\.equals must be at most 255 characters/],
    ];
    for (const [body, message] of cases) {
      const res = await client.put<{ message: string }>('/_sandbox/autopilot', body);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.message).toMatch(message);
    }
    expect((await client.get<AutopilotState>('/_sandbox/autopilot')).body.source).toBe('sandbox');
  });
});

describe('rules files', () => {
  it('the shipped default file is valid', async () => {
    const rules = loadRulesFile('default', await loadOpenApi());
    expect(rules.rules.map((r) => r.name)).toContain('magic amount 01 pays');
  });

  it('a bad file is refused with its file, line and column', async () => {
    const document = await loadOpenApi();
    const file = join(sb.dir, 'rules.yaml');
    writeFileSync(file, 'rules:\n  - name: late\n    actions:\n      - { do: pay, afterMs: -1 }\n');
    expect(() => loadRulesFile(file, document)).toThrow(new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:4:\\d+: .*afterMs`));
    writeFileSync(file, 'rules:\n  - name: [unclosed\n');
    expect(() => loadRulesFile(file, document)).toThrow(/rules\.yaml:\d+:\d+: /);
  });
});
