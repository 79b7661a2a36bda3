import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { WebhookValidator } from '../../src/http/webhook-validation.js';
import { loadOpenApi } from '../../src/spec/openapi.js';

/** One asynchronous message of a shipped PactV4 file: the body the consumer expects, and its headers. */
interface PactMessage {
  type: string;
  description: string;
  contents: { content: unknown; contentType: string };
  metadata: Record<string, string>;
}

const PACT = new URL('../../pacts/merchant-webhook-handler-payments-api.json', import.meta.url);
const messages = (JSON.parse(readFileSync(PACT, 'utf8')) as { interactions: PactMessage[] }).interactions.filter((i) => i.type === 'Asynchronous/Messages');

/** The pact's headers as a receiver's request has them: lowercase names, and no Pact-only keys. */
const headersOf = (metadata: Record<string, string>): Record<string, string> => Object.fromEntries(Object.entries(metadata).flatMap(([name, value]) => (name === 'contentType' ? [] : [[name.toLowerCase(), value]])));

/** A paid cash-in's body as the sandbox sends it (the shipped pact's cashin.paid), copied afresh for each planted change. */
function paidBody(): { event: string; environment: string; payload: Record<string, unknown> } {
  const paid = messages.find((m) => (m.contents.content as { event: string }).event === 'cashin.paid');
  return structuredClone(paid?.contents.content) as { event: string; environment: string; payload: Record<string, unknown> };
}

const SIGNED = { 'x-signature': 'a'.repeat(64) };

describe("openapi.yaml's webhooks section", () => {
  let validator: WebhookValidator;
  beforeAll(async () => {
    validator = new WebhookValidator(await loadOpenApi());
  });

  it('has every event the sandbox delivers, as WebhookEventName lists them', async () => {
    const document = await loadOpenApi();
    const names = (document.components?.schemas?.WebhookEventName as { enum: string[] }).enum;
    expect([...validator.events].sort()).toEqual([...names].sort());
    expect(validator.events).toEqual(expect.arrayContaining(['cashin.paid', 'cashin.expired', 'cashin.failed', 'cashin.refunded', 'infraction.updated', 'cashout.success', 'cashout.failed', 'cashout.returned']));
  });

  it('holds every shipped Pact message, body and headers', () => {
    expect(messages.length).toBeGreaterThanOrEqual(9);
    const events = new Set(messages.map((m) => (m.contents.content as { event: string }).event));
    expect([...events].sort()).toEqual([...validator.events].sort());
    for (const message of messages) expect(validator.check(message.contents.content, headersOf(message.metadata)), message.description).toEqual([]);
  });

  it('flags a planted wrong body where it was planted', () => {
    const asText = paidBody();
    asText.payload.amount = '15000';
    expect(validator.check(asText, SIGNED)).toEqual([{ pointer: '/body/payload/amount', rule: 'type', message: '/payload/amount must be integer' }]);

    const unpaid = paidBody();
    unpaid.payload.payer = null;
    expect(validator.check(unpaid, SIGNED).map((p) => [p.pointer, p.rule])).toEqual([['/body/payload/payer', 'type']]);

    const cashOut = paidBody();
    cashOut.event = 'cashout.success';
    expect(validator.check(cashOut, SIGNED).map((p) => [p.pointer, p.rule])).toEqual(
      expect.arrayContaining([
        ['/body/payload/transaction_id', 'type'],
        ['/body/payload/withdrawal_id', 'type'],
        ['/body/payload/receiver/ispb', 'required'],
      ]),
    );

    const extra = paidBody();
    extra.payload.status = 'PAID';
    expect(validator.check(extra, SIGNED).map((p) => [p.pointer, p.rule])).toEqual([['/body/payload/status', 'additionalProperties']]);
  });

  it('flags an event no webhook has against the envelope, and the headers of a known one', () => {
    const unknown = paidBody();
    unknown.event = 'cashin.settled';
    expect(validator.check(unknown, SIGNED).map((p) => [p.pointer, p.rule])).toEqual([['/body/event', 'enum']]);
    expect(validator.check(paidBody(), {})).toEqual([{ pointer: '/header/x-signature', rule: 'required', message: 'header x-signature is required' }]);
    expect(validator.check(paidBody(), { 'x-signature': 'NOT-HEX' }).map((p) => [p.pointer, p.rule])).toEqual([['/header/x-signature', 'pattern']]);
    expect(validator.check(paidBody(), { ...SIGNED, 'x-sandbox-event': 'cashin.settled' }).map((p) => [p.pointer, p.rule])).toEqual([['/header/x-sandbox-event', 'enum']]);
  });
});
