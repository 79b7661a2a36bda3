import { hostname } from 'node:os';
import { connected, startListener } from '../listen/listener.js';
import { SANDBOX_CODE_HEADER, WEBHOOK_TARGET_REFUSED } from '../spec/sandbox-codes.js';
import { StepFailure } from './failure.js';
import { call, checkAnswer, errorText, type ScenarioState, type WebhookPath } from './steps/context.js';
import type { Exchange } from './types.js';

/**
 * How a run's webhooks reach its receiver (contract v4, "Scenario runs on any sandbox"). By
 * default the sandbox posts them (direct delivery). A shared sandbox's target policy
 * (SANDBOX_WEBHOOK_ALLOW) refuses the receiver's address, which is on the runner's machine:
 * then the runner puts each of its accounts in `listeners` delivery mode and takes its
 * webhooks as a listener, over the sandbox's /_sandbox/listen WebSocket (the `listen`
 * command's client), which posts each one, exact bytes and headers, to the delivery's own URL:
 * the receiver, seen from the runner's machine. Scenario files need no change.
 */

/** `auto`: direct until the sandbox refuses the receiver; `listener`: from the start; `direct`: never a listener. */
export type WebhookRoute = 'auto' | 'listener' | 'direct';

/** The text after a refusal's reason: how a person gets out of it, which the runner does by itself. */
export const WAY_OUT = /; to receive webhooks where this sandbox cannot post.*$/s;

/** The run-wide choice: once the sandbox refused the receiver, every later account of the run starts as a listener's. */
export class RunWebhooks implements WebhookPath {
  constructor(
    private readonly baseUrl: string,
    private route: WebhookRoute,
    /** Told once, when the run switches to listening: a line for the person watching. */
    private readonly onNote: (message: string) => void,
  ) {}

  /** Whether the run's accounts take their webhooks as listeners from the start. */
  get viaListener(): boolean {
    return this.route === 'listener';
  }

  /**
   * Whether `exchange` is the sandbox refusing a webhook URL by its target policy (a 400 naming
   * the field, with x-sandbox-code webhook-target-refused, as src/http/handlers.ts answers), in
   * which case the run listens from now on.
   */
  refused(exchange: Exchange, field: string): boolean {
    if (this.route !== 'auto' || !isRefusal(exchange, field)) return false;
    const message = messageOf(exchange.responseBody);
    // Once: from now on the route is no longer 'auto', so this is not reached again.
    this.route = 'listener';
    this.onNote(
      `webhooks: the sandbox refuses the receiver's address (${message.replace(WAY_OUT, '')}), so this run takes its accounts' webhooks as a listener (listeners delivery mode, ${this.baseUrl}/_sandbox/listen) and forwards them to its receiver`,
    );
    return true;
  }

  /** Whether `exchange` is that refusal on a run told never to listen (`--webhooks direct`): its failure says how to get past it. */
  refusedDirect(exchange: Exchange, field: string): boolean {
    return this.route === 'direct' && isRefusal(exchange, field);
  }

  /** A listener for one account, forwarding each attempt to the delivery's own URL; resolves once the sandbox greeted it. */
  listen(secretKey: string): Promise<{ close(): Promise<void> }> {
    return connected(startListener({
      baseUrl: this.baseUrl,
      key: secretKey,
      routes: [],
      name: `scenario-runner@${hostname()}:${process.pid}`,
      onDelivery: () => undefined,
      // The receiver's requests are the run's record of what arrived; a dropped connection is reconnected and loses nothing.
      onStatus: () => undefined,
    }));
  }
}

/**
 * Puts the account in listeners delivery mode with `url` as its webhook URL, and takes its
 * webhooks as a listener for the rest of the scenario (which forwards each one to `url`, seen
 * from here). `restore`: an account the scenario was given by key goes back to direct delivery
 * when the scenario ends, if it was in it; the runner's own accounts are left as they are.
 */
export async function listenFor(state: ScenarioState, secretKey: string, url: string, restore: boolean): Promise<void> {
  let wasDirect = false;
  if (restore) {
    const before = await call(state, { method: 'GET', path: '/_sandbox/account', key: secretKey });
    checkAnswer(before, undefined, 200);
    wasDirect = (before.responseBody as { webhookDelivery?: unknown }).webhookDelivery !== 'listeners';
  }
  const put = await call(state, { method: 'PUT', path: '/_sandbox/webhook-url', body: { url, delivery: 'listeners' }, key: secretKey });
  if (put.status === 400 && /delivery/.test(errorText(put.responseBody))) {
    throw new StepFailure(
      `the sandbox at ${state.http.baseUrl} has no listeners delivery mode, the way to take webhooks where it cannot post${errorText(put.responseBody)}: upgrade it, or run the scenarios where it can reach the receiver (--receiver-host)`,
      { exchange: put },
    );
  }
  checkAnswer(put, undefined, 200);
  const listener = await state.webhooks.listen(secretKey);
  state.listeners.push({ close: () => listener.close(), ...(wasDirect && { restoreDirect: secretKey }) });
}

/** Closes the scenario's listeners, and puts back in direct delivery the given accounts it took out of it. */
export async function stopListening(state: ScenarioState): Promise<void> {
  for (const { close, restoreDirect } of state.listeners.splice(0)) {
    await close();
    if (restoreDirect !== undefined) await state.http.call({ method: 'PUT', path: '/_sandbox/webhook-url', body: { delivery: 'direct' }, key: restoreDirect });
  }
}

function isRefusal(exchange: Exchange, field: string): boolean {
  if (exchange.status !== 400) return false;
  const code = exchange.headers[SANDBOX_CODE_HEADER];
  if (code !== undefined) return code === WEBHOOK_TARGET_REFUSED;
  // A sandbox from before the code says it only in words; the runner still listens on one.
  const message = messageOf(exchange.responseBody);
  return message.startsWith(`${field} `) && /webhook target/.test(message);
}

function messageOf(body: unknown): string {
  if (typeof body !== 'object' || body === null || !('message' in body)) return '';
  return typeof body.message === 'string' ? body.message : '';
}
