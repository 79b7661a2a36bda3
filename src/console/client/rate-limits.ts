/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import type { Context } from './context.js';
import { h, replaceChildren, unavailable } from './dom.js';

type RateClass = 'write' | 'read' | 'control';

interface ClassState {
  limited: boolean;
  perSecond?: number;
  burst?: number;
  remaining?: number;
  source: 'sandbox' | 'account';
}

type RateLimitState = { enabled: boolean } & Record<RateClass, ClassState>;

const CLASSES: readonly [RateClass, string][] = [
  ['write', 'Changes (POST, PUT, PATCH, DELETE of the API)'],
  ['read', 'Reads (GETs of the API)'],
  ['control', 'Control API (/_sandbox/…)'],
];

/** `50:100` → a rate and burst, `off` → off, empty → the sandbox's; undefined when it is none of these. */
function parseClass(text: string): { perSecond: number; burst?: number } | 'off' | null | undefined {
  const value = text.trim().toLowerCase();
  if (value === '') return null;
  if (value === 'off') return 'off';
  const match = /^(\d+)(?::(\d+))?$/.exec(value);
  if (!match) return undefined;
  return { perSecond: Number(match[1]), ...(match[2] !== undefined && { burst: Number(match[2]) }) };
}

/**
 * The account's rate limits (GET /_sandbox/rate-limit): each class's rate, burst and the
 * requests left now, and a form that sets the account's own (PUT
 * /_sandbox/accounts/{id}/rate-limit), which the sandbox allows on loopback without an admin
 * token; elsewhere its refusal (the admin's act) is shown with its hint.
 */
export function rateLimitRegion(ctx: Context): { element: HTMLElement; draw(accountId: string): Promise<void> } {
  const shown = h('div', { id: 'rate-limits' });
  const inputs = CLASSES.map(([name]) => h('input', { id: `rate-${name}`, type: 'text', inputmode: 'text', placeholder: 'default', autocomplete: 'off', size: 10 }));
  const form = h(
    'form',
    { class: 'rate-form', id: 'rate-limit-form' },
    CLASSES.map(([name], i) => h('p', { class: 'row' }, h('label', { for: `rate-${name}` }, name), inputs[i])),
    h('p', { class: 'muted small' }, 'Per second, optionally :burst (50:100), off, or empty for the sandbox\'s.'),
    h('button', { type: 'submit' }, 'Save limits'),
  );
  let account = '';
  function show(state: RateLimitState): void {
    const rows = CLASSES.map(([name, what]) => {
      const c = state[name];
      return h(
        'tr',
        {},
        h('th', { scope: 'row' }, name, h('div', { class: 'small muted' }, what)),
        h('td', { id: `rate-${name}-limit` }, c.limited ? `${c.perSecond}/s, burst ${c.burst}` : 'not limited'),
        h('td', { id: `rate-${name}-remaining`, class: 'mono' }, c.limited ? String(c.remaining) : '–'),
        h('td', {}, c.source === 'account' ? "account's own" : 'sandbox'),
      );
    });
    replaceChildren(
      shown,
      state.enabled ? null : h('p', { class: 'muted small', id: 'rate-off' }, 'This sandbox limits no rates (SANDBOX_RATE_LIMIT=off, or its default on loopback without an admin token).'),
      h('table', { class: 'rate-limits' }, h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Class'), h('th', { scope: 'col' }, 'Limit'), h('th', { scope: 'col' }, 'Left now'), h('th', { scope: 'col' }, 'Set by'))), h('tbody', {}, rows)),
    );
    CLASSES.forEach(([name], i) => {
      const c = state[name];
      const input = inputs[i];
      if (input) input.value = c.source !== 'account' ? '' : c.limited ? `${c.perSecond}:${c.burst}` : 'off';
    });
  }
  async function draw(accountId: string): Promise<void> {
    account = accountId;
    const answer = await ctx.api.get<RateLimitState>('/_sandbox/rate-limit');
    if (answer.ok) return show(answer.body);
    if (answer.missing) return replaceChildren(shown, unavailable('Rate limits (GET /_sandbox/rate-limit)'));
    ctx.fail('Reading the rate limits', answer);
  }
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const body: Partial<Record<RateClass, unknown>> = {};
    for (const [i, [name]] of CLASSES.entries()) {
      const parsed = parseClass(inputs[i]?.value ?? '');
      if (parsed === undefined) return ctx.notify(`${name}: write a rate per second (50 or 50:100), off, or leave it empty`, 'bad');
      if (parsed !== null) body[name] = parsed;
    }
    void (async () => {
      const answer = await ctx.api.put<RateLimitState>(`/_sandbox/accounts/${encodeURIComponent(account)}/rate-limit`, body);
      if (!answer.ok) return ctx.fail('Saving the rate limits', answer);
      ctx.notify('Rate limits saved', 'ok');
      show(answer.body);
    })();
  });
  const refresh = h('button', { type: 'button', class: 'secondary', id: 'rate-refresh' }, 'Refresh');
  refresh.addEventListener('click', () => void draw(account));
  return { element: h('section', { 'aria-labelledby': 'rate-title' }, h('h2', { id: 'rate-title' }, 'Rate limits'), shown, h('p', { class: 'row buttons' }, refresh), form), draw };
}
