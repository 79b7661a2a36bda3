// The sandbox's own deliveries, as a receiver on loopback takes them, held to openapi.yaml's
// `webhooks` section: every event the sandbox sends, each driven by the control API, body and
// headers checked by the same validator the proxy uses.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookValidator } from '../../src/http/webhook-validation.js';
import { loadOpenApi } from '../../src/spec/openapi.js';
import { createAccount } from '../helpers/catalog.js';
import { control, copBody, created, pixBody } from '../helpers/purchases.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { hmacHex, startReceiver, type ReceivedRequest, type Receiver } from '../helpers/webhooks.js';
import { cashedOut, cashOutBody, control as withdrawalControl, fund } from '../helpers/withdrawals.js';

let sb: TestSandbox;
let receiver: Receiver;
let validator: WebhookValidator;
/** Every webhook the account was sent, as the receiver took it. */
let requests: ReceivedRequest[];
let secret: string;

const eventOf = (request: ReceivedRequest): string => String((request.body as { event?: unknown } | undefined)?.event);

/** Every event the sandbox sends, each driven by the control API as an integration's test would. */
async function driveEveryEvent(): Promise<void> {
  const { account, client } = await createAccount(sb, undefined, { name: 'Loja Contrato' });
  const postbackUrl = receiver.url;
  const ok = async (id: string, action: 'pay' | 'expire' | 'decline' | 'refund' | 'chargeback', body?: Record<string, unknown>): Promise<void> => {
    const res = await control(client, id, action, body);
    expect(res.status, `${action}: ${JSON.stringify(res.body)}`).toBe(200);
  };
  // A purchase paid (Pix and COP PSE), one expired, one declined, one refunded, one charged back (infraction).
  await ok((await created(client, pixBody({ postbackUrl, externalId: 'contract-pix-paid' }))).id, 'pay');
  await ok((await created(client, copBody({ postbackUrl, externalId: 'contract-cop-paid', paymentMethod: 'PSE' }))).id, 'pay');
  await ok((await created(client, pixBody({ postbackUrl, externalId: 'contract-expired' }))).id, 'expire');
  await ok((await created(client, pixBody({ postbackUrl, externalId: 'contract-declined' }))).id, 'decline', { message: 'Saldo insuficiente' });
  const refunded = await created(client, pixBody({ postbackUrl, externalId: 'contract-refunded' }));
  await ok(refunded.id, 'pay');
  await ok(refunded.id, 'refund');
  const chargedBack = await created(client, pixBody({ postbackUrl, externalId: 'contract-infraction' }));
  await ok(chargedBack.id, 'pay');
  await ok(chargedBack.id, 'chargeback');
  // Withdrawals: paid out, rejected, paid out and sent back.
  await fund(client, 100_000);
  const withdrawal = async (externalId: string, ...actions: Array<'approve' | 'reject' | 'return'>): Promise<void> => {
    const w = await cashedOut(client, cashOutBody({ postbackUrl, externalId }));
    for (const action of actions) expect((await withdrawalControl(client, w.id, action, { message: `${action} in a test` })).status, action).toBe(200);
  };
  await withdrawal('contract-out-success', 'approve');
  await withdrawal('contract-out-rejected', 'reject');
  await withdrawal('contract-out-returned', 'approve', 'return');

  // 6 paid-or-ended cash-ins send 8 webhooks (the refunded and charged-back one also sent cashin.paid); 3 withdrawals send 4.
  requests = await receiver.waitForRequests(12, 10_000);
  secret = account.webhookSecret;
}

beforeAll(async () => {
  // Withdrawals move only when told: each end state is a control call here.
  sb = await startSandbox({ withdrawalStepMs: 3_600_000 });
  receiver = await startReceiver(200);
  validator = new WebhookValidator(await loadOpenApi());
  await driveEveryEvent();
});
afterAll(async () => {
  await receiver.close();
  await sb.stop();
});

describe("the sandbox's deliveries against openapi.yaml's webhooks", () => {
  it('every event matches its webhook: body, headers and signature', () => {
    expect(requests.map(eventOf).sort()).toEqual(
      ['cashin.paid', 'cashin.paid', 'cashin.paid', 'cashin.paid', 'cashin.expired', 'cashin.failed', 'cashin.refunded', 'infraction.updated', 'cashout.success', 'cashout.failed', 'cashout.success', 'cashout.returned'].sort(),
    );
    expect(new Set(requests.map(eventOf))).toEqual(new Set(validator.events));
    for (const request of requests) {
      const label = `${eventOf(request)} ${request.rawBody}`;
      expect(validator.eventOf(request.body), label).toBe(eventOf(request));
      expect(validator.check(request.body, request.headers), label).toEqual([]);
      expect(request.headers['x-signature'], label).toBe(hmacHex(secret, request.rawBody));
    }
  });

  it("a delivery's body with a planted difference is flagged, where it was planted", () => {
    const paid = requests.find((r) => eventOf(r) === 'cashin.paid');
    expect(paid).toBeDefined();
    const body = JSON.parse(paid?.rawBody ?? '{}') as { payload: Record<string, unknown> };
    body.payload.withdrawal_id = body.payload.transaction_id;
    delete body.payload.receiver;
    expect(validator.check(body, paid?.headers ?? {}).map((p) => [p.pointer, p.rule])).toEqual(
      expect.arrayContaining([
        ['/body/payload/receiver', 'required'],
        ['/body/payload/withdrawal_id', 'type'],
      ]),
    );
  });
});
