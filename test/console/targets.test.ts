import { describe, expect, it } from 'vitest';
import { accountTargetOf, deliveryTargetOf, paidByOf, textOf, webhookTargetOf, type DeliveryTarget } from '../../src/console/client/targets.js';

const HOOK = 'http://localhost:3000/hooks';
const ok = (via?: string) => ({ httpStatus: 200, error: null, ...(via && { via }) });
const delivery = (over: Partial<DeliveryTarget>): DeliveryTarget => ({ url: null, status: 'pending', waitingSince: null, attempts: [], ...over });

describe('where the console says a delivery goes (the arrow of its card)', () => {
  it('names the listener that carried a delivery with no URL, never "no URL (undeliverable)" (issue 43: it said so beside "via listener ana-laptop")', () => {
    const carried = delivery({ status: 'delivered', attempts: [ok('listener ana-laptop')] });
    for (const mode of ['listeners', 'direct', undefined] as const) {
      expect(textOf(deliveryTargetOf(carried, mode)), String(mode)).toBe('listener ana-laptop (to its --forward-to; no URL set)');
    }
    // The listener whose 2xx settled it, not a later one that answered a replay with an error.
    const replayed = delivery({ status: 'delivered', attempts: [ok('listener ana-laptop'), { httpStatus: 500, error: null, via: 'listener ci-7' }] });
    expect(textOf(deliveryTargetOf(replayed, 'listeners'))).toBe('listener ana-laptop (to its --forward-to; no URL set)');
  });

  it("names the URL and the listener that took it there, or the account's listeners before any attempt", () => {
    expect(textOf(deliveryTargetOf(delivery({ url: HOOK, status: 'delivered', attempts: [ok('listener laptop')] }), 'listeners'))).toBe(`${HOOK} via listener laptop`);
    expect(textOf(deliveryTargetOf(delivery({ url: HOOK, waitingSince: '2026-12-02T12:00:00.000Z' }), 'listeners'))).toBe(`${HOOK} via the account's listeners`);
    expect(textOf(deliveryTargetOf(delivery({ url: HOOK }), 'listeners'))).toBe(`${HOOK} via the account's listeners`);
    expect(textOf(deliveryTargetOf(delivery({ waitingSince: '2026-12-02T12:00:00.000Z' }), undefined))).toBe("the account's listeners (to their --forward-to; no URL set)");
    // An attempt that found no listener was offered to listeners all the same (records of contract v4).
    expect(textOf(deliveryTargetOf(delivery({ status: 'failed', attempts: [{ httpStatus: null, error: 'no listener connected' }] }), 'direct'))).toBe("the account's listeners (to their --forward-to; no URL set)");
  });

  it('names the URL of a direct delivery, and says undeliverable only when there was nowhere to send it', () => {
    expect(textOf(deliveryTargetOf(delivery({ url: HOOK, status: 'delivered', attempts: [ok()] }), 'listeners'))).toBe(HOOK);
    expect(textOf(deliveryTargetOf(delivery({ url: HOOK }), 'direct'))).toBe(HOOK);
    expect(deliveryTargetOf(delivery({ url: HOOK }), 'direct')).toEqual([{ code: HOOK }]);
    expect(textOf(deliveryTargetOf(delivery({ status: 'undeliverable' }), 'direct'))).toBe('no URL (undeliverable)');
    expect(textOf(deliveryTargetOf(delivery({ status: 'undeliverable' }), undefined))).toBe('no URL (undeliverable)');
  });
});

describe("where the console says a charge's webhooks go (its summary)", () => {
  it('names the URL in force, its own or the account\'s, never "the account\'s, if set" (issue 43: said so while the URL was set)', () => {
    expect(textOf(webhookTargetOf(null, { webhookUrl: HOOK, webhookDelivery: 'direct' }))).toBe(`${HOOK} (the account's webhook URL)`);
    expect(textOf(webhookTargetOf('https://shop.example/pix', { webhookUrl: HOOK, webhookDelivery: 'direct' }))).toBe('https://shop.example/pix (its postbackUrl)');
    // A sandbox older than delivery modes: direct.
    expect(textOf(webhookTargetOf(null, { webhookUrl: HOOK }))).toBe(`${HOOK} (the account's webhook URL)`);
    expect(textOf(webhookTargetOf(null, { webhookUrl: null, webhookDelivery: 'direct' }))).toBe('nowhere: it has no postbackUrl and the account no webhook URL, so its webhooks are recorded as undeliverable');
  });

  it("says listeners in listeners mode, and what they post to", () => {
    expect(textOf(webhookTargetOf(null, { webhookUrl: HOOK, webhookDelivery: 'listeners' }))).toBe(`the account's listeners, which post to their --forward-to, else to ${HOOK} (the account's webhook URL)`);
    expect(textOf(webhookTargetOf('https://shop.example/pix', { webhookUrl: null, webhookDelivery: 'listeners' }))).toBe("the account's listeners, which post to their --forward-to, else to https://shop.example/pix (its postbackUrl)");
    expect(textOf(webhookTargetOf(null, { webhookUrl: null, webhookDelivery: 'listeners' }))).toBe("the account's listeners, which post to their --forward-to (it has no postbackUrl and the account no webhook URL)");
  });

  it('falls back to the rule only when the account could not be read', () => {
    expect(textOf(webhookTargetOf(null, null))).toBe("the account's webhook URL, if it has one");
    expect(textOf(webhookTargetOf(HOOK, null))).toBe(`${HOOK} (its postbackUrl)`);
  });

  it("states the account's own rule on its page", () => {
    expect(textOf(accountTargetOf({ webhookUrl: HOOK, webhookDelivery: 'direct' }))).toBe(`each charge's postbackUrl, else ${HOOK}`);
    expect(textOf(accountTargetOf({ webhookUrl: null, webhookDelivery: 'direct' }))).toBe("each charge's postbackUrl; a charge without one has nowhere to go (undeliverable)");
    expect(textOf(accountTargetOf({ webhookUrl: HOOK, webhookDelivery: 'listeners' }))).toBe(`the account's listeners, which post to their --forward-to, else to each charge's postbackUrl, else ${HOOK}`);
    expect(textOf(accountTargetOf({ webhookUrl: null, webhookDelivery: 'listeners' }))).toBe("the account's listeners, which post to their --forward-to, else to each charge's postbackUrl");
  });
});

describe('which rail paid a hybrid', () => {
  it('names Pix or Boleto for a paid PIX_BOLETO charge only (issue 43: a hybrid paid by boleto did not say so)', () => {
    expect(paidByOf({ method: 'PIX_BOLETO', paidRail: 'BOLETO' })).toBe('Boleto');
    expect(paidByOf({ method: 'PIX_BOLETO', paidRail: 'PIX' })).toBe('Pix');
    expect(paidByOf({ method: 'PIX_BOLETO', paidRail: null })).toBeNull();
    expect(paidByOf({ method: 'PIX_BOLETO' })).toBeNull();
    // One rail only: the method names it.
    expect(paidByOf({ method: 'PIX', paidRail: 'PIX' })).toBeNull();
    expect(paidByOf({ method: 'CREDIT_CARD', paidRail: 'CARD' })).toBeNull();
  });
});
