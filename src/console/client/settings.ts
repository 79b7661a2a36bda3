/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import type { Context, View } from './context.js';
import { facts, h, pair, replaceChildren, said, widePair, unavailable, when } from './dom.js';
import { listeningRegion, type Listening } from './listening.js';
import { rateLimitRegion } from './rate-limits.js';
import { accountTargetOf } from './targets.js';

interface Clock {
  now: string;
  offsetMs: number;
}

interface Account {
  id: string;
  userId?: string;
  name: string;
  permissions: string[];
  webhookUrl: string | null;
  /** Absent from a sandbox older than listeners mode: its webhooks are direct. */
  webhookDelivery?: Listening['delivery'];
  /** Who-am-I answers it; a change of the webhook URL does not (secrets only in creation and who-am-I). */
  webhookSecret?: string;
  createdAt: string;
}

const MINUTE = 60_000;
const STEPS: readonly [string, number][] = [
  ['+1 minute', MINUTE],
  ['+1 hour', 60 * MINUTE],
  ['+1 day', 24 * 60 * MINUTE],
  ['+30 days', 30 * 24 * 60 * MINUTE],
];
const UNITS: Record<string, number> = { seconds: 1000, minutes: MINUTE, hours: 60 * MINUTE, days: 24 * 60 * MINUTE };

function duration(ms: number): string {
  if (ms === 0) return 'in step with real time';
  const days = Math.floor(ms / (24 * 60 * MINUTE));
  const hours = Math.floor((ms % (24 * 60 * MINUTE)) / (60 * MINUTE));
  const minutes = Math.floor((ms % (60 * MINUTE)) / MINUTE);
  const seconds = Math.floor((ms % MINUTE) / 1000);
  return `${days ? `${days} d ` : ''}${hours ? `${hours} h ` : ''}${minutes ? `${minutes} min ` : ''}${seconds ? `${seconds} s ` : ''}ahead of real time`.trim();
}

/** The account's test clock: jobs that fall due (fills, expiries, webhook retries) run as it moves. */
export const clockView: View = (ctx) => {
  const shown = h('div');
  async function draw(): Promise<void> {
    const clock = await ctx.api.get<Clock>('/_sandbox/clock');
    if (!clock.ok) return ctx.fail('Reading the clock', clock);
    replaceChildren(shown, facts([
      ['Now (account clock)', h('span', { id: 'clock-now', class: 'mono' }, when(clock.body.now))],
      ['Offset', duration(clock.body.offsetMs)],
    ]));
  }
  async function advance(ms: number): Promise<void> {
    const answer = await ctx.api.post<Clock>('/_sandbox/clock/advance', { ms });
    if (!answer.ok) return ctx.fail('Advancing the clock', answer);
    ctx.notify(`Clock advanced to ${when(answer.body.now)}`, 'ok');
    await Promise.all([draw(), ctx.refreshClock()]);
  }
  const amount = h('input', { id: 'advance-amount', type: 'number', min: 0, step: 1, required: true, inputmode: 'numeric', value: 1 });
  const unit = h('select', { id: 'advance-unit' }, Object.keys(UNITS).map((u) => h('option', { value: u, selected: u === 'hours' }, u)));
  const form = h(
    'form',
    { class: 'filters' },
    pair(h('label', { for: 'advance-amount' }, 'Advance by'), amount, h('label', { for: 'advance-unit', class: 'visually-hidden' }, 'Unit'), unit),
    h('button', { type: 'submit' }, 'Advance'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void advance(Math.round(Number(amount.value) * (UNITS[unit.value] ?? MINUTE)));
  });
  replaceChildren(
    ctx.root,
    h('h1', { tabindex: -1 }, 'Test clock'),
    h('p', { class: 'muted' }, 'The account\'s clock only moves forward. Advancing it runs every job that falls due, in order: instruction fills, expiries, webhook retries.'),
    shown,
    h('div', { class: 'row buttons' }, STEPS.map(([label, ms]) => h('button', { type: 'button', class: 'secondary', onclick: () => void advance(ms) }, label))),
    form,
  );
  void draw();
};

const MODES: readonly [Listening['delivery'], string, string][] = [
  ['direct', 'Direct', 'The sandbox posts each webhook to its URL itself. Needs the URL reachable from where the sandbox runs.'],
  [
    'listeners',
    'Listeners',
    'The sandbox connects to nothing: each attempt goes to the listeners connected with this account\'s key (payments-sandbox listen), which post it from where they run and report the answer. For a shared sandbox that cannot reach your machine or CI job.',
  ],
];

/**
 * The delivery-mode switch: a radio group that calls the control API on change, and goes back to
 * the mode in effect when the sandbox refuses.
 */
function deliverySwitch(ctx: Context, onSwitched: (account: Account) => void): { element: HTMLElement; set(mode: Listening['delivery']): void } {
  let current: Listening['delivery'] = 'direct';
  const radios = MODES.map(([mode, label, help]) => {
    const input = h('input', { type: 'radio', name: 'webhook-delivery', id: `delivery-${mode}`, value: mode, 'aria-describedby': `delivery-${mode}-help` });
    input.addEventListener('change', () => void choose(mode));
    return { mode, input, element: h('div', { class: 'choice' }, input, h('label', { for: `delivery-${mode}` }, label), h('p', { id: `delivery-${mode}-help`, class: 'small muted' }, help)) };
  });
  const set = (mode: Listening['delivery']): void => {
    current = mode;
    for (const r of radios) r.input.checked = r.mode === mode;
  };
  async function choose(mode: Listening['delivery']): Promise<void> {
    if (mode === current) return;
    for (const r of radios) r.input.disabled = true;
    const answer = await ctx.api.put<Account>('/_sandbox/webhook-url', { delivery: mode });
    for (const r of radios) r.input.disabled = false;
    if (!answer.ok) {
      set(current);
      return answer.missing ? ctx.notify('Delivery modes are not available in this sandbox version.', 'bad') : ctx.fail('Switching the delivery mode', answer);
    }
    set(answer.body.webhookDelivery ?? mode);
    ctx.notify(mode === 'listeners' ? 'Webhooks now go to this account\'s listeners; the sandbox posts nothing itself.' : 'Webhooks are now posted by the sandbox to their URL.', 'ok');
    onSwitched(answer.body);
  }
  const element = h('fieldset', { class: 'delivery-modes' }, h('legend', {}, 'How webhooks leave'), radios.map((r) => r.element));
  return { element, set };
}

