// Styles of integrations calling payouts, refunds, the balance and MXN, written from the
// contract (sandbox-contract.md, "Payouts, refunds, balance") and what the evidence it names
// does, not from that code: a typed client with a strict withdrawal enum that translates
// the exact error messages, a gateway that strips key punctuation and maps statuses and
// balance figures, a webhook endpoint that dispatches cash-out events by withdrawal_id, and
// a Mexican SPEI client that reads the CLABE from the 201.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../helpers/catalog.js';
import { control, created, pixBody } from '../helpers/purchases.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';
import { receiversClosedAfterEach } from '../helpers/webhooks.js';
import { advance, fund, MAGIC } from '../helpers/withdrawals.js';

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startSandbox({ withdrawalStepMs: 2_000, instructionDelayMs: 600_000 });
});
afterAll(() => sb.stop());
const receiver = receiversClosedAfterEach();

async function funded(amount = 1_000_000): Promise<{ client: Client; secret: string; key: string }> {
  const { account, client } = await createAccount(sb, undefined, { name: 'Marketplace' });
  await fund(client, amount);
  return { client, secret: account.webhookSecret, key: account.secretKey };
}

// ─── Style 1: a typed client, strict enum, error messages translated by an exact table ───

/** The five statuses the strict client's enum has (it has no WITHDRAW_RETURNED: that arrives as a webhook). */
const STRICT = ['WITHDRAW_REQUEST', 'WITHDRAW_PROCESSING', 'WITHDRAW_APPROVED', 'WITHDRAW_REJECTED', 'WITHDRAW_ERROR'] as const;
/** The messages the client translates for its users; anything else falls to a generic text. */
const TRANSLATED: Record<string, string> = {
  'Invalid amount': 'Valor inválido.',
  'Insufficient balance': 'Saldo insuficiente.',
  'Invalid PIX key or account closed': 'Chave PIX inválida ou conta encerrada.',
  'Transaction already processed': 'Transação já processada.',
  'Transaction not found': 'Transação não encontrada.',
  Unauthorized: 'Falha na autenticação com a adquirente.',
  'Sale value below minimum': 'O valor da transação está abaixo do mínimo permitido.',
};

interface StrictResult {
  ok: boolean;
  status?: (typeof STRICT)[number];
  translated?: string;
  totalAmount?: number;
}

async function strictWithdraw(baseUrl: string, key: string, body: Record<string, unknown>): Promise<StrictResult> {
  const res = await fetch(`${baseUrl}/withdraws/cash-out`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`secret:${key}`).toString('base64')}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { status?: string; message?: string; totalAmount?: number };
  if (!res.ok) return { ok: false, translated: TRANSLATED[json.message ?? ''] ?? 'Erro ao processar operação.' };
  if (!STRICT.includes(json.status as (typeof STRICT)[number])) throw new TypeError(`unknown withdrawal status ${String(json.status)}`);
  return { ok: true, status: json.status as (typeof STRICT)[number], totalAmount: json.totalAmount };
}

describe('a typed client with a strict withdrawal enum and a table of exact messages', () => {
  it('parses the 201 and translates every refusal it can meet (never the generic fallback)', async () => {
    const { key } = await funded(20_000);
    expect(await strictWithdraw(sb.url, key, { amount: 10_000, pixKey: '52998224725', pixType: 'CPF', externalId: 'w-1' })).toEqual({ ok: true, status: 'WITHDRAW_REQUEST', totalAmount: 10_100 });
    for (const [body, text] of [
      [{ amount: 0, pixKey: '52998224725', pixType: 'CPF' }, 'Valor inválido.'],
      [{ amount: 50_000, pixKey: '52998224725', pixType: 'CPF' }, 'Saldo insuficiente.'],
      [{ amount: 100, pixKey: '529.982.247-25', pixType: 'CPF' }, 'Chave PIX inválida ou conta encerrada.'],
      [{ amount: 100, pixKey: MAGIC.closed.EMAIL, pixType: 'EMAIL' }, 'Chave PIX inválida ou conta encerrada.'],
      [{ amount: 100, pixKey: '52998224725', pixType: 'CPF', externalId: 'w-1' }, 'Transação já processada.'],
    ] as const) {
      expect(await strictWithdraw(sb.url, key, body), JSON.stringify(body)).toEqual({ ok: false, translated: text });
    }
    expect(await strictWithdraw(sb.url, 'sk_test_revoked', { amount: 100, pixKey: '52998224725', pixType: 'CPF' })).toEqual({ ok: false, translated: 'Falha na autenticação com a adquirente.' });
  });

  it("its lookup parses every status the sandbox reaches before a return", async () => {
    const { client } = await funded();
    const seen = new Set<string>();
    for (const pixKey of ['52998224725', MAGIC.reject.CPF, MAGIC.fail.CPF]) {
      const w = (await client.post<{ id: string }>('/withdraws/cash-out', { amount: 1_000, pixKey, pixType: 'CPF' })).body;
      for (let step = 0; step < 3; step++) {
        const status = (await client.get<{ status: string }>(`/withdraws/collect/${w.id}?searchBy=id`)).body.status;
        expect(STRICT).toContain(status);
        seen.add(status);
        await advance(client, 2_000);
      }
    }
    expect([...seen].sort()).toEqual([...STRICT].sort());
  });
});

