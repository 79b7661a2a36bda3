// trigger() as a library and the trigger command's argument parsing, without spawning processes.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trigger as fromPackage, TRIGGER_EVENTS as eventsFromPackage } from '../../src/index.js';
import { summary, toTriggerOptions } from '../../src/trigger/cli.js';
import { defaultBodyFor, parseSets, purchaseBody, setPath, trigger, TriggerError, TRIGGER_EVENTS, type TriggerOptions, type TriggerResult } from '../../src/trigger/trigger.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { startReceiver, type Receiver } from '../helpers/webhooks.js';
import { createAccount } from '../helpers/catalog.js';

const getCard = (body: Record<string, unknown>): unknown => (typeof body.card === 'object' && body.card !== null && 'number' in body.card ? body.card.number : undefined);

const usage = (work: () => unknown): TriggerError => {
  try {
    work();
  } catch (error) {
    if (error instanceof TriggerError) return error;
    throw error;
  }
  throw new Error('no TriggerError');
};

describe('--set', () => {
  const pix = defaultBodyFor({ event: 'cashin.paid' });

  it('types a value like the default body field it replaces; JSON for a field the defaults lack, else text', () => {
    expect(parseSets(['amount=20000', 'phone=11999998888', 'boletoAddress.city=Rio', 'installments=3', 'postbackUrl=http://localhost:3000/hooks', 'externalId=007', 'dueDate="2030-01-10"'], pix)).toEqual({
      amount: 20_000,
      phone: '11999998888',
      'boletoAddress.city': 'Rio',
      installments: 3,
      postbackUrl: 'http://localhost:3000/hooks',
      externalId: '007',
      dueDate: '2030-01-10',
    });
    expect(parseSets(['description=a=b'], pix)).toEqual({ description: 'a=b' });
  });

  it('refuses a pair without a field, and a number field given text', () => {
    expect(usage(() => parseSets(['=1'], pix)).message).toBe('--set takes field=value (a dotted path for a nested field: boletoAddress.city=Rio), got "=1"');
    expect(usage(() => parseSets(['amount'], pix)).kind).toBe('usage');
    expect(usage(() => parseSets(['amount=ten'], pix)).message).toBe('--set amount takes a number, got "ten"');
  });

  it('sets dotted paths, making objects on the way, without changing the body it was given', () => {
    const body = { card: { number: '1' } };
    expect(setPath(body, 'card.cvv', '123')).toEqual({ card: { number: '1', cvv: '123' } });
    expect(setPath(body, 'a.b.c', 1)).toEqual({ card: { number: '1' }, a: { b: { c: 1 } } });
    expect(body).toEqual({ card: { number: '1' } });
    const boleto = purchaseBody({ method: 'BOLETO', set: { 'boletoAddress.city': 'Rio' } }, 'ext-1');
    expect(boleto).toMatchObject({ paymentMethod: 'BOLETO', externalId: 'ext-1', boletoAddress: { city: 'Rio', uf: 'SP' } });
  });

  it('gives a card charge that must stay PENDING the held-for-review test card, unless --set names another', () => {
    const card = (event: 'cashin.paid' | 'cashin.expired' | 'cashin.failed', set: Record<string, unknown> = {}) => getCard(purchaseBody({ event, method: 'CREDIT_CARD', set }, 'x'));
    expect(card('cashin.paid')).toBe('4111111111111111');
    expect(card('cashin.expired')).toBe('4000000000000259');
    expect(card('cashin.failed')).toBe('4000000000000259');
    expect(card('cashin.failed', { 'card.number': '4000000000000002' })).toBe('4000000000000002');
  });
});

