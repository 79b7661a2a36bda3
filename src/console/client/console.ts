/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import { Api, describe, session, type Answer } from './api.js';
import { catalogView } from './catalog.js';
import type { Context, View } from './context.js';
import { when } from './dom.js';
import { requestsView } from './requests.js';
import { faultsView } from './faults.js';
import { accountView, clockView } from './settings.js';
import { LiveState } from './state.js';
import { transactionView, transactionsView } from './transactions.js';
import { webhooksView } from './webhooks.js';
import { withdrawalView, withdrawalsView } from './withdrawals.js';

/** Hash routes, so the sandbox serves one page and a reload keeps the place. */
const ROUTES: readonly [RegExp, View][] = [
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

async function start(key: string): Promise<void> {
  const api = new Api(key);
  const state = new LiveState(api);
  const live = $('live');
  state.onConnection = (on) => {
    live.textContent = on ? 'Live' : 'Reconnecting…';
    live.className = `live ${on ? 'on' : 'off'}`;
  };
  const clock = $('header-clock');
  const ctx: Context = {
    api,
    state,
    root: $('view'),
    notify: (message, tone = 'ok') => toast(message, tone),
    fail: (what: string, answer: Answer) => toast(`${what} failed: ${describe(answer)}`, 'bad'),
    refreshClock: async () => {
      const answer = await api.get<{ now: string }>('/_sandbox/clock');
      if (answer.ok) clock.textContent = `Clock ${when(answer.body.now)}`;
    },
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
    const hash = location.hash || '#/transactions';
    const found = ROUTES.find(([pattern]) => pattern.test(hash));
    if (!found) {
      location.hash = '#/transactions';
      return;
    }
    const [pattern, view] = found;
    for (const a of document.querySelectorAll<HTMLAnchorElement>('#nav a')) {
      const current = hash === a.getAttribute('href') || hash.startsWith(`${a.getAttribute('href')}/`);
      if (current) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    stop = view(ctx, pattern.exec(hash)?.[1]);
    // Moving focus to the new heading tells screen-reader users the view changed.
    ctx.root.querySelector<HTMLElement>('h1')?.focus({ preventScroll: true });
  };
  window.addEventListener('hashchange', route);
  await Promise.all([state.load(), ctx.refreshClock()]);
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
    error.textContent = answer.status === 401 ? 'That key was refused: check it and try again.' : `The sandbox answered ${describe(answer)}`;
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
