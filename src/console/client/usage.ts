/// <reference lib="dom" />
import type { View } from './context.js';
import { facts, h, replaceChildren, unavailable } from './dom.js';

/** `GET /_sandbox/usage`, as openapi.yaml's AccountUsage describes it. */
interface AccountUsage {
  records: number;
  bytes: number;
  quotas: { records: number | null; bytes: number | null };
  requestLog: { bytes: number | null; processBudgetBytes: number | null };
}

const size = (bytes: number): string =>
  bytes < 1024 ? `${bytes} B` : bytes < 1024 ** 2 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024 ** 2).toFixed(1)} MiB`;

/** A use against its cap: the figures, and a native progress bar (read out by screen readers) when there is a cap. */
function against(used: number, cap: number | null, shown: (n: number) => string, label: string): HTMLElement {
  if (cap === null) return h('span', {}, `${shown(used)} `, h('span', { class: 'muted small' }, '(no cap)'));
  const share = Math.min(100, Math.round((used / cap) * 100));
  return h(
    'span',
    { class: 'usage' },
    h('span', {}, `${shown(used)} of ${shown(cap)} `, h('span', { class: share >= 90 ? 'tag' : 'muted small' }, `${share} %`)),
    h('progress', { max: String(cap), value: String(Math.min(used, cap)), 'aria-label': label }),
  );
}

/** Quotas (issue 42): what the account stores against its caps, and its request log's memory. */
export const usageView: View = (ctx) => {
  const body = h('div', { class: 'stack' });
  replaceChildren(
    ctx.root,
    h('h1', { tabindex: -1 }, 'Usage'),
    h('p', { class: 'muted small' }, 'What this account stores against its quotas. A create past a quota is answered 413 naming it; a reset (Account) frees everything.'),
    body,
  );
  void (async () => {
    const answer = await ctx.api.get<AccountUsage>('/_sandbox/usage');
    if (answer.missing) return replaceChildren(body, unavailable('Usage'));
    if (!answer.ok) return ctx.fail('Loading the usage', answer);
    const u = answer.body;
    replaceChildren(
      body,
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'usage-stored' },
        h('h2', { id: 'usage-stored' }, 'Stored'),
        facts([
          ['Records', against(u.records, u.quotas.records, (n) => n.toLocaleString('en'), 'Records against the quota')],
          ['Bytes', against(u.bytes, u.quotas.bytes, size, 'Stored bytes against the quota')],
        ]),
        h('p', { class: 'muted small' }, 'Records are products, offers, product images, transactions and withdrawals; each counts the JSON it was created from plus 1 KiB, an image its bytes.'),
      ),
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'usage-log' },
        h('h2', { id: 'usage-log' }, 'Request log'),
        u.requestLog.bytes === null || u.requestLog.processBudgetBytes === null
          ? h('p', {}, 'Kept in PostgreSQL (the shared store), not in this process\'s memory.')
          : facts([['In memory', against(u.requestLog.bytes, u.requestLog.processBudgetBytes, size, 'Request log memory against the budget every account shares')]]),
        h('p', { class: 'muted small' }, 'Every account\'s log shares one memory budget; the largest logs give up their oldest entries first.'),
      ),
    );
  })();
};
