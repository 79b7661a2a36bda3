import { beforeAll, describe, expect, it } from 'vitest';
import { Routes } from '../../src/http/match.js';
import type { RecordedExchange } from '../../src/proxy/drift-har.js';
import { Carried, planReplay, renderPath, renderTemplate, type ControlStep, type PlanStep, type RequestStep } from '../../src/proxy/drift-plan.js';
import { loadOpenApi } from '../../src/spec/openapi.js';

let routes: Routes;
beforeAll(async () => {
  routes = new Routes(await loadOpenApi());
});

let entry = 0;
function exchange(method: string, target: string, status: number, response: unknown, body?: unknown, extra: Partial<RecordedExchange> = {}): RecordedExchange {
  const url = new URL(target, 'https://api.example.com');
  entry += 1;
  return { entry, method, path: url.pathname, query: [...url.searchParams], body, status, response, authorized: true, webhook: false, ...extra };
}

const tx = (id: string, overrides: Record<string, unknown> = {}) => ({ id, transactionId: id, currency: 'BRL', method: 'PIX', status: 'PENDING', statusReason: null, amount: 15000, externalId: 'order-1', pixCode: '000201…', ...overrides });
const purchase = { paymentMethod: 'PIX', amount: 15000, externalId: 'order-1', name: 'Maria' };

/** Each step as a line: requests with their paths as the sandbox would get them (a carried value shown as <entry pointer>). */
function lines(steps: readonly PlanStep[]): string[] {
  const shown = (value: Carried): string => `<${value.entry} ${value.pointer}>`;
  return steps.map((step) => decodeURIComponent(step.kind === 'webhook' ? `webhook #${step.entry} ${step.event} of ${step.resource} ${step.id ? shown(step.id) : 'unknown'}` : step.kind === 'control' ? `control ${renderPath(step.path, shown)}${step.body ? ` ${JSON.stringify(step.body)}` : ''} (${step.reason})` : `#${step.entry} ${step.method} ${renderPath(step.path, shown)}${step.query.length ? `?${step.query.map(([n, v]) => `${n}=${v instanceof Carried ? shown(v) : v}`).join('&')}` : ''}`));
}


describe('replay plan: carried values', () => {

  it("replaces an id an answer gave by the sandbox's value at the same pointer, in path, query and body; the client's own values stay", () => {
    entry = 0;
    const plan = planReplay(
      [
        exchange('POST', '/transactions/v2/purchase', 201, tx('9876543210'), purchase),
        exchange('GET', '/transactions/9876543210', 200, tx('9876543210')),
        exchange('GET', '/transactions/order-1?searchBy=externalId', 200, tx('9876543210')),
        exchange('POST', '/transactions/refund/9876543210', 200, tx('9876543210', { status: 'REFUNDED', statusReason: 'REFUNDED' }), { amount: 15000 }),
        exchange('GET', '/_sandbox/webhooks?transactionId=9876543210', 200, { data: [] }),
      ],
      routes,
    );
    expect(lines(plan.steps)).toEqual([
      '#1 POST /transactions/v2/purchase',
      '#2 GET /transactions/<1 /id>',
      '#3 GET /transactions/order-1?searchBy=externalId',
      '#4 POST /transactions/refund/<1 /id>',
      '#5 GET /_sandbox/webhooks?transactionId=<1 /id>',
    ]);
    expect(plan.captured).toEqual([1]);
    const first = plan.steps[0] as RequestStep;
    expect(renderTemplate(first.body ?? null, () => 'x')).toEqual(purchase);
    expect(first.sent).toEqual(purchase);
  });

  it('carries a value from inside a body into a body, and never an enum word or a short value', () => {
    entry = 0;
    const plan = planReplay(
      [
        exchange('POST', '/v2/products', 201, { id: 'prd_abc123', name: 'Plano', kind: 'DIGITAL', n: 'ab' }, { name: 'Plano' }),
        exchange('POST', '/v2/offers', 201, { id: 'off_1' }, { productId: 'prd_abc123', kind: 'DIGITAL', code: 'ab', name: 'Plano' }),
      ],
      routes,
    );
    const offer = plan.steps[1] as RequestStep;
    expect(offer.body).toEqual({ productId: new Carried(1, '/id', 'prd_abc123'), kind: 'DIGITAL', code: 'ab', name: 'Plano' });
    expect(offer.sent).toEqual({ kind: 'DIGITAL', code: 'ab', name: 'Plano' });
  });

  it("cuts the upstream's path prefix off the recorded path", () => {
    entry = 0;
    const plan = planReplay([exchange('GET', '/api/v1/users/balance', 200, { balance: 1 })], routes);
    expect((plan.steps[0] as RequestStep).recordedPath).toBe('/users/balance');
    expect((plan.steps[0] as RequestStep).operation?.operationId).toBe('getBalance');
  });
});