// ─── Style 2: a gateway provider that normalises keys and maps statuses and figures ───

type GatewayStatus = 'PENDING' | 'APPROVED' | 'REFUNDED' | 'FAILED' | 'ERROR_SYSTEM';
const gatewayStatus = (s: string): GatewayStatus =>
  s === 'WITHDRAW_REQUEST' || s === 'WITHDRAW_PROCESSING' ? 'PENDING' : s === 'WITHDRAW_APPROVED' ? 'APPROVED' : s === 'WITHDRAW_RETURNED' ? 'REFUNDED' : s === 'WITHDRAW_ERROR' ? 'FAILED' : 'ERROR_SYSTEM';

async function gatewayWithdraw(client: Client, input: { pixType: string; pixKey: string; amount: number; id: string; document?: string; webhookUrl: string }) {
  // Document and phone keys go as digits only.
  const pixKey = ['CPF', 'CNPJ', 'PHONE'].includes(input.pixType) ? input.pixKey.replace(/[^\d]/g, '') : input.pixKey;
  const res = await client.post<{ id: string; status: string }>('/withdraws/cash-out', { pixType: input.pixType, pixKey, amount: input.amount, externalId: input.id, document: input.document, postbackUrl: `${input.webhookUrl}/123` });
  return { status: res.status, providerWithdrawalId: res.body.id, mapped: gatewayStatus(res.body.status) };
}

describe('a gateway provider: keys stripped, statuses and balance mapped', () => {
  it('pays out to punctuated CPF, CNPJ and phone keys, stripped before sending', async () => {
    const { client } = await funded();
    const hook = await receiver(200);
    for (const [pixType, pixKey] of [['CPF', '529.982.247-25'], ['CNPJ', '11.222.333/0001-81'], ['PHONE', '+55 (11) 98765-4321']] as const) {
      const out = await gatewayWithdraw(client, { pixType, pixKey, amount: 1_500, id: `gw-${pixType}`, webhookUrl: hook.url.replace(/\/hook$/, '') });
      expect(out).toMatchObject({ status: 201, mapped: 'PENDING' });
    }
  });

  it('maps a paid-out, a failed and a returned withdrawal, and reads the balance figures it totals', async () => {
    const { client } = await funded(100_000);
    const paid = await gatewayWithdraw(client, { pixType: 'EVP', pixKey: '3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70', amount: 10_000, id: 'gw-paid', webhookUrl: 'http://127.0.0.1:9' });
    const failed = await gatewayWithdraw(client, { pixType: 'EVP', pixKey: MAGIC.fail.EVP, amount: 10_000, id: 'gw-failed', webhookUrl: 'http://127.0.0.1:9' });
    const returned = await gatewayWithdraw(client, { pixType: 'EVP', pixKey: MAGIC.return.EVP, amount: 10_000, id: 'gw-returned', webhookUrl: 'http://127.0.0.1:9' });
    await advance(client, 6_000);
    const mapped = async (id: string) => gatewayStatus((await client.get<{ status: string }>(`/withdraws/collect/${id}`)).body.status);
    expect([await mapped(paid.providerWithdrawalId), await mapped(failed.providerWithdrawalId), await mapped(returned.providerWithdrawalId)]).toEqual(['APPROVED', 'FAILED', 'REFUNDED']);

    const tx = await created(client, pixBody({ amount: 20_000 }));
    await control(client, tx.id, 'pay');
    await control(client, tx.id, 'chargeback');
    const data = (await client.get<{ balance: number; pendingBalance: number; garanteeBalance: number; precautionaryBlock: number }>('/users/balance')).body;
    const figures = { available: data.balance, blocked: data.precautionaryBlock, pending: data.pendingBalance, reserved: data.garanteeBalance, total: data.balance + data.pendingBalance + data.garanteeBalance };
    // 100,000 − the paid-out 10,100; the Pix's 19,802 in and its 20,000 blocked.
    expect(figures).toEqual({ available: 100_000 - 10_100 + 19_802 - 20_000, blocked: 20_000, pending: 0, reserved: 0, total: 89_702 });
  });

  it('refunds with the amount it was paid, reading the id back', async () => {
    const { client } = await funded();
    const tx = await created(client, pixBody({ amount: 7_500 }));
    await control(client, tx.id, 'pay');
    const res = await client.post<{ id: string; status: string }>(`/transactions/refund/${tx.id}`, { amount: 7_500 });
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(tx.id);
  });
});

