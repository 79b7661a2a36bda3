/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import type { Answer } from './api.js';
import { type Context, redrawOn, type View } from './context.js';
import { disclosure, facts, h, json, money, pair, pre, replaceChildren, said, statusBadge, unavailable, when } from './dom.js';
import type { SandboxEvent } from './state.js';
import { webhookTargetOf, type AccountTarget } from './targets.js';
import { deliveryCard, type Delivery } from './webhooks.js';

/** The fields the console reads of a withdrawal (GET /_sandbox/withdrawals). */
export interface Withdrawal {
  id: string;
  externalId: string | null;
  amount: number;
  totalAmount: number;
  status: string;
  pixType: string;
  receiverPix: string;
  receiverName: string;
  receiverDocument: string;
  institution: string;
  postbackUrl: string | null;
  endToEndId: string | null;
  error: string | null;
  createdAt: string;
  updatedAt: string;
}

interface Balance {
  balance: number;
  pendingBalance: number;
  garanteeBalance: number;
  precautionaryBlock: number;
}

interface LedgerEntry {
  id: string;
  at: string;
  kind: string;
  transactionId: string | null;
  withdrawalId: string | null;
  changes: Balance;
  after: Balance;
  description: string;
}

const STATUSES = ['WITHDRAW_REQUEST', 'WITHDRAW_PROCESSING', 'WITHDRAW_APPROVED', 'WITHDRAW_REJECTED', 'WITHDRAW_ERROR', 'WITHDRAW_RETURNED'];
const filters = { status: '' };
const FIGURES: readonly [keyof Balance, string][] = [
  ['balance', 'Available'],
  ['pendingBalance', 'Pending settlement'],
  ['precautionaryBlock', 'Blocked (chargebacks)'],
  ['garanteeBalance', 'Guarantee'],
];

/** Whatever moves money: payouts, payments, refunds, chargebacks, credits. */
const movesMoney = (e: SandboxEvent | null): boolean => e === null || /^(withdrawal|transaction|balance)\./.test(e.type);

function balanceCard(ctx: Context, balance: Answer<Balance>, redraw: () => void): HTMLElement {
  const amount = h('input', { id: 'credit-amount', type: 'number', min: 1, step: 1, inputmode: 'numeric', required: true, placeholder: 'centavos, e.g. 100000' });
  const credit = h('form', { class: 'filters' }, pair(h('label', { for: 'credit-amount' }, 'Credit (centavos)'), amount), h('button', { type: 'submit', class: 'secondary' }, 'Credit'));
  credit.addEventListener('submit', async (e) => {
    e.preventDefault();
    const answer = await ctx.api.post<Balance>('/_sandbox/balance/credit', { amount: Number(amount.value) });
    if (!answer.ok) return ctx.fail('Credit', answer);
    ctx.notify(`Credited ${money(Number(amount.value), 'BRL')}: available ${money(answer.body.balance, 'BRL')}`);
    redraw();
  });
  return h(
    'section',
    { 'aria-labelledby': 'balance-h', class: 'balance' },
    h('h2', { id: 'balance-h' }, 'Balance'),
    balance.missing
      ? unavailable('The balance')
      : !balance.ok
        ? h('p', { class: 'error', role: 'alert' }, json((balance.body as { message?: string }).message ?? balance.status))
        : facts(FIGURES.map(([field, label]) => [label, h('span', { class: 'num', 'data-figure': field }, money(balance.body[field], 'BRL'))])),
    credit,
  );
}

