/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import { type Context, redrawOn, type View } from './context.js';
import { badge, disclosure, h, pair, pre, replaceChildren, said, statusBadge, unavailable, when } from './dom.js';
import { listeningRegion } from './listening.js';
import { deliveryTargetOf, throughListeners, type DeliveryMode } from './targets.js';

export interface Attempt {
  at: string;
  httpStatus: number | null;
  error: string | null;
  durationMs: number;
  responseBody?: string | null;
  replay?: boolean;
  fault?: string | null;
  /** Listeners mode: "listener <name>", whose answer this is. */
  via?: string;
  /** Listeners mode: every listener the attempt was offered to, with its answer. */
  listeners?: ListenerAnswer[];
  /** As sent; null for attempts an older sandbox recorded. */
  requestHeaders?: Record<string, string> | null;
}

interface ListenerAnswer {
  name: string;
  httpStatus: number | null;
  error: string | null;
  durationMs: number;
}

/** The request of a delivery exactly as sent (GET /_sandbox/webhooks `request`). */
interface SentRequest {
  method: string;
  url: string | null;
  headers: Record<string, string>;
  body: string;
}

export interface Delivery {
  id: string;
  event: string;
  transactionId: string | null;
  withdrawalId?: string | null;
  url: string | null;
  status: string;
  attempts: Attempt[];
  nextAttemptAt: string | null;
  payload: unknown;
  createdAt: string;
  request?: SentRequest;
  /** Listeners mode: since when (real time) it waits for a listener; absent from an older sandbox. */
  waitingSince?: string | null;
  waitUntil?: string | null;
  /** Why it is where it is: "waiting for a listener: …", or why it failed without an attempt. */
  reason?: string | null;
}

/** "HTTP 500", or why there was no answer ("timeout after 5000 ms"); the error only when it says more than the status. */
export function answerOf(a: Attempt): string {
  const status = a.httpStatus !== null ? `HTTP ${a.httpStatus}` : '';
  if (!a.error || a.error === status) return status || '—';
  return status ? `${status} (${a.error})` : a.error;
}

/**
 * The request as it went out, in HTTP's own layout: the request line, every header the sandbox
 * set (x-signature as sent) and the body's exact bytes, which are what x-signature signs.
 */
function wire(request: SentRequest, headers: Record<string, string>, viaListeners: boolean): string {
  const target = request.url ?? (viaListeners ? "(no URL: the listener posts it to its --forward-to)" : '(no URL: the transaction has no postbackUrl and the account no webhook URL)');
  return [`${request.method} ${target}`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`), '', request.body].join('\n');
}

/**
 * What to do about the latest attempt's failure, when the answer alone does not say. `over`: no
 * attempt is left (the delivery failed), so only a replay sends it again.
 */
function remedyOf(a: Attempt, over: boolean): string | null {
  if (a.error === null || a.httpStatus !== null) return null;
  const then = over ? ', then replay this delivery' : '';
  if (a.error.startsWith('no listener connected')) {
    return a.error === 'no listener connected'
      ? `Start payments-sandbox listen with this account's key (the Account view shows the command)${over ? then : ': it receives this delivery as soon as it connects'}.`
      : `The listeners connected take other events (their --events): start one that takes this event${then}.`;
  }
  if (a.error.startsWith('listener not reading')) return `The listener is connected but not taking attempts: restart it${then}.`;
  if (a.via) return `${a.via.charAt(0).toUpperCase()}${a.via.slice(1)} got no answer where it posts this delivery (its --forward-to, else the delivery's URL as its own machine sees it): check that your app runs there${then}.`;
  return null;
}

/**
 * Who answered, in listeners mode: "via listener <name>", and when the attempt was offered to
 * several listeners (the first 2xx wins), each one's answer.
 */
function viaOf(a: Attempt): HTMLElement | null {
  const others = (a.listeners ?? []).filter((l) => `listener ${l.name}` !== a.via);
  if (!a.via && others.length === 0) return null;
  return h(
    'div',
    { class: 'via small' },
    a.via ? h('span', { class: 'via-name' }, 'via ', h('strong', { class: 'id' }, a.via)) : null,
    others.length > 0
      ? h('ul', { class: 'offered', 'aria-label': 'Other listeners offered this attempt' }, others.map((l) => h('li', {}, h('span', { class: 'id' }, `listener ${l.name}`), `: ${answerOf({ ...l, at: '' })}, ${l.durationMs} ms`)))
      : null,
  );
}

