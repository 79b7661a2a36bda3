import type { Agent } from 'undici';
import { VERSION } from '../version.js';
import { describe, excerpt } from './answer-text.js';
import { TARGET_REFUSED, WebhookTargets, type Resolve } from './targets.js';

export interface AttemptOutcome {
  httpStatus: number | null;
  error: string | null;
  durationMs: number;
  /** The first bytes of the receiver's answer, for the delivery log. */
  responseBody: string | null;
  ok: boolean;
  /** The webhook target policy refused the target: nothing was sent, and retrying will not change that. */
  refused?: boolean;
}

/** What deliveries need of a sender: the attempt timeout (their retry delays count it) and the post. */
export interface WebhookSender {
  readonly timeoutMs: number;
  post(url: string, body: string, headers: Record<string, string>): Promise<AttemptOutcome>;
}

export interface DispatcherOptions {
  /** Keep-alive connections per receiver origin. */
  connectionsPerHost?: number;
  /** The webhook target policy (default: any target but link-local and cloud-metadata addresses). */
  targets?: WebhookTargets;
  /** How host names are resolved before the policy checks their addresses (default dns.lookup). */
  resolve?: Resolve;
}

/**
 * Sends webhook requests over keep-alive connections. undici's per-origin connection
 * limit bounds concurrency per host, so a slow receiver only queues its own deliveries.
 * Every connection resolves its host through the target policy's lookup, so a name that
 * resolves to a refused address fails before its socket connects.
 */
export class Dispatcher implements WebhookSender {
  /** Made by the first post: undici is loaded then, not at every start (~50-120 ms to import; many sandboxes send nothing). */
  private agent: Promise<{ agent: Agent; request: typeof import('undici').request }> | undefined;
  private readonly targets: WebhookTargets;
  private readonly agentOptions: Agent.Options;
  private closed = false;

  constructor(
    readonly timeoutMs: number,
    options: DispatcherOptions = {},
  ) {
    this.targets = options.targets ?? WebhookTargets.parse(undefined);
    this.agentOptions = {
      connections: options.connectionsPerHost ?? 8,
      keepAliveTimeout: 10_000,
      connect: { timeout: timeoutMs, lookup: this.targets.lookup(options.resolve) },
    };
  }

  private client(): Promise<{ agent: Agent; request: typeof import('undici').request }> {
    if (this.closed) return Promise.reject(new Error('the webhook sender is closed'));
    this.agent ??= import('undici').then((undici) => ({ agent: new undici.Agent(this.agentOptions), request: undici.request }));
    return this.agent;
  }

  async post(url: string, body: string, headers: Record<string, string>): Promise<AttemptOutcome> {
    const started = performance.now();
    const elapsed = (): number => Math.round(performance.now() - started);
    // A stored URL is checked again as it leaves: the policy may have narrowed since it was given.
    const refusal = this.targets.refusal(url);
    if (refusal) return refused(WebhookTargets.deliveryMessage(refusal), elapsed());
    // A timer cleared with the answer rather than AbortSignal.timeout, whose timer always runs
    // to its end: at hundreds of webhooks a second that was thousands of live timers, each
    // firing an abort (and building a DOMException) seconds after its webhook was answered.
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.timeoutMs).unref();
    try {
      const { agent, request } = await this.client();
      const res = await request(url, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', 'user-agent': `payments-sandbox/${VERSION}`, ...headers },
        dispatcher: agent,
        signal: controller.signal,
      });
      const responseBody = await excerpt(res.body);
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      return { httpStatus: res.statusCode, error: ok ? null : `HTTP ${res.statusCode}`, durationMs: elapsed(), responseBody, ok };
    } catch (error) {
      const policy = policyRefusal(error);
      if (policy) return refused(policy, elapsed());
      const message = controller.signal.aborted ? `timeout after ${this.timeoutMs} ms` : describe(error);
      return { httpStatus: null, error: message, durationMs: elapsed(), responseBody: null, ok: false };
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.agent) await (await this.agent).agent.close();
  }
}

/** No request left and no answer is recorded: the log cannot tell what a refused address would have said. */
const refused = (message: string, durationMs: number): AttemptOutcome => ({ httpStatus: null, error: message, durationMs, responseBody: null, ok: false, refused: true });

/** The policy's message when the connection failed in its lookup (undici may wrap the socket's error). */
function policyRefusal(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    if ((e as { code?: string }).code === TARGET_REFUSED) return e.message;
  }
  return undefined;
}