function ledgerTable(entries: readonly LedgerEntry[]): HTMLElement {
  const shown = [...entries].reverse().slice(0, 20);
  return h(
    'section',
    { 'aria-labelledby': 'ledger-h' },
    h('h2', { id: 'ledger-h' }, 'Ledger (latest 20)'),
    shown.length === 0
      ? h('p', { class: 'muted' }, 'No movements yet.')
      : h(
          'div',
          { class: 'scroll' },
          h(
            'table',
            { class: 'list' },
            h('caption', { class: 'visually-hidden' }, 'Balance movements, newest first'),
            h('thead', {}, h('tr', {}, h('th', { scope: 'col', class: 'hide-narrow' }, 'At'), h('th', { scope: 'col' }, 'Movement'), h('th', { scope: 'col', class: 'num' }, 'Available'), h('th', { scope: 'col', class: 'num' }, 'After'))),
            h(
              'tbody',
              {},
              shown.map((e) =>
                h(
                  'tr',
                  { 'data-ledger': e.kind },
                  h('td', { class: 'hide-narrow' }, when(e.at)),
                  h('td', { class: 'wrap' }, e.withdrawalId ? h('a', { href: `#/withdrawals/${encodeURIComponent(e.withdrawalId)}` }, e.description) : e.transactionId ? h('a', { href: `#/transactions/${encodeURIComponent(e.transactionId)}` }, e.description) : e.description),
                  h('td', { class: 'num' }, e.changes.balance ? money(e.changes.balance, 'BRL') : '—'),
                  h('td', { class: 'num' }, money(e.after.balance, 'BRL')),
                ),
              ),
            ),
          ),
        ),
  );
}

/** The status as the API spells it, free to break after WITHDRAW_ in a narrow column. */
function statusCell(status: string): HTMLElement {
  const badge = statusBadge(status);
  const [head, rest] = status.startsWith('WITHDRAW_') ? ['WITHDRAW_', status.slice('WITHDRAW_'.length)] : [status, ''];
  badge.replaceChildren(head, h('wbr'), rest);
  return badge;
}

function row(w: Withdrawal): HTMLElement {
  return h(
    'tr',
    { 'data-withdrawal': w.id },
    h('td', {}, h('a', { href: `#/withdrawals/${encodeURIComponent(w.id)}`, class: 'mono' }, w.id.slice(0, 8))),
    h('td', { class: 'hide-narrow' }, when(w.createdAt)),
    h('td', { class: 'id' }, w.externalId ?? '—'),
    h('td', { class: 'id hide-narrow' }, `${w.pixType} ${w.receiverPix}`),
    h('td', { class: 'num' }, money(w.amount, 'BRL')),
    h('td', {}, statusCell(w.status)),
  );
}

/** Payouts: the balance (with a credit form), the withdrawals live, newest first, and the ledger. */
export const withdrawalsView: View = (ctx) => {
  let seq = 0;
  const select = h('select', { id: 'filter-wd-status' }, h('option', { value: '' }, 'Any'), STATUSES.map((s) => h('option', { value: s, selected: s === filters.status }, s)));
  const draw = async (): Promise<void> => {
    const mine = ++seq;
    const [balance, list, ledger] = await Promise.all([
      ctx.api.get<Balance>('/users/balance'),
      ctx.api.all<Withdrawal>(`/_sandbox/withdrawals${filters.status ? `?status=${filters.status}` : ''}`),
      ctx.api.all<LedgerEntry>('/_sandbox/balance/ledger'),
    ]);
    if (mine !== seq) return;
    const shown = [...list.body].reverse();
    const focused = document.activeElement?.id;
    replaceChildren(
      ctx.root,
      h('h1', { tabindex: -1 }, 'Payouts'),
      h('div', { class: 'grid' }, balanceCard(ctx, balance, () => void draw()), ledger.missing ? unavailable('The ledger') : ledgerTable(ledger.body)),
      h('h2', {}, 'Withdrawals'),
      h('div', { class: 'filters' }, pair(h('label', { for: 'filter-wd-status' }, 'Status'), select)),
      h('p', { class: 'muted small', 'aria-live': 'polite' }, `${shown.length} withdrawal${shown.length === 1 ? '' : 's'}`),
      list.missing
        ? unavailable('Payouts')
        : h(
            'div',
            { class: 'scroll' },
            h(
              'table',
              { class: 'list' },
              h('caption', { class: 'visually-hidden' }, 'Withdrawals, newest first'),
              h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Id'), h('th', { scope: 'col', class: 'hide-narrow' }, 'Created'), h('th', { scope: 'col' }, 'External id'), h('th', { scope: 'col', class: 'hide-narrow' }, 'Pix key'), h('th', { scope: 'col', class: 'num' }, 'Amount'), h('th', { scope: 'col' }, 'Status'))),
              h(
                'tbody',
                {},
                shown.length === 0
                  ? h('tr', {}, h('td', { colspan: 6, class: 'empty' }, 'No withdrawals yet: fund the balance, then POST /withdraws/cash-out; they appear here as they happen.'))
                  : shown.map(row),
              ),
            ),
          ),
    );
    if (focused) document.getElementById(focused)?.focus();
  };
  select.addEventListener('change', () => {
    filters.status = select.value;
    void draw();
  });
  void draw();
  return redrawOn(ctx, movesMoney, draw);
};