function attemptsTable(attempts: readonly Attempt[], over: boolean): HTMLElement {
  if (attempts.length === 0) return h('p', { class: 'muted' }, 'No attempt yet.');
  return h(
    'div',
    { class: 'scroll' },
    h(
      'table',
      { class: 'attempts' },
      h('caption', { class: 'visually-hidden' }, 'Attempts'),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, '#'), h('th', { scope: 'col' }, 'At'), h('th', { scope: 'col' }, 'Answer'), h('th', { scope: 'col' }, 'Time'), h('th', { scope: 'col' }, 'Response body'))),
      h(
        'tbody',
        {},
        attempts.map((a, i) => {
          // Said once, under the latest attempt: earlier ones failed the same way or were overcome.
          const remedy = i === attempts.length - 1 ? remedyOf(a, over) : null;
          return h(
            'tr',
            { 'data-attempt': i + 1, ...(a.via && { 'data-via': a.via }) },
            h('td', { class: 'cell-n' }, String(i + 1), a.replay ? h('span', { class: 'tag' }, 'replay') : null),
            h('td', { class: 'cell-at' }, when(a.at)),
            h(
              'td',
              { class: 'cell-answer' },
              h('span', { class: 'answer' }, answerOf(a)),
              a.fault ? h('span', { class: 'tag' }, `fault ${a.fault}`) : null,
              viaOf(a),
              remedy ? h('p', { class: 'remedy small' }, remedy) : null,
            ),
            h('td', { class: 'cell-time' }, `${a.durationMs} ms`),
            h('td', { class: 'cell-body id' }, a.responseBody ? h('code', { 'aria-label': `Response body of attempt ${i + 1}` }, a.responseBody) : h('span', { class: 'muted' }, 'no body')),
          );
        }),
      ),
    ),
  );
}

/** The exact request (of the last attempt, else the one the next attempt sends), then the body formatted to read. */
function sentRequest(d: Delivery, mode: DeliveryMode | undefined): HTMLElement {
  const request = d.request!;
  const last = [...d.attempts].reverse().find((a) => a.requestHeaders);
  const headers = last?.requestHeaders ?? request.headers;
  return h(
    'div',
    { class: 'sent' },
    h('p', { class: 'small muted' }, last ? `As sent in attempt ${d.attempts.lastIndexOf(last) + 1}` : 'What the first attempt sends', ': x-signature is the HMAC-SHA256 (hex) of exactly these body bytes with the account\'s webhook secret.'),
    h('pre', { class: 'code', tabindex: 0, 'aria-label': `Request of ${d.id}` }, wire(request, headers, throughListeners(d, mode))),
    disclosure(`${d.id}:body`, {}, 'Body, formatted', pre(d.payload, `Body of ${d.id}`)),
  );
}

