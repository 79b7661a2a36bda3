/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import type { View } from './context.js';
import { facts, h, replaceChildren, unavailable, when } from './dom.js';

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
    h('label', { for: 'advance-amount' }, 'Advance by'),
    amount,
    h('label', { for: 'advance-unit', class: 'visually-hidden' }, 'Unit'),
    unit,
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

/** Who the key belongs to, the webhook secret to verify signatures with, and the global webhook URL. */
export const accountView: View = (ctx) => {
  const details = h('div');
  const secret = h('div');
  const url = h('input', { id: 'webhook-url', type: 'url', placeholder: 'https://example.com/webhooks', autocomplete: 'off' });
  const form = h(
    'form',
    { class: 'filters' },
    h('label', { for: 'webhook-url' }, 'Webhook URL'),
    url,
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
    replaceChildren(details, facts([
      ['Account', h('span', { class: 'mono' }, account.id)],
      ['Name', account.name],
      ['User id', account.userId ? h('span', { class: 'mono' }, account.userId) : null],
      ['Permissions', account.permissions.join(', ')],
      ['Webhook URL', h('span', { id: 'account-webhook-url', class: 'mono id' }, account.webhookUrl ?? 'not set')],
      ['Created', when(account.createdAt)],
    ]));
    url.value = account.webhookUrl ?? '';
    if (account.webhookSecret !== undefined) showSecret(account.webhookSecret);
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
  replaceChildren(ctx.root, h('h1', { tabindex: -1 }, 'Account'), details, h('h2', {}, 'Global webhook URL'), h('p', { class: 'muted small' }, 'Used when a transaction has no postbackUrl.'), form, secret);
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
