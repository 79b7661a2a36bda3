/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import type { View } from './context.js';
import { type Child, disclosure, h, pre, replaceChildren, unavailable, when } from './dom.js';

/** One entry of `GET /_sandbox/requests`, as the contract describes it. */
interface LoggedRequest {
  traceId: string;
  at: string;
  method: string;
  path: string;
  query?: unknown;
  /** null when no answer was sent (a timeout or reset fault, or the client went away). */
  status: number | null;
  durationMs: number;
  requestHeaders?: Record<string, string>;
  requestBody?: unknown;
  responseBody?: unknown;
  hint?: string | null;
  fault?: unknown;
  requestBodyTruncated?: boolean;
  responseBodyTruncated?: boolean;
}

const tone = (status: number | null): string => (status === null || status >= 500 ? 'bad' : status >= 400 ? 'warn' : 'ok');

const cut = (truncated: boolean | undefined): Child => (truncated ? h('span', { class: 'tag' }, 'truncated at 64 KiB') : null);

/** The console marks its own calls with this header (see api.ts); the log records it like any other. */
const fromConsole = (r: LoggedRequest): boolean => r.requestHeaders?.['x-sandbox-client'] === 'console';

function entry(r: LoggedRequest): HTMLElement {
  const hint: Child = r.hint ? h('p', { class: 'hint' }, h('strong', {}, 'Hint: '), r.hint) : null;
  return disclosure(
    `request:${r.traceId}`,
    { class: 'card request', 'data-trace': r.traceId },
    [
      h('span', { class: `badge ${tone(r.status)}` }, r.status === null ? 'no answer' : String(r.status)),
      ' ',
      h('strong', {}, r.method),
      ' ',
      h('span', { class: 'mono id' }, r.path),
      h('span', { class: 'small muted' }, ` · ${Math.round(r.durationMs)} ms · ${when(r.at)}`),
      fromConsole(r) ? h('span', { class: 'tag' }, 'console') : null,
    ],
    hint,
    r.fault ? h('p', { class: 'hint' }, h('strong', {}, 'Fault rule fired: '), typeof r.fault === 'string' ? r.fault : JSON.stringify(r.fault)) : null,
    h('p', { class: 'small muted' }, 'Trace id ', h('code', {}, r.traceId)),
    r.query && Object.keys(r.query as object).length ? [h('h3', {}, 'Query'), pre(r.query, 'Query')] : null,
    h('h3', {}, 'Request body', cut(r.requestBodyTruncated)),
    r.requestBody === undefined || r.requestBody === null ? h('p', { class: 'muted' }, 'None.') : pre(r.requestBody, 'Request body'),
    h('h3', {}, 'Response body', cut(r.responseBodyTruncated)),
    r.responseBody === undefined || r.responseBody === null ? h('p', { class: 'muted' }, 'None.') : pre(r.responseBody, 'Response body'),
    // Headers are mostly the client's boilerplate: folded, so the bodies come first.
    r.requestHeaders ? disclosure(`request:${r.traceId}:headers`, { class: 'headers' }, 'Request headers', pre(r.requestHeaders, 'Request headers')) : null,
  );
}

/** The request log: what the sandbox received and why it answered as it did. */
export const requestsView: View = (ctx) => {
  const list = h('div', { class: 'stack' });
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Load older');
  const status = h('input', { id: 'rq-status', type: 'text', inputmode: 'numeric', placeholder: 'e.g. 400', autocomplete: 'off' });
  const path = h('input', { id: 'rq-path', type: 'text', placeholder: '/transactions/', autocomplete: 'off' });
  const trace = h('input', { id: 'rq-trace', type: 'text', autocomplete: 'off' });
  const mine = h('input', { id: 'rq-console', type: 'checkbox' });
  const form = h(
    'form',
    { class: 'request-filters' },
    // Each label sits above its input, so a narrow screen never parts them.
    h(
      'div',
      { class: 'fields' },
      h('div', { class: 'field' }, h('label', { for: 'rq-status' }, 'Status'), status),
      h('div', { class: 'field' }, h('label', { for: 'rq-path' }, 'Path'), path),
      h('div', { class: 'field' }, h('label', { for: 'rq-trace' }, 'Trace id'), trace),
    ),
    h('div', { class: 'row buttons' }, h('label', { for: 'rq-console', class: 'check' }, mine, 'Include the console\'s own calls'), h('button', { type: 'submit' }, 'Apply')),
  );
  let cursor: string | undefined;
  async function load(reset: boolean): Promise<void> {
    if (reset) cursor = undefined;
    const q = new URLSearchParams({ limit: '50' });
    if (status.value.trim()) q.set('status', status.value.trim());
    if (path.value.trim()) q.set('path', path.value.trim());
    if (trace.value.trim()) q.set('traceId', trace.value.trim());
    const shown: LoggedRequest[] = [];
    let hasMore = false;
    // The console's own calls are hidden here rather than by the server, so a page can come back
    // all hidden; a few more pages are read before showing "Load older" with nothing above it.
    for (let pages = 0; pages < 5 && shown.length === 0; pages++) {
      if (cursor) q.set('startingAfter', cursor);
      const answer = await ctx.api.get<{ data: LoggedRequest[]; hasMore: boolean }>(`/_sandbox/requests?${q}`);
      if (answer.missing) {
        form.hidden = true;
        return replaceChildren(list, unavailable('The request log'));
      }
      if (!answer.ok) return ctx.fail('Loading the request log', answer);
      shown.push(...answer.body.data.filter((e) => mine.checked || !fromConsole(e)));
      cursor = answer.body.data.at(-1)?.traceId ?? cursor;
      hasMore = answer.body.hasMore;
      if (!hasMore) break;
    }
    if (reset) replaceChildren(list);
    if (reset && shown.length === 0) list.append(h('p', { class: 'empty' }, 'No request matches.'));
    for (const e of shown) list.append(entry(e));
    more.hidden = !hasMore;
  }
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void load(true);
  });
  more.addEventListener('click', () => void load(false));
  mine.addEventListener('change', () => void load(true));
  replaceChildren(ctx.root, h('h1', { tabindex: -1 }, 'Request log'), h('p', { class: 'muted small' }, 'Newest first, stamped in real time (not the account\'s test clock). Authorization is masked; bodies over 64 KiB are truncated. The console\'s own calls are recorded too (header x-sandbox-client: console), and hidden here unless included.'), form, list, more);
  void load(true);
};
