import { StepFailure, under } from '../failure.js';
import { formatMs, toMs } from '../duration.js';
import { match } from '../match.js';
import type { ReceivedWebhook } from '../receiver.js';
import { expectedSignature, signatureValid } from '../signature.js';
import type { Duration, Mismatch } from '../types.js';
import type { Params, ScenarioState, StepDefinition } from './context.js';
import { str } from './context.js';

const DEFAULT_TIMEOUT_MS = 5000;

const transactionIdOf = (request: ReceivedWebhook): unknown => ((request.body as { payload?: { transaction_id?: unknown } } | null)?.payload ?? {}).transaction_id;
const withdrawalIdOf = (request: ReceivedWebhook): unknown => ((request.body as { payload?: { withdrawal_id?: unknown } } | null)?.payload ?? {}).withdrawal_id;

/** Every way a received request differs from what the step wants. */
function differences(p: Params, request: ReceivedWebhook, secret: string | undefined): Mismatch[] {
  const out: Mismatch[] = [];
  if (p.transaction !== undefined) out.push(...match(String(p.transaction), transactionIdOf(request), 'body.payload.transaction_id'));
  if (p.withdrawal !== undefined) out.push(...match(String(p.withdrawal), withdrawalIdOf(request), 'body.payload.withdrawal_id'));
  if (p.answered !== undefined) out.push(...match(p.answered, request.answered, 'answered'));
  if (p.headers !== undefined) {
    const lowered = Object.fromEntries(Object.entries(p.headers as object).map(([k, v]) => [k.toLowerCase(), v as unknown]));
    out.push(...under('headers', match(lowered, request.headers)));
  }
  if (p.body !== undefined) out.push(...under('body', match(p.body, request.body)));
  const mode = str(p.signature) ?? 'valid';
  if (mode !== 'any' && secret !== undefined) {
    const valid = signatureValid(request.body, request.headers['x-signature'], secret);
    if (valid !== (mode === 'valid')) {
      out.push({
        path: 'headers.x-signature',
        expected: mode === 'valid' ? `a valid signature (${expectedSignature(request.body, secret)})` : 'an invalid signature',
        actual: request.headers['x-signature'],
        note: mode === 'valid' ? 'HMAC-SHA256 of the key-sorted body with the webhookSecret differs' : undefined,
      });
    }
  }
  return out;
}

const summary = (request: ReceivedWebhook, state: ScenarioState, secret: string | undefined): string => {
  const sig = secret === undefined ? '' : signatureValid(request.body, request.headers['x-signature'], secret) ? ', signature valid' : ', signature INVALID';
  const attempt = request.headers['x-sandbox-attempt'] ? ` attempt ${request.headers['x-sandbox-attempt']}` : '';
  const event = (request.body as { event?: unknown } | null)?.event;
  const about = withdrawalIdOf(request) ? `withdrawal ${String(withdrawalIdOf(request))}` : `transaction ${String(transactionIdOf(request))}`;
  return `#${request.seq} ${request.method} ${request.path} ${String(event ?? '')} ${about}${attempt} → answered ${request.answered}${sig}${state.takenWebhooks.has(request.seq) ? ' (taken by an earlier step)' : ''}`;
};

/**
 * Waits until the receiver got a webhook that matches and was not taken by an earlier
 * expectWebhook step, then takes it (retries of a delivery are separate requests).
 */
export const expectWebhookStep: StepDefinition = {
  title: (p) =>
    `expectWebhook${p.transaction !== undefined ? ` ${str(p.transaction)}` : ''}${p.withdrawal !== undefined ? ` withdrawal ${str(p.withdrawal)}` : ''}${p.answered !== undefined ? ` answered ${str(p.answered)}` : ''}`,
  async run(p, state) {
    const secret = str(p.secret) ?? state.account.webhookSecret;
    const mode = str(p.signature) ?? 'valid';
    if (mode !== 'any' && secret === undefined) {
      throw new StepFailure('cannot check the webhook signature: no webhookSecret is known (give account.webhookSecret with account.key, or secret: on this step, or signature: any)');
    }
    const timeoutMs = p.timeout !== undefined ? toMs(p.timeout as Duration) : DEFAULT_TIMEOUT_MS;
    const found = await state.receiver.waitFor((request) => !state.takenWebhooks.has(request.seq) && differences(p, request, secret).length === 0, timeoutMs);
    if (found) {
      state.takenWebhooks.add(found.seq);
      return { status: found.answered, response: found.body, headers: found.headers };
    }
    const candidates = state.receiver.requests.filter((r) => !state.takenWebhooks.has(r.seq));
    const closest = candidates
      .map((request) => ({ request, diff: differences(p, request, secret) }))
      .sort((a, b) => a.diff.length - b.diff.length)[0];
    const received = state.receiver.requests.length;
    const message =
      received === 0
        ? `no webhook reached the receiver (${state.receiver.url}) within ${formatMs(timeoutMs)}`
        : candidates.length === 0
          ? `no new webhook within ${formatMs(timeoutMs)}: the ${received} received were taken by earlier steps`
          : `no matching webhook within ${formatMs(timeoutMs)}; closest is #${closest?.request.seq ?? '?'}`;
    throw new StepFailure(message, {
      mismatches: closest?.diff ?? [],
      details: [`the receiver got ${received} request(s):`, ...state.receiver.requests.map((r) => `  ${summary(r, state, secret)}`)],
    });
  },
};
