/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import { type Context, redrawOn, type View } from './context.js';
import { h, pre, replaceChildren, statusBadge, unavailable, when } from './dom.js';

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
  /** As sent; null for attempts an older sandbox recorded. */
  requestHeaders?: Record<string, string> | null;
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
function wire(request: SentRequest, headers: Record<string, string>): string {
  const target = request.url ?? '(no URL: the transaction has no postbackUrl and the account no webhook URL)';
  return [`${request.method} ${target}`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`), '', request.body].join('\n');
}

function attemptsTable(attempts: readonly Attempt[]): HTMLElement {
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
        attempts.map((a, i) =>
          h(
            'tr',
            {},
            h('td', {}, String(i + 1), a.replay ? h('span', { class: 'tag' }, 'replay') : null),
            h('td', {}, when(a.at)),
            h('td', {}, answerOf(a), a.fault ? h('span', { class: 'tag' }, `fault ${a.fault}`) : null, a.via ? h('span', { class: 'tag' }, `via ${a.via}`) : null),
            h('td', {}, `${a.durationMs} ms`),
            h('td', { class: 'id' }, a.responseBody ? h('code', {}, a.responseBody) : '—'),
          ),
        ),
      ),
    ),
  );
}

/** The exact request (of the last attempt, else the one the next attempt sends), then the body formatted to read. */
function sentRequest(d: Delivery): HTMLElement {
  const request = d.request!;
  const last = [...d.attempts].reverse().find((a) => a.requestHeaders);
  const headers = last?.requestHeaders ?? request.headers;
  return h(
    'div',
    { class: 'sent' },
    h('p', { class: 'small muted' }, last ? `As sent in attempt ${d.attempts.lastIndexOf(last) + 1}` : 'What the first attempt sends', ': x-signature is the HMAC-SHA256 (hex) of exactly these body bytes with the account\'s webhook secret.'),
    h('pre', { class: 'code', tabindex: 0, 'aria-label': `Request of ${d.id}` }, wire(request, headers)),
    h('details', {}, h('summary', {}, 'Body, formatted'), pre(d.payload, `Body of ${d.id}`)),
  );
}

/** One delivery: what was sent (body and headers), every attempt with the receiver's answer, and replay. */
export function deliveryCard(ctx: Context, d: Delivery, onChange: () => void): HTMLElement {
  const replay = h('button', { type: 'button', class: 'secondary' }, 'Replay');
  replay.addEventListener('click', async () => {
    replay.disabled = true;
    const answer = await ctx.api.post<Delivery>(`/_sandbox/webhooks/${encodeURIComponent(d.id)}/replay`);
    replay.disabled = false;
    if (answer.missing) return ctx.notify('Replay is not available in this sandbox version.', 'bad');
    if (!answer.ok) return ctx.fail('Replay', answer);
    const last = answer.body.attempts.at(-1);
    ctx.notify(`Replayed ${d.id}: ${last?.httpStatus !== null && last?.httpStatus !== undefined ? `HTTP ${last.httpStatus}` : (last?.error ?? 'sent')}`, answer.body.status === 'delivered' ? 'ok' : 'bad');
    onChange();
  });
  return h(
    'article',
    { class: 'card delivery', 'data-delivery': d.id, 'aria-labelledby': `${d.id}-title` },
    h(
      'header',
      { class: 'card-head' },
      h('h3', { id: `${d.id}-title` }, d.event, ' ', h('span', { class: 'mono small' }, d.id)),
      statusBadge(d.status),
    ),
    h(
      'p',
      { class: 'meta' },
      d.withdrawalId
        ? ['Withdrawal ', h('a', { href: `#/withdrawals/${encodeURIComponent(d.withdrawalId)}` }, d.withdrawalId)]
        : ['Transaction ', h('a', { href: `#/transactions/${encodeURIComponent(d.transactionId ?? '')}` }, d.transactionId ?? '—')],
      ' → ',
      h('span', { class: 'mono id' }, d.url ?? 'no URL (undeliverable)'),
      ` · ${d.attempts.length} attempt${d.attempts.length === 1 ? '' : 's'}`,
      d.nextAttemptAt ? ` · next ${when(d.nextAttemptAt)}` : '',
    ),
    h(
      'details',
      {},
      h('summary', {}, 'Request body and headers'),
      d.request ? sentRequest(d) : pre(d.payload, `Body of ${d.id}`),
    ),
    h('details', { open: d.attempts.length > 0 }, h('summary', {}, 'Attempts'), attemptsTable(d.attempts)),
    h('div', { class: 'row' }, replay),
  );
}

/** The delivery log, newest first, filtered by status. */
export const webhooksView: View = (ctx) => {
  let status = '';
  const list = h('div', { class: 'stack', 'aria-live': 'polite' });
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
    h('div', { class: 'filters' }, h('label', { for: 'wh-status' }, 'Status'), select),
    list,
  );
  async function draw(): Promise<void> {
    const answer = await ctx.api.all<Delivery>(`/_sandbox/webhooks${status ? `?status=${status}` : ''}`);
    if (answer.missing) return replaceChildren(list, unavailable('The webhook log'));
    if (!answer.ok) return ctx.fail('Loading deliveries', answer);
    const deliveries = [...answer.body].reverse();
    replaceChildren(list, deliveries.length === 0 ? h('p', { class: 'empty' }, 'No deliveries yet. A paid, expired or declined transaction sends one.') : deliveries.map((d) => deliveryCard(ctx, d, () => void draw())));
  }
  void draw();
  return redrawOn(ctx, (e) => e !== null && e.type.startsWith('webhook.'), draw);
};