const OPEN = ['WITHDRAW_REQUEST', 'WITHDRAW_PROCESSING'];
const ACTIONS: readonly { name: string; label: string; enabled: (w: Withdrawal) => boolean }[] = [
  { name: 'approve', label: 'Approve (paid out)', enabled: (w) => OPEN.includes(w.status) },
  { name: 'reject', label: 'Reject', enabled: (w) => OPEN.includes(w.status) },
  { name: 'fail', label: 'Fail', enabled: (w) => OPEN.includes(w.status) },
  { name: 'return', label: 'Return', enabled: (w) => w.status === 'WITHDRAW_APPROVED' },
];
const note = { message: '' };

function actions(ctx: Context, w: Withdrawal, after: () => void): HTMLElement {
  const out = h('p', { class: 'action-result', role: 'status' });
  const message = h('input', { id: 'withdrawal-message', type: 'text', value: note.message, autocomplete: 'off' });
  message.addEventListener('input', () => (note.message = message.value));
  const buttons = ACTIONS.map((action) => {
    const button = h('button', { type: 'button', 'data-action': action.name, class: action.name === 'approve' ? 'primary' : 'secondary', disabled: !action.enabled(w) }, action.label);
    button.addEventListener('click', async () => {
      for (const b of buttons) b.disabled = true;
      const text = note.message.trim();
      const answer = await ctx.api.post<Withdrawal>(`/_sandbox/withdrawals/${encodeURIComponent(w.id)}/${action.name}`, action.name !== 'approve' && text ? { message: text } : undefined);
      if (!answer.ok) {
        ctx.fail(action.label, answer);
        for (const [i, b] of buttons.entries()) b.disabled = !ACTIONS[i]!.enabled(w);
        return;
      }
      note.message = '';
      ctx.notify(`${action.label}: withdrawal ${w.id} is ${answer.body.status}`, 'ok');
      after();
    });
    return button;
  });
  return h(
    'section',
    { 'aria-labelledby': 'wd-actions-h' },
    h('h2', { id: 'wd-actions-h' }, 'Actions'),
    h('div', { class: 'filters' }, pair(h('label', { for: 'withdrawal-message' }, 'Message for reject / fail / return (optional)'), message)),
    h('div', { class: 'row buttons' }, buttons),
    out,
  );
}