/** One delivery: what was sent (body and headers), every attempt with the receiver's answer, and replay. */
export function deliveryCard(ctx: Context, d: Delivery, mode: DeliveryMode | undefined, onChange: () => void): HTMLElement {
  const replay = h('button', { type: 'button', class: 'secondary' }, 'Replay');
  replay.addEventListener('click', async () => {
    replay.disabled = true;
    const answer = await ctx.api.post<Delivery>(`/_sandbox/webhooks/${encodeURIComponent(d.id)}/replay`);
    replay.disabled = false;
    if (answer.missing) return ctx.notify('Replay is not available in this sandbox version.', 'bad');
    if (!answer.ok) return ctx.fail('Replay', answer);
    const last = answer.body.attempts.at(-1);
    const outcome = last ? answerOf(last) : 'sent';
    ctx.notify(`Replayed ${d.id}: ${outcome}${last?.via ? ` via ${last.via}` : ''}`, last && last.httpStatus !== null && last.httpStatus >= 200 && last.httpStatus < 300 ? 'ok' : 'bad');
    onChange();
  });
  return h(
    'article',
    { class: 'card delivery', 'data-delivery': d.id, 'aria-labelledby': `${d.id}-title` },
    h(
      'header',
      { class: 'card-head' },
      h('h3', { id: `${d.id}-title` }, d.event, ' ', h('span', { class: 'mono small' }, d.id)),
      d.waitingSince ? h('span', { class: 'badges' }, statusBadge(d.status), ' ', badge('waiting for a listener', 'warn')) : statusBadge(d.status),
    ),
    h(
      'p',
      { class: 'meta' },
      d.withdrawalId
        ? ['Withdrawal ', h('a', { href: `#/withdrawals/${encodeURIComponent(d.withdrawalId)}` }, d.withdrawalId)]
        : ['Transaction ', h('a', { href: `#/transactions/${encodeURIComponent(d.transactionId ?? '')}` }, d.transactionId ?? '—')],
      ' → ',
      h('span', { class: 'target' }, said(deliveryTargetOf(d, mode))),
      ` · ${d.attempts.length} attempt${d.attempts.length === 1 ? '' : 's'}`,
      // A waiting delivery's next offer is when a listener connects, not this probe.
      d.nextAttemptAt && !d.waitingSince ? ` · next ${when(d.nextAttemptAt)}` : '',
    ),
    d.reason
      ? h(
          'p',
          { class: 'delivery-reason small', 'data-reason': d.waitingSince ? 'waiting' : 'ended' },
          d.waitingSince ? `${d.reason}. Start payments-sandbox listen with this account's key (the Account view shows the command): it receives this delivery as soon as it connects.` : d.reason,
        )
      : null,
    disclosure(`${d.id}:request`, {}, 'Request body and headers', d.request ? sentRequest(d, mode) : pre(d.payload, `Body of ${d.id}`)),
    disclosure(`${d.id}:attempts`, { open: d.attempts.length > 0 }, 'Attempts', attemptsTable(d.attempts, d.status === 'failed')),
    h('div', { class: 'row' }, replay),
  );
}

/** The delivery log, newest first, filtered by status, under the account's delivery mode and listeners. */
export const webhooksView: View = (ctx) => {
  let status = '';
  const list = h('div', { class: 'stack', 'aria-live': 'polite' });
  const listening = listeningRegion(ctx, () => h('a', { href: '#/account' }, 'Change the mode'));
  const select = h(
    'select',
    { id: 'wh-status' },
    h('option', { value: '' }, 'Any'),
    ['pending', 'delivered', 'failed', 'undeliverable'].map((s) => h('option', { value: s }, s)),
  );
  select.addEventListener('change', () => {
    status = select.value;
    void draw();
  });
  replaceChildren(
    ctx.root,
    h('h1', { tabindex: -1 }, 'Webhook deliveries'),
    listening.element,
    h('div', { class: 'filters' }, pair(h('label', { for: 'wh-status' }, 'Status'), select)),
    list,
  );
  let seq = 0;
  /** The log and the note together: each card names its target by the account's mode as read with it. */
  async function draw(): Promise<void> {
    const mine = ++seq;
    const [answer, mode] = await Promise.all([ctx.api.all<Delivery>(`/_sandbox/webhooks${status ? `?status=${status}` : ''}`), listening.draw().then((l) => l?.delivery)]);
    // A slower answer of an earlier draw must not replace a newer one (another status chosen).
    if (mine !== seq) return;
    if (answer.missing) return replaceChildren(list, unavailable('The webhook log'));
    if (!answer.ok) return ctx.fail('Loading deliveries', answer);
    const deliveries = [...answer.body].reverse();
    replaceChildren(list, deliveries.length === 0 ? h('p', { class: 'empty' }, 'No deliveries yet. A paid, expired or declined transaction sends one.') : deliveries.map((d) => deliveryCard(ctx, d, mode, () => void draw())));
  }
  void draw();
  // An attempt made is when a listener may have come or gone: the note is read again with the log.
  return redrawOn(ctx, (e) => e !== null && e.type.startsWith('webhook.'), draw);
};
