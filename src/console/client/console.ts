/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import { Api, describe, session, type Answer } from './api.js';
import { catalogView } from './catalog.js';
import type { Context, View } from './context.js';
import { when } from './dom.js';
import { requestsView } from './requests.js';
import { usageView } from './usage.js';
import { faultsView } from './faults.js';
import { accountView, clockView } from './settings.js';
import { LiveState } from './state.js';
import { newPurchaseView } from './purchase.js';
import { transactionView, transactionsView } from './transactions.js';
import { webhooksView } from './webhooks.js';
import { withdrawalView, withdrawalsView } from './withdrawals.js';

/** Hash routes, so the sandbox serves one page and a reload keeps the place. */
const ROUTES: readonly [RegExp, View][] = [
  [/^#\/transactions\/new$/, newPurchaseView],
  [/^#\/transactions\/(.+)$/, transactionView],
  [/^#\/transactions$/, transactionsView],
  [/^#\/withdrawals\/(.+)$/, withdrawalView],
  [/^#\/withdrawals$/, withdrawalsView],
  [/^#\/webhooks$/, webhooksView],
  [/^#\/requests$/, requestsView],
  [/^#\/catalog$/, catalogView],
  [/^#\/clock$/, clockView],
  [/^#\/account$/, accountView],
  [/^#\/faults$/, faultsView],
  [/^#\/usage$/, usageView],
];

const $ = <T extends HTMLElement>(id: string): T => {
  const el = document.getElementById(id);
  if (!el) throw new Error(`the console shell lacks #${id}`);
  return el as T;
};

function toast(message: string, tone: 'ok' | 'bad'): void {
  const region = $('toast');
  region.textContent = message;
  region.className = `toast ${tone}`;
  region.hidden = false;
  clearTimeout(Number(region.dataset.timer));
  region.dataset.timer = String(setTimeout(() => (region.hidden = true), 6000));
}

/** A toast is about the view it was raised in: leaving the view takes it away. */
function clearToast(): void {
  const region = $('toast');
  clearTimeout(Number(region.dataset.timer));
  region.hidden = true;
  region.textContent = '';
}

interface Me {
  id: string;
  name: string;
}

/**
 * The header's clock ticks: the account clock is the server's wall clock plus the account's
 * offset, so between reads it moves as this browser's clock does. Read again after anything
 * that may move it (an advance, from here or from the API, shows up as events).
 */
class HeaderClock {
  private skewMs: number | undefined;
  private lastRead = 0;

  constructor(
    private readonly api: Api,
    private readonly shown: HTMLElement,
  ) {
    setInterval(() => this.tick(), 1000);
  }

  async read(): Promise<void> {
    this.lastRead = Date.now();
    const answer = await this.api.get<{ now: string }>('/_sandbox/clock');
    if (!answer.ok) return;
    this.skewMs = Date.parse(answer.body.now) - Date.now();
    this.tick();
  }

  /** After live events: at most one read every few seconds, however many events arrive. */
  readSoon(): void {
    if (Date.now() - this.lastRead > 3000) void this.read();
  }

  private tick(): void {
    if (this.skewMs === undefined) return;
    const now = new Date(Date.now() + this.skewMs).toISOString();
    this.shown.textContent = `Clock ${when(now)}`;
    this.shown.setAttribute('datetime', now);
  }
}

async function start(key: string): Promise<void> {
  const api = new Api(key);
  const state = new LiveState(api);
  const live = $('live');
  state.onConnection = (on) => {
    live.textContent = on ? 'Live' : 'Reconnecting…';
    live.className = `live ${on ? 'on' : 'off'}`;
  };
  const clock = new HeaderClock(api, $('header-clock'));
  state.subscribe((event) => {
    if (event) clock.readSoon();
  });
  const ctx: Context = {
    api,
    state,
    root: $('view'),
    notify: (message, tone = 'ok') => toast(message, tone),
    fail: (what: string, answer: Answer) => toast(`${what} failed: ${describe(answer)}`, 'bad'),
    refreshClock: () => clock.read(),
  };
  const who = async (): Promise<void> => {
    const me = await api.get<Me>('/_sandbox/account');
    if (!me.ok) return;
    const account = $('header-account');
    account.replaceChildren('Signed in as ', Object.assign(document.createElement('strong'), { textContent: me.body.name }), ` (${me.body.id})`);
    account.title = me.body.id;
  };

  $('signed-in').hidden = false;
  $('nav').hidden = false;
  $('sign-in').hidden = true;
  $('sign-out').addEventListener('click', () => {
    state.stop();
    session.clear();
    location.hash = '';
    location.reload();
  });

  let stop: (() => void) | void;
  const route = (): void => {
    stop?.();
    clearToast();
    const hash = location.hash || '#/transactions';
    const found = ROUTES.find(([pattern]) => pattern.test(hash));
    if (!found) {
      location.hash = '#/transactions';
      return;
    }
    const [pattern, view] = found;
    for (const a of document.querySelectorAll<HTMLAnchorElement>('#nav a')) {
      const current = hash === a.getAttribute('href') || hash.startsWith(`${a.getAttribute('href')}/`);
      if (current) {
        a.setAttribute('aria-current', 'page');
        // On a phone the sections scroll sideways in one row: the current one is brought into it.
        a.scrollIntoView({ block: 'nearest', inline: 'nearest' });
      } else a.removeAttribute('aria-current');
    }
    stop = view(ctx, pattern.exec(hash)?.[1]);
    // Moving focus to the new heading tells screen-reader users the view changed.
    ctx.root.querySelector<HTMLElement>('h1')?.focus({ preventScroll: true });
  };
  window.addEventListener('hashchange', route);
  await Promise.all([state.load(), ctx.refreshClock(), who()]);
  state.connect();
  route();
}

/** The key is checked against a call every build has before it is kept. */
async function signIn(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  const input = $<HTMLInputElement>('secret-key');
  const error = $('sign-in-error');
  const key = input.value.trim();
  const answer = await new Api(key).get('/_sandbox/clock');
  if (!answer.ok) {
    error.textContent =
      answer.status === 401
        ? 'That key was refused: check it and try again. The default account\'s key is printed when the sandbox starts; another account\'s is answered when it is created (POST /_sandbox/accounts).'
        : answer.status === 0
          ? `Cannot sign in: ${describe(answer)}.`
          : `The sandbox answered ${describe(answer)}`;
    input.focus();
    return;
  }
  session.set(key);
  await start(key);
}

$('sign-in-form').addEventListener('submit', (e) => void signIn(e as SubmitEvent));
const kept = session.get();
if (kept) void start(kept);
else $('secret-key').focus();