describe('replay plan: driven states', () => {
  it('pays, expires, fills before the read that first shows the real side did, and only then', () => {
    entry = 0;
    const plan = planReplay(
      [
        exchange('POST', '/transactions/v2/purchase', 201, tx('111'), purchase),
        exchange('GET', '/transactions/111', 200, tx('111')),
        exchange('GET', '/transactions/111', 200, tx('111', { status: 'APPROVED', paidRail: 'PIX' })),
        exchange('GET', '/transactions/111', 200, tx('111', { status: 'APPROVED', paidRail: 'PIX' })),
        exchange('POST', '/transactions/v2/purchase', 201, tx('222', { method: 'PIX_BOLETO', pixCode: '', paymentInstruction: {} }), { ...purchase, paymentMethod: 'PIX_BOLETO' }),
        exchange('GET', '/transactions/222', 200, tx('222', { method: 'PIX_BOLETO', paymentInstruction: { type: 'BOLETO' } })),
        exchange('GET', '/transactions/222', 200, tx('222', { method: 'PIX_BOLETO', status: 'APPROVED', paidRail: 'BOLETO' })),
        exchange('POST', '/transactions/v2/purchase', 201, tx('333'), purchase),
        exchange('GET', '/transactions/333', 200, tx('333', { status: 'BLOCKED', statusReason: 'EXPIRED' })),
      ],
      routes,
    );
    expect(lines(plan.steps)).toEqual([
      '#1 POST /transactions/v2/purchase',
      '#2 GET /transactions/<1 /id>',
      'control /_sandbox/transactions/<1 /id>/pay (paid)',
      '#3 GET /transactions/<1 /id>',
      '#4 GET /transactions/<1 /id>',
      '#5 POST /transactions/v2/purchase',
      'control /_sandbox/transactions/<5 /id>/fill (instruction filled)',
      '#6 GET /transactions/<5 /id>',
      'control /_sandbox/transactions/<5 /id>/pay {"rail":"BOLETO"} (paid)',
      '#7 GET /transactions/<5 /id>',
      '#8 POST /transactions/v2/purchase',
      'control /_sandbox/transactions/<8 /id>/expire (expired)',
      '#9 GET /transactions/<8 /id>',
    ]);
  });

  it("drives nothing for a change the client's own request made (a refund), and refunds for one it did not", () => {
    entry = 0;
    const paid = tx('111', { status: 'APPROVED' });
    const refunded = tx('111', { status: 'REFUNDED', statusReason: 'REFUNDED' });
    const plan = planReplay(
      [
        exchange('POST', '/transactions/v2/purchase', 201, tx('111'), purchase),
        exchange('GET', '/transactions/111', 200, paid),
        exchange('POST', '/transactions/refund/111', 200, refunded),
        exchange('GET', '/transactions/111', 200, refunded),
        exchange('POST', '/transactions/v2/purchase', 201, tx('222'), purchase),
        exchange('GET', '/transactions/222', 200, tx('222', { status: 'REFUNDED', statusReason: 'REFUNDED' })),
      ],
      routes,
    );
    expect(lines(plan.steps).filter((line) => line.startsWith('control'))).toEqual([
      'control /_sandbox/transactions/<1 /id>/pay (paid)',
      'control /_sandbox/transactions/<5 /id>/pay (paid)',
      'control /_sandbox/transactions/<5 /id>/refund (refunded)',
    ]);
  });

  it('drives the state a recorded webhook announces where it arrived, before the read; not when the next request on it is the cause', () => {
    entry = 0;
    const webhook = (event: string, id: string): RecordedExchange =>
      exchange('POST', '/_proxy/webhooks', 200, undefined, { event, payload: { transaction_id: id, withdrawal_id: null } }, { webhook: true });
    const plan = planReplay(
      [
        exchange('POST', '/transactions/v2/purchase', 201, tx('111'), purchase),
        webhook('cashin.paid', '111'),
        exchange('GET', '/transactions/111', 200, tx('111', { status: 'APPROVED' })),
        webhook('cashin.refunded', '111'),
        exchange('POST', '/transactions/refund/111', 200, tx('111', { status: 'REFUNDED', statusReason: 'REFUNDED' })),
      ],
      routes,
    );
    expect(lines(plan.steps)).toEqual([
      '#1 POST /transactions/v2/purchase',
      'webhook #2 cashin.paid of transaction <1 /id>',
      'control /_sandbox/transactions/<1 /id>/pay (paid)',
      '#3 GET /transactions/<1 /id>',
      'webhook #4 cashin.refunded of transaction <1 /id>',
      '#5 POST /transactions/refund/<1 /id>',
    ]);
    expect(plan.webhooks).toEqual([2, 4]);
  });

  it('funds a cash-out the real account paid, and takes a withdrawal through processing to its end', () => {
    entry = 0;
    const withdrawal = { id: '0d4f6c9e-2b1a-4c3d-8e5f-6a7b8c9d0e1f', totalAmount: 1150, amount: 1000, status: 'WITHDRAW_REQUEST', error: null };
    const lookup = (status: string, errorMessage: string | null = null) => ({ withdrawalId: withdrawal.id, amount: 1000, status, errorMessage });
    const plan = planReplay(
      [
        exchange('POST', '/withdraws/cash-out', 201, withdrawal, { amount: 1000, pixKey: 'k', pixType: 'EVP' }),
        exchange('GET', `/withdraws/collect/${withdrawal.id}`, 200, lookup('WITHDRAW_PROCESSING')),
        exchange('GET', `/withdraws/collect/${withdrawal.id}`, 200, lookup('WITHDRAW_REJECTED', 'Conta encerrada')),
        exchange('POST', '/withdraws/cash-out', 400, { message: 'Insufficient balance' }, { amount: 10 ** 9, pixKey: 'k', pixType: 'EVP' }),
      ],
      routes,
    );
    expect(lines(plan.steps)).toEqual([
      'control /_sandbox/balance/credit {"amount":1150} (funded)',
      '#1 POST /withdraws/cash-out',
      'control /_sandbox/clock/advance {"ms":2000} (processing)',
      '#2 GET /withdraws/collect/<1 /id>',
      'control /_sandbox/withdrawals/<1 /id>/reject {"message":"Conta encerrada"} (rejected)',
      '#3 GET /withdraws/collect/<1 /id>',
      '#4 POST /withdraws/cash-out',
    ]);
    expect((plan.steps.filter((s): s is ControlStep => s.kind === 'control')).every((s) => s.method === 'POST')).toBe(true);
  });
});
