// Style: a typed client whose status is a strict enum of the five statuses it knows (an
// unknown value throws), and which ignores fields it does not know.
import { payerPages, payerPost } from '../helpers/payer-pages.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../helpers/catalog.js';
import { arsBody, boletoBody, cardBody, copBody, hybridBody, pixBody, VALID_CARD } from '../helpers/purchases.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';

const STATUSES = ['PENDING', 'APPROVED', 'REFUNDED', 'CHARGEBACK', 'BLOCKED'] as const;
type Status = (typeof STATUSES)[number];

interface TypedTransaction {
  id: string;
  status: Status;
  amount: number;
  externalId: string | null;
}

/** Strict where the client is typed, tolerant of everything else (extra fields are dropped). */
function parseTransaction(json: unknown): TypedTransaction {
  const o = json as Record<string, unknown>;
  if (!STATUSES.includes(o.status as Status)) throw new TypeError(`unknown transaction status ${JSON.stringify(o.status)}`);
  if (typeof o.id !== 'string' || typeof o.amount !== 'number') throw new TypeError('malformed transaction');
  return { id: o.id, status: o.status as Status, amount: o.amount, externalId: (o.externalId as string | null) ?? null };
}

let sb: TestSandbox;
let client: Client;
beforeAll(async () => {
  sb = await startSandbox({ instructionDelayMs: 600_000 });
  client = (await createAccount(sb)).client;
});
afterAll(() => sb.stop());

async function createTx(body: Record<string, unknown>): Promise<TypedTransaction> {
  return parseTransaction((await client.post('/transactions/v2/purchase', body)).body);
}
async function act(id: string, action: string): Promise<TypedTransaction> {
  return parseTransaction((await client.post(`/_sandbox/transactions/${id}/${action}`)).body);
}
async function read(id: string): Promise<TypedTransaction> {
  return parseTransaction((await client.get(`/transactions/${id}`)).body);
}

describe('a typed client with a strict enum of the five statuses', () => {
  it('parses every answer of every flow: created, paid, expired, declined, rejected, refunded, charged back', async () => {
    const seen = new Set<Status>();
    const note = (tx: TypedTransaction): TypedTransaction => (seen.add(tx.status), tx);
    for (const body of [copBody(), arsBody(), pixBody(), boletoBody(), hybridBody(), cardBody()]) note(await createTx(body));
    note(await createTx(cardBody({ card: { ...VALID_CARD, number: '4000000000000002' } })));
    note(await act((await createTx(pixBody())).id, 'expire'));
    note(await act((await createTx(copBody())).id, 'decline'));
    const refunded = note(await act(note(await act((await createTx(pixBody())).id, 'pay')).id, 'refund'));
    note(await act(note(await act((await createTx(hybridBody())).id, 'pay')).id, 'chargeback'));
    const rejected = await createTx(copBody());
    expect((await payerPost(sb.url, (await payerPages(client, rejected.id)).checkout!.rejectUrl)).status).toBe(303);
    note(await read(rejected.id));
    note(await read(refunded.id));
    expect([...seen].sort()).toEqual([...STATUSES].sort());
  });

  it('a boleto past its due date and a Pix past expiresAt read as BLOCKED, never a sixth status', async () => {
    const { client: own } = await createAccount(sb);
    const boleto = parseTransaction((await own.post('/transactions/v2/purchase', boletoBody())).body);
    const pix = parseTransaction((await own.post('/transactions/v2/purchase', pixBody())).body);
    await own.post('/_sandbox/clock/advance', { ms: 5 * 86_400_000 });
    for (const tx of [boleto, pix]) expect(parseTransaction((await own.get(`/transactions/${tx.id}`)).body).status).toBe('BLOCKED');
  });

  it('the events and webhooks carry the same statuses in their transaction data', async () => {
    const tx = await act((await createTx(copBody())).id, 'expire');
    const events = (await client.get<{ data: { transactionId: string; data: unknown }[] }>(`/_sandbox/events?transactionId=${tx.id}`)).body.data;
    for (const e of events) parseTransaction(e.data);
  });
});