describe('the command line', () => {
  const parse = (event: string, opts: Partial<Parameters<typeof toTriggerOptions>[1]> = {}): TriggerOptions => toTriggerOptions(event, { set: [], ...opts });

  it('names every event when given another', () => {
    expect(usage(() => parse('cashin.settled')).message).toBe(`unknown event "cashin.settled": trigger one of ${TRIGGER_EVENTS.join(', ')}`);
  });

  it('takes the currency and method in any case, and --set typed over that purchase', () => {
    expect(parse('cashin.paid', { currency: 'cop', method: 'pse', set: ['amount=2000000'] })).toEqual({ event: 'cashin.paid', currency: 'COP', method: 'PSE', set: { amount: 2_000_000 } });
    expect(usage(() => parse('cashin.paid', { currency: 'USD' })).message).toBe('--currency must be one of BRL, COP, ARS, MXN, not USD');
  });

  it('refuses options that do not fit the event before calling anything', async () => {
    const refused = async (options: TriggerOptions): Promise<string> => {
      const error = await trigger({ ...options, baseUrl: 'http://127.0.0.1:9' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TriggerError);
      expect(error).toMatchObject({ kind: 'usage', calls: [] });
      return (error as TriggerError).message;
    };
    expect(await refused({ event: 'cashout.success', tx: '100000000' })).toBe('cashout.success is a cash-out event: name the withdrawal with --withdrawal, not --tx');
    expect(await refused({ event: 'cashin.paid', withdrawal: 'w' })).toBe('cashin.paid is a cash-in event: name the transaction with --tx, not --withdrawal');
    expect(await refused({ event: 'cashin.paid', tx: '1', set: { amount: 1 } })).toBe('--currency, --method and --set shape what trigger creates; with --tx it acts on 1 as it is');
  });
});

describe('what trigger prints', () => {
  // A cashout.success read just after its approve, while its listener was answering: pending, no reason.
  const pending = { id: 'whd_1', status: 'pending', url: null, reason: null };
  const read: TriggerResult = {
    event: 'cashout.success',
    object: { kind: 'withdrawal', id: 'w-1', created: true, status: 'WITHDRAW_APPROVED' },
    listening: { mode: 'listeners', connected: ['payouts-only'] },
    eventId: 'evt_0000000087',
    delivery: pending,
    calls: [],
  };

  it('says a pending delivery was not decided when read, and that --wait waits for it', () => {
    expect(summary(read).slice(1)).toEqual([
      'event evt_0000000087, delivery whd_1 pending via listeners mode (connected: payouts-only)',
      '  not decided when read: --wait waits for its outcome (at most 30 s)',
    ]);
    const waiting = { ...read, delivery: { ...pending, reason: 'waiting for a listener: none connected' } };
    expect(summary(waiting).slice(2)).toEqual(['  waiting for a listener: none connected']);
    expect(summary({ ...read, delivery: { ...pending, status: 'delivered' } })).toHaveLength(2);
  });

  it('words a wait that ran out with and without attempts', () => {
    const outcome = { status: 'pending', attempts: 0, lastAttempt: null, timedOut: true, reason: 'waiting for a listener: none connected' };
    expect(summary({ ...read, outcome }).slice(2)).toEqual(['outcome: still pending after 30 s, no attempt made', '  waiting for a listener: none connected']);
    const failing = { ...outcome, attempts: 2, lastAttempt: { httpStatus: 500, error: null, durationMs: 4 }, reason: null };
    expect(summary({ ...read, outcome: failing }).slice(2)).toEqual(['outcome: still pending after 30 s, 2 attempts, the last HTTP 500']);
    const delivered = { ...failing, status: 'delivered', attempts: 1, lastAttempt: { httpStatus: 200, error: null, durationMs: 4 }, timedOut: false };
    expect(summary({ ...read, outcome: delivered }).slice(2)).toEqual(['outcome: delivered, HTTP 200 after 1 attempt']);
  });
});

describe('trigger() from the package entry', () => {
  let sb: TestSandbox;
  let receiver: Receiver;
  beforeAll(async () => {
    sb = await startSandbox();
    receiver = await startReceiver(200);
  });
  afterAll(async () => {
    await receiver.close();
    await sb.stop();
  });

  it('is exported, sends the event to a --set postbackUrl and waits for its outcome', async () => {
    expect(fromPackage).toBe(trigger);
    expect(eventsFromPackage).toBe(TRIGGER_EVENTS);
    const seen: string[] = [];
    const result = await fromPackage({
      event: 'cashin.failed',
      baseUrl: sb.url,
      key: sb.config.secretKey,
      set: { postbackUrl: receiver.url },
      wait: true,
      onCall: (call) => seen.push(`${call.method} ${call.path.split('?')[0]} ${call.status}`),
    });
    expect(result).toMatchObject({ event: 'cashin.failed', object: { kind: 'transaction', created: true, status: 'BLOCKED' }, delivery: { url: receiver.url }, outcome: { status: 'delivered', attempts: 1, timedOut: false } });
    expect(seen.slice(0, 3)).toEqual(['GET /_sandbox/account 200', 'POST /transactions/v2/purchase 201', `POST /_sandbox/transactions/${result.object.id}/decline 200`]);
    expect(result.calls.map((c) => `${c.method} ${c.path.split('?')[0]} ${c.status}`)).toEqual(seen);
    const [request] = await receiver.waitForRequests(1);
    expect(request?.headers['x-sandbox-delivery']).toBe(result.delivery?.id);
  });

  it('in listeners mode says where the delivery goes: the listeners connected, or that none is and it waits', async () => {
    const { account, client } = await createAccount(sb);
    expect((await client.put('/_sandbox/webhook-url', { delivery: 'listeners' })).status).toBe(200);
    const result = await trigger({ event: 'cashin.paid', baseUrl: sb.url, key: account.secretKey });
    expect(result.listening).toEqual({ mode: 'listeners', connected: [] });
    const lines = summary(result);
    expect(lines[1]).toMatch(/^event evt_\S+, delivery whd_\S+ pending via listeners mode \(no listener connected: it waits for payments-sandbox listen with this key\)$/);
    expect(lines.join('\n')).not.toContain('no webhook URL');
    expect(result.calls.map((c) => `${c.method} ${c.path.split('?')[0]}`)).toContain('GET /_sandbox/listeners');
    // The same delivery with a listener connected, and in direct mode without a URL.
    expect(summary({ ...result, listening: { mode: 'listeners', connected: ['ana-laptop'] } })[1]).toMatch(/ via listeners mode \(connected: ana-laptop\)$/);
    expect(summary({ ...result, listening: { mode: 'direct' }, delivery: result.delivery && { ...result.delivery, url: null } })[1]).toMatch(/\(no webhook URL: set one with PUT \/_sandbox\/webhook-url or --set postbackUrl=…\)$/);
  });

  it('read before the sandbox first offered the delivery (no attempt, no reason yet), it reads again and says it waits for a listener', async () => {
    const { account, client } = await createAccount(sb);
    expect((await client.put('/_sandbox/webhook-url', { delivery: 'listeners' })).status).toBe(200);
    // A loopback stand-in in front of the sandbox: its list of deliveries reads as it does just after the commit, before the first offer.
    const stand = createServer((req, res) => {
      void (async () => {
        const body = await new Promise<Buffer>((resolve) => {
          const chunks: Buffer[] = [];
          req.on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve(Buffer.concat(chunks)));
        });
        const answer = await fetch(`${sb.url}${req.url ?? '/'}`, { method: req.method, headers: { authorization: String(req.headers.authorization), 'content-type': 'application/json' }, ...(req.method === 'GET' ? {} : { body: body.toString('utf8') }) });
        let text = await answer.text();
        if (req.method === 'GET' && req.url?.startsWith('/_sandbox/webhooks?')) {
          const page = JSON.parse(text) as { data: Array<Record<string, unknown>> };
          text = JSON.stringify({ ...page, data: page.data.map((d) => ({ ...d, attempts: [], reason: null, waitingSince: null, waitUntil: null })) });
        }
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(text);
      })();
    });
    await new Promise<void>((resolve) => stand.listen(0, '127.0.0.1', resolve));
    try {
      const result = await trigger({ event: 'cashin.paid', baseUrl: `http://127.0.0.1:${(stand.address() as AddressInfo).port}`, key: account.secretKey });
      expect(result.delivery).toMatchObject({ status: 'pending', reason: expect.stringMatching(/^waiting for a listener: no listener of the account that takes cashin\.paid is connected; /) });
      expect(result.calls.map((c) => `${c.method} ${c.path.split('?')[0]}`)).toContain(`GET /_sandbox/webhooks/${result.delivery?.id}`);
    } finally {
      await new Promise<void>((resolve) => stand.close(() => resolve()));
    }
  });
});
