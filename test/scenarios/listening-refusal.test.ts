import { describe, expect, it } from 'vitest';
import { RunWebhooks } from '../../src/scenarios/listening.js';
import type { Exchange } from '../../src/scenarios/types.js';

/**
 * How the runner tells the target policy's refusal of its receiver from any other 400: by the
 * answer's x-sandbox-code, so a sandbox that words its message differently is still recognised.
 */
const answer = (message: string, headers: Record<string, string>): Exchange => ({
  method: 'POST',
  url: 'http://127.0.0.1:1/_sandbox/accounts',
  status: 400,
  responseBody: { statusCode: 400, message, error: 'Bad Request' },
  headers,
  durationMs: 0,
});

const CODE = { 'x-sandbox-code': 'webhook-target-refused' };

function route(): { webhooks: RunWebhooks; notes: string[] } {
  const notes: string[] = [];
  return { webhooks: new RunWebhooks('http://127.0.0.1:1', 'auto', (note) => notes.push(note)), notes };
}

describe('the runner recognises a refused webhook target by its code', () => {
  it('whatever the message says', () => {
    const { webhooks, notes } = route();
    expect(webhooks.refused(answer('Receiver address denied by policy', CODE), 'webhookUrl')).toBe(true);
    expect(webhooks.viaListener).toBe(true);
    expect(notes).toEqual([expect.stringContaining('(Receiver address denied by policy)')]);
  });

  it('a 400 with another code, or none and no refusal in words, is not a refusal', () => {
    const { webhooks } = route();
    expect(webhooks.refused(answer('webhookUrl 127.0.0.1 is not among the webhook targets this sandbox allows', { 'x-sandbox-code': 'something-else' }), 'webhookUrl')).toBe(false);
    expect(webhooks.refused(answer('webhookUrl must be an http(s) URL or null', {}), 'webhookUrl')).toBe(false);
    expect(webhooks.refused({ ...answer('Receiver address denied by policy', CODE), status: 409 }, 'webhookUrl')).toBe(false);
    expect(webhooks.viaListener).toBe(false);
  });

  it('a sandbox from before the code: its refusal in words still is one', () => {
    const { webhooks } = route();
    expect(webhooks.refused(answer('webhookUrl 127.0.0.1 is not among the webhook targets this sandbox allows (SANDBOX_WEBHOOK_ALLOW=example.com)', {}), 'webhookUrl')).toBe(true);
  });

  it('on a run told never to listen, the coded refusal is the direct one', () => {
    const webhooks = new RunWebhooks('http://127.0.0.1:1', 'direct', () => undefined);
    expect(webhooks.refusedDirect(answer('Receiver address denied by policy', CODE), 'url')).toBe(true);
    expect(webhooks.refused(answer('Receiver address denied by policy', CODE), 'url')).toBe(false);
  });
});