// ─── Style 3: a webhook endpoint dispatching cash-in and cash-out events ───

type Handled = { kind: 'payment'; id: string; status: string } | { kind: 'payout'; id: string; status: 'Completed' | 'Failed'; reason: string | null; receiver: string | null };

function endpoint(raw: string, signature: string | undefined, secret: string): Handled | 'ignored' {
  if (createHmac('sha256', secret).update(raw).digest('hex') !== signature) throw new Error('bad signature');
  const body = JSON.parse(raw) as { event: string; payload: { transaction_id: string | null; withdrawal_id: string | null; error_message: string | null; receiver?: { name?: string } } };
  const p = body.payload;
  // Its validator: one of the two ids must be there.
  if (!p.transaction_id && !p.withdrawal_id) throw new Error('transaction_id or withdrawal_id required');
  switch (body.event) {
    case 'cashout.success':
      return { kind: 'payout', id: p.withdrawal_id ?? '', status: 'Completed', reason: null, receiver: p.receiver?.name ?? null };
    case 'cashout.failed':
      return { kind: 'payout', id: p.withdrawal_id ?? '', status: 'Failed', reason: p.error_message ?? 'payout failed', receiver: null };
    case 'cashout.returned':
      return { kind: 'payout', id: p.withdrawal_id ?? '', status: 'Failed', reason: p.error_message ?? 'returned', receiver: null };
    case 'cashin.paid':
    case 'cashin.refunded':
      return { kind: 'payment', id: p.transaction_id ?? '', status: body.event };
    default:
      return 'ignored';
  }
}

describe('a webhook endpoint for cash-in and cash-out events', () => {
  it('takes each cash-out event by its withdrawal_id, signed with the account secret', async () => {
    const { client, secret } = await funded();
    const hook = await receiver(200);
    await client.put('/_sandbox/webhook-url', { url: hook.url });
    const ok = (await client.post<{ id: string; receiverName: string }>('/withdraws/cash-out', { amount: 1_000, pixType: 'EVP', pixKey: MAGIC.return.EVP })).body;
    const bad = (await client.post<{ id: string }>('/withdraws/cash-out', { amount: 1_000, pixType: 'EVP', pixKey: MAGIC.reject.EVP })).body;
    await advance(client, 6_000);
    const handled = (await hook.waitForRequests(3)).map((r) => endpoint(r.rawBody, r.headers['x-signature'] as string | undefined, secret));
    expect(handled).toEqual(
      expect.arrayContaining([
        { kind: 'payout', id: ok.id, status: 'Completed', reason: null, receiver: ok.receiverName },
        { kind: 'payout', id: bad.id, status: 'Failed', reason: expect.stringMatching(/\S/), receiver: null },
        { kind: 'payout', id: ok.id, status: 'Failed', reason: expect.stringMatching(/return/i), receiver: null },
      ]),
    );
  });
});

// ─── Style 4: a Mexican SPEI client reading the CLABE and costFee from the 201 ───

describe('a Mexican SPEI integration', () => {
  it('sends its body (digits-only document, phone only when 8 to 12 digits) and reads clabe and costFee from the 201', async () => {
    const { key } = await funded();
    const auth = `Basic ${Buffer.from(`secret:${key}`).toString('base64')}`;
    const create = async (phone: string | undefined) => {
      const digits = (phone ?? '').replace(/\D/g, '');
      const body: Record<string, unknown> = {
        name: 'Sofía',
        email: 'sofia@example.com',
        amount: 19_900,
        currency: 'MXN',
        paymentMethod: 'SPEI',
        description: 'Suscripción',
        responsibleDocument: '58.097.105/0001-90'.replace(/\D/g, ''),
        responsibleExternalId: '58097105000190',
        externalId: `mx-${digits || 'nophone'}`,
      };
      if (digits.length >= 8 && digits.length <= 12) body.phone = digits;
      const res = await fetch(`${sb.url}/transactions/v2/purchase`, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: res.status, traceId: res.headers.get('x-trace-id'), data: (await res.json()) as { id: string; clabe?: string; costFee?: number; status?: string } };
    };
    for (const phone of ['+52 55 1234 5678', undefined, '+52 1 55 1234 5678 999']) {
      const out = await create(phone);
      expect(out.status).toBe(201);
      expect(out.traceId).toBeTruthy();
      expect(out.data.clabe).toMatch(/^\d{18}$/);
      expect(out.data.costFee).toBe(700);
      // Its status mapping: anything not approved or failed is pending.
      const mapped = out.data.status === 'APPROVED' ? 'approved' : out.data.status === 'REJECTED' ? 'failed' : 'pending';
      expect(mapped).toBe('pending');
      const lookup = await fetch(`${sb.url}/transactions/${encodeURIComponent(out.data.id)}`, { headers: { authorization: auth } });
      expect(((await lookup.json()) as { clabe: string }).clabe).toBe(out.data.clabe);
    }
  });
});
