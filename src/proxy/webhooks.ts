import { createHmac, timingSafeEqual } from 'node:crypto';
import type { WebhookValidator } from '../http/webhook-validation.js';
import { signatureValid } from '../scenarios/signature.js';
import { decodedBody, isJsonType, type Finding } from './check.js';

/** Where the proxy takes webhooks: `POST /_proxy/webhooks`, or any path under it. */
export const WEBHOOKS_PATH = '/_proxy/webhooks';

/** Whether a request path is the proxy's webhook receiver (the path itself, or one under it). */
export const isWebhookPath = (path: string): boolean => path === WEBHOOKS_PATH || path.startsWith(`${WEBHOOKS_PATH}/`);

/** What the proxy found in one webhook it received: the event the body names, and the findings. */
export interface WebhookCheck {
  /** The body's `event` when it is one of openapi.yaml's webhooks; undefined otherwise. */
  event: string | undefined;
  findings: Finding[];
}

const finding = (pointer: string, rule: string, message: string): Finding => ({ side: 'request', operationId: undefined, pointer, rule, message });

const sameHex = (a: string, b: string): boolean => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/**
 * Holds a webhook the real service sent to the contract (openapi.yaml's `webhooks`, with the
 * validator the suite holds the sandbox's own deliveries to) and, given the webhook secret, its
 * `x-signature` to the contract's definition: HMAC-SHA256 of the key-sorted body. Only the
 * findings change: what is forwarded stays the bytes received.
 */
export class WebhookChecker {
  constructor(
    private readonly validator: WebhookValidator,
    private readonly secret: string | undefined,
  ) {}

  check(headers: Record<string, string | string[] | undefined>, raw: Buffer): WebhookCheck {
    const contentType = typeof headers['content-type'] === 'string' ? headers['content-type'] : undefined;
    if (isJsonType(contentType) !== true) return { event: undefined, findings: [finding('/header/content-type', 'media-type', `a webhook is application/json, not ${contentType ?? 'no Content-Type'}`)] };
    const bytes = decodedBody(raw, headers['content-encoding']);
    if (bytes === undefined) return { event: undefined, findings: [finding('/header/content-encoding', 'content-encoding', `the webhook's Content-Encoding ${String(headers['content-encoding'])} cannot be read: its body is not checked`)] };
    let body: unknown;
    try {
      body = JSON.parse(bytes.toString('utf8')) as unknown;
    } catch (error) {
      return { event: undefined, findings: [finding('/body', 'json', `webhook body is not valid JSON: ${error instanceof Error ? error.message : String(error)}`)] };
    }
    const findings: Finding[] = this.validator.check(body, headers).map((problem) => finding(problem.pointer, problem.rule, problem.message));
    const signature = headers['x-signature'];
    // A missing x-signature is the schema's finding (required) already.
    if (this.secret !== undefined && typeof signature === 'string' && !signatureValid(body, signature, this.secret)) {
      // Integrators' verifiers differ here: name the variant that did match, when one did.
      const ofBytes = createHmac('sha256', this.secret).update(bytes).digest('hex');
      findings.push(
        finding(
          '/header/x-signature',
          'signature',
          sameHex(signature.toLowerCase(), ofBytes)
            ? 'x-signature is the HMAC-SHA256 of the bytes as sent, not of the key-sorted body the contract signs (the body was not sent key-sorted)'
            : 'x-signature is not the HMAC-SHA256 of the key-sorted body with --webhook-secret (another secret, or a changed body)',
        ),
      );
    }
    return { event: this.validator.eventOf(body), findings };
  }
}

/**
 * Where a webhook received at `target` goes: `--webhooks-to` as given for `/_proxy/webhooks`
 * itself, with the path under it appended (`/_proxy/webhooks/cashin` to `…/hooks/cashin`), and
 * the query sent if there is one, else `--webhooks-to`'s own.
 */
export function webhookTarget(webhooksTo: URL, target: string): URL {
  const rest = target.startsWith(WEBHOOKS_PATH) ? target.slice(WEBHOOKS_PATH.length) : target;
  const queryAt = rest.indexOf('?');
  const path = queryAt < 0 ? rest : rest.slice(0, queryAt);
  const url = new URL(webhooksTo);
  if (path !== '') url.pathname = webhooksTo.pathname.replace(/\/+$/, '') + path;
  if (queryAt >= 0) url.search = rest.slice(queryAt);
  return url;
}