/** One withdrawal: its receiver and amounts, the control calls, its events and its webhooks. */
export const withdrawalView: View = (ctx, id) => {
  if (!id) return;
  const wdId = decodeURIComponent(id);
  let seq = 0;
  const draw = async (): Promise<void> => {
    const mine = ++seq;
    const [wd, events, deliveries, account] = await Promise.all([
      ctx.api.get<Withdrawal>(`/_sandbox/withdrawals/${encodeURIComponent(wdId)}`),
      ctx.api.all<SandboxEvent>(`/_sandbox/events?withdrawalId=${encodeURIComponent(wdId)}`),
      ctx.api.all<Delivery>(`/_sandbox/webhooks?withdrawalId=${encodeURIComponent(wdId)}`),
      ctx.api.get<AccountTarget>('/_sandbox/account'),
    ]);
    if (mine !== seq) return;
    const back = h('p', {}, h('a', { href: '#/withdrawals' }, '← Payouts'));
    if (!wd.ok) {
      replaceChildren(ctx.root, back, h('h1', { tabindex: -1 }, `Withdrawal ${wdId}`), h('p', { class: 'error', role: 'alert' }, json((wd.body as { message?: string }).message ?? wd.status)));
      return;
    }
    const w = wd.body;
    const target = account.ok ? account.body : null;
    const focused = document.activeElement?.id;
    replaceChildren(
      ctx.root,
      back,
      h('h1', { tabindex: -1 }, 'Withdrawal ', statusBadge(w.status)),
      h('p', { class: 'mono small id' }, w.id),
      h(
        'div',
        { class: 'grid' },
        h(
          'section',
          { 'aria-labelledby': 'wd-summary-h' },
          h('h2', { id: 'wd-summary-h' }, 'Summary'),
          facts([
            ['Amount', money(w.amount, 'BRL')],
            ['Total (with fee)', money(w.totalAmount, 'BRL')],
            ['External id', w.externalId],
            ['Created', when(w.createdAt)],
            ['Updated', when(w.updatedAt)],
            ['End-to-end id', w.endToEndId ? h('span', { class: 'mono id' }, w.endToEndId) : null],
            ['Error', w.error],
            ['Webhooks go to', h('span', { id: 'wd-webhook-target' }, said(webhookTargetOf(w.postbackUrl, target)))],
          ]),
        ),
        h(
          'section',
          { 'aria-labelledby': 'wd-receiver-h' },
          h('h2', { id: 'wd-receiver-h' }, 'Receiver'),
          facts([
            ['Pix key', h('span', { class: 'mono id' }, `${w.pixType} ${w.receiverPix}`)],
            ['Name', w.receiverName],
            ['Document', h('span', { class: 'mono' }, w.receiverDocument)],
            ['Institution', w.institution],
          ]),
        ),
      ),
      actions(ctx, w, () => void draw()),
      h(
        'section',
        { 'aria-labelledby': 'wd-timeline-h' },
        h('h2', { id: 'wd-timeline-h' }, 'Timeline'),
        !events.ok || events.body.length === 0
          ? h('p', { class: 'muted' }, 'No events.')
          : h('ol', { class: 'timeline' }, events.body.map((e) => h('li', { 'data-event': e.type }, disclosure(e.id, {}, [h('span', { class: 'mono small' }, when(e.createdAt)), ' ', h('strong', {}, e.type)], pre(e.data, `Data of ${e.id}`))))),
      ),
      h(
        'section',
        { 'aria-labelledby': 'wd-deliveries-h' },
        h('h2', { id: 'wd-deliveries-h' }, 'Webhook deliveries'),
        deliveries.missing
          ? unavailable('The webhook log')
          : deliveries.body.length === 0
            ? h('p', { class: 'muted' }, 'None yet.')
            : h('div', { class: 'stack' }, [...deliveries.body].reverse().map((d) => deliveryCard(ctx, d, target?.webhookDelivery ?? (target ? 'direct' : undefined), () => void draw()))),
      ),
      disclosure(`raw:${w.id}`, {}, `Raw withdrawal (GET /_sandbox/withdrawals/${w.id})`, pre(w, 'Raw withdrawal')),
    );
    if (focused) document.getElementById(focused)?.focus();
  };
  void draw();
  return redrawOn(ctx, (e) => e === null || (e as SandboxEvent & { withdrawalId?: string | null }).withdrawalId === wdId, draw);
};