/** Who the key belongs to, the webhook secret to verify signatures with, the global webhook URL and the delivery mode. */
export const accountView: View = (ctx) => {
  const details = h('div');
  const secret = h('div');
  const listening = listeningRegion(ctx);
  const rates = rateLimitRegion(ctx);
  const modes = deliverySwitch(ctx, (account) => {
    show(account);
    void listening.draw();
  });
  const urlHelp = h('p', { class: 'muted small' }, 'Used when a transaction has no postbackUrl.');
  const url = h('input', { id: 'webhook-url', type: 'url', placeholder: 'https://example.com/webhooks', autocomplete: 'off' });
  const form = h(
    'form',
    { class: 'filters' },
    widePair(h('label', { for: 'webhook-url' }, 'Webhook URL'), url),
    h('button', { type: 'submit' }, 'Save'),
    h('button', { type: 'button', class: 'secondary', id: 'webhook-url-clear' }, 'Clear'),
  );
  function showSecret(value: string): void {
    const code = h('code', { id: 'webhook-secret', class: 'id' }, '•'.repeat(Math.min(value.length, 24)));
    const toggle = h('button', { type: 'button', class: 'secondary', 'aria-controls': 'webhook-secret', 'aria-pressed': 'false' }, 'Show');
    toggle.addEventListener('click', () => {
      const showing = toggle.getAttribute('aria-pressed') === 'true';
      code.textContent = showing ? '•'.repeat(Math.min(value.length, 24)) : value;
      toggle.setAttribute('aria-pressed', String(!showing));
      toggle.textContent = showing ? 'Show' : 'Hide';
    });
    const copy = h('button', { type: 'button', class: 'secondary' }, 'Copy');
    copy.addEventListener('click', () => void navigator.clipboard?.writeText(value).then(() => ctx.notify('Webhook secret copied', 'ok')));
    replaceChildren(secret, h('h2', {}, 'Webhook secret'), h('p', { class: 'muted small' }, 'The HMAC-SHA256 key of every webhook\'s x-signature header.'), h('p', { class: 'row' }, code, toggle, copy));
  }
  function show(account: Account): void {
    const mode = account.webhookDelivery ?? 'direct';
    replaceChildren(details, facts([
      ['Account', h('span', { class: 'mono' }, account.id)],
      ['Name', account.name],
      ['User id', account.userId ? h('span', { class: 'mono' }, account.userId) : null],
      ['Permissions', account.permissions.join(', ')],
      ['Webhook URL', h('span', { id: 'account-webhook-url', class: 'mono id' }, account.webhookUrl ?? 'not set')],
      ['Webhook delivery', h('span', { id: 'account-webhook-delivery' }, mode)],
      ['Webhooks go to', h('span', { id: 'account-webhook-target' }, said(accountTargetOf(account)))],
      ['Created', when(account.createdAt)],
    ]));
    url.value = account.webhookUrl ?? '';
    // In listeners mode the URL is fetched by the listener, so it is named as that machine sees it.
    urlHelp.textContent =
      mode === 'listeners'
        ? 'Used when a transaction has no postbackUrl. The listener posts to it from where it runs (so http://localhost:3000/hooks means the listener\'s machine), unless it was started with --forward-to.'
        : 'Used when a transaction has no postbackUrl.';
    modes.set(mode);
    if (account.webhookSecret !== undefined) showSecret(account.webhookSecret);
    void rates.draw(account.id);
  }
  async function save(value: string | null): Promise<void> {
    const answer = await ctx.api.put<Account>('/_sandbox/webhook-url', { url: value });
    if (!answer.ok) return ctx.fail('Saving the webhook URL', answer);
    ctx.notify(value ? `Webhook URL set to ${value}` : 'Webhook URL cleared', 'ok');
    show(answer.body);
  }
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void save(url.value.trim() || null);
  });
  form.querySelector('#webhook-url-clear')?.addEventListener('click', () => void save(null));
  const check = h('button', { type: 'button', class: 'secondary', id: 'listeners-refresh' }, 'Check listeners again');
  check.addEventListener('click', () => void listening.draw());
  replaceChildren(
    ctx.root,
    h('h1', { tabindex: -1 }, 'Account'),
    details,
    h('h2', {}, 'Webhook delivery'),
    modes.element,
    listening.element,
    h('p', { class: 'row buttons' }, check),
    h('h2', {}, 'Global webhook URL'),
    urlHelp,
    form,
    secret,
    rates.element,
  );
  void listening.draw();
  void (async () => {
    const answer = await ctx.api.get<Account>('/_sandbox/account');
    if (answer.ok) return show(answer.body);
    if (answer.missing) {
      replaceChildren(details, unavailable('Reading the account (GET /_sandbox/account)'), h('p', { class: 'muted small' }, 'Saving a webhook URL below still works.'));
      return;
    }
    ctx.fail('Reading the account', answer);
  })();
};
