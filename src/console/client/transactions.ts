/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import type { Answer } from './api.js';
import { type Context, redrawOn, type View } from './context.js';
import { type Child, disclosure, facts, h, json, money, pair, pre, replaceChildren, said, statusBadge, unavailable, when } from './dom.js';
import { byIdDesc, type SandboxEvent, type Tx } from './state.js';
import { paidByOf, webhookTargetOf, type AccountTarget } from './targets.js';
import { deliveryCard, type Delivery } from './webhooks.js';

/** How often a transaction's view reads its webhook log again while a delivery is pending. */
const PENDING_REFRESH_MS = 1000;

const STATUSES = ['PENDING', 'APPROVED', 'REFUNDED', 'CHARGEBACK', 'BLOCKED'];
const CURRENCIES = ['BRL', 'COP', 'ARS', 'MXN'];
const METHODS = ['PIX', 'BOLETO', 'PIX_BOLETO', 'CREDIT_CARD', 'PSE', 'NEQUI', 'BREB', 'BANK_TRANSFER', 'SPEI'];

/** Filter choices survive redraws and visits to a detail. */
const filters = { status: '', currency: '', method: '', text: '' };

function select(id: string, label: string, options: readonly string[], value: string, onChange: (v: string) => void): Child[] {
  const el = h('select', { id }, h('option', { value: '' }, 'Any'), options.map((o) => h('option', { value: o, selected: o === value }, o)));
  el.addEventListener('change', () => onChange(el.value));
  return [pair(h('label', { for: id }, label), el)];
}

function matches(tx: Tx): boolean {
  const text = filters.text.trim().toLowerCase();
  return (
    (!filters.status || tx.status === filters.status) &&
    (!filters.currency || tx.currency === filters.currency) &&
    (!filters.method || tx.method === filters.method) &&
    (!text || tx.id.includes(text) || (tx.externalId ?? '').toLowerCase().includes(text))
  );
}

/** Why a transaction is where it is, when its status alone does not say (BLOCKED: expired, declined or rejected). */
export function reasonOf(tx: Tx): string | null {
  const reason = typeof tx.statusReason === 'string' ? tx.statusReason : null;
  return reason && reason !== tx.status ? reason : null;
}

function statusCell(tx: Tx): Child {
  const reason = reasonOf(tx);
  return [statusBadge(tx.status), reason ? h('span', { class: 'reason small' }, ` ${reason.toLowerCase()}`) : null];
}

function row(tx: Tx): HTMLElement {
  const href = `#/transactions/${encodeURIComponent(tx.id)}`;
  // On a phone the row is a card (console.css): id and status on the first line, amount beside them.
  return h(
    'tr',
    { 'data-transaction': tx.id },
    h('td', { class: 'cell-id' }, h('a', { href, class: 'mono' }, tx.id)),
    h('td', { class: 'cell-created' }, when(tx.createdAt)),
    h('td', { class: 'id cell-ref' }, tx.externalId ?? '—'),
    h('td', { class: 'cell-method' }, `${tx.currency} · ${tx.method}`),
    h('td', { class: 'num cell-amount' }, money(tx.amount, tx.currency)),
    h('td', { class: 'cell-status' }, statusCell(tx)),
  );
}

/** The list: every transaction of the account, live, filtered here; search asks the API by id or externalId. */
export const transactionsView: View = (ctx) => {
  const tbody = h('tbody');
  const count = h('p', { class: 'muted small', 'aria-live': 'polite' });
  const draw = (): void => {
    const all = [...ctx.state.transactions.values()].sort(byIdDesc);
    const shown = all.filter(matches);
    count.textContent = `${shown.length} of ${all.length} transaction${all.length === 1 ? '' : 's'}`;
    replaceChildren(
      tbody,
      shown.length === 0
        ? h('tr', {}, h('td', { colspan: 6, class: 'empty' }, all.length === 0 ? 'No transactions yet: create one with POST /transactions/v2/purchase; it appears here as it happens.' : 'No transaction matches these filters.'))
        : shown.map(row),
    );
  };

  const by = h('select', { id: 'search-by' }, h('option', { value: 'id' }, 'Id'), h('option', { value: 'externalId' }, 'External id'));
  const query = h('input', { id: 'search-q', type: 'search', required: true, autocomplete: 'off', placeholder: 'e.g. 100000042' });
  const search = h(
    'form',
    { class: 'search', role: 'search', 'aria-label': 'Find a transaction' },
    pair(h('label', { for: 'search-by' }, 'Find by'), by),
    pair(h('label', { for: 'search-q', class: 'visually-hidden' }, 'Value'), query, h('button', { type: 'submit' }, 'Find')),
  );
  search.addEventListener('submit', async (e) => {
    e.preventDefault();
    const answer = await ctx.api.get<Tx>(`/transactions/${encodeURIComponent(query.value.trim())}${by.value === 'externalId' ? '?searchBy=externalId' : ''}`);
    if (!answer.ok) return ctx.fail('Search', answer);
    ctx.state.remember(answer.body);
    location.hash = `#/transactions/${encodeURIComponent(answer.body.id)}`;
  });

  const text = h('input', { id: 'filter-text', type: 'text', value: filters.text, autocomplete: 'off' });
  text.addEventListener('input', () => {
    filters.text = text.value;
    draw();
  });
  replaceChildren(
    ctx.root,
    h('div', { class: 'card-head' }, h('h1', { tabindex: -1 }, 'Transactions'), h('a', { href: '#/transactions/new', class: 'button' }, 'New purchase')),
    search,
    h(
      'div',
      { class: 'filters' },
      select('filter-status', 'Status', STATUSES, filters.status, (v) => ((filters.status = v), draw())),
      select('filter-currency', 'Currency', CURRENCIES, filters.currency, (v) => ((filters.currency = v), draw())),
      select('filter-method', 'Method', METHODS, filters.method, (v) => ((filters.method = v), draw())),
      pair(h('label', { for: 'filter-text' }, 'Id or external id contains'), text),
    ),
    count,
    h(
      'div',
      { class: 'scroll' },
      h(
        'table',
        { class: 'list transactions' },
        h('caption', { class: 'visually-hidden' }, 'Transactions, newest first'),
        h(
          'thead',
          {},
          h('tr', {}, h('th', { scope: 'col' }, 'Id'), h('th', { scope: 'col' }, 'Created'), h('th', { scope: 'col' }, 'External id'), h('th', { scope: 'col' }, 'Method'), h('th', { scope: 'col', class: 'num' }, 'Amount'), h('th', { scope: 'col' }, 'Status')),
        ),
        tbody,
      ),
    ),
  );
  draw();
  return redrawOn(ctx, () => true, draw);
};

function link(href: string, text: string): HTMLElement {
  return h('a', { href, target: '_blank', rel: 'noopener' }, text);
}

/** The links of a transaction's payer pages, with their token (GET /_sandbox/transactions/:id/payer-pages). */
interface PayerPages {
  checkout: { url: string } | null;
  boleto: { url: string } | null;
  pix: { url: string } | null;
  spei: { url: string } | null;
}

/** The payment instruction as the payer would see it, and the hosted pages that show it (null: their links could not be read). */
function instruction(tx: Tx, payerPages: PayerPages | null): HTMLElement {
  const rows: [string, Child][] = [];
  const pages: HTMLElement[] = [];
  const pixCode = typeof tx.pixCode === 'string' ? tx.pixCode : undefined;
  const pi = (tx.paymentInstruction ?? {}) as Record<string, unknown>;
  if (tx.currency === 'COP') {
    rows.push(['Redirect URL', typeof tx.redirectUrl === 'string' ? h('span', { class: 'mono id' }, tx.redirectUrl) : 'not filled yet']);
    if (payerPages?.checkout) pages.push(link(payerPages.checkout.url, 'Checkout page'));
  }
  if (tx.currency === 'MXN' && typeof tx.clabe === 'string') {
    rows.push(['CLABE', h('span', { class: 'mono' }, tx.clabe)]);
    if (payerPages?.spei) pages.push(link(payerPages.spei.url, 'SPEI payer page'));
  }
  if (tx.currency === 'ARS') {
    rows.push(['CVU', typeof tx.cvu === 'string' ? h('span', { class: 'mono' }, tx.cvu) : 'not filled yet']);
    const b = pi.beneficiary as Record<string, string> | undefined;
    if (b) rows.push(['Beneficiary', `${b.name} · CUIT ${b.cuit} · alias ${b.alias} · ${b.bank}`]);
  }
  if (pixCode !== undefined) {
    rows.push(['Pix code', pixCode ? h('code', { class: 'id' }, pixCode) : 'not filled yet']);
    if (pixCode) {
      // The image the answer carries: the QR's own URL needs the payer link's token, and may name another host.
      if (typeof tx.qrCode === 'string') rows.push(['QR', h('img', { src: `data:image/png;base64,${tx.qrCode}`, width: 140, height: 140, alt: 'Pix QR code' })]);
      if (payerPages?.pix) pages.push(link(payerPages.pix.url, 'Pix payer page'));
    }
  }
  if (tx.method === 'BOLETO' || tx.method === 'PIX_BOLETO') {
    rows.push(['Digitable line', typeof pi.boletoDigitableLine === 'string' ? h('code', { class: 'id' }, pi.boletoDigitableLine) : 'registration pending']);
    if (typeof pi.dueDate === 'string') rows.push(['Due date', when(pi.dueDate)]);
    if (payerPages?.boleto) pages.push(link(payerPages.boleto.url, 'Boleto page'));
  }
  if (tx.method === 'CREDIT_CARD') {
    const card = tx.card as { brand?: string; last4?: string } | undefined;
    rows.push(['Card', card ? `${card.brand ?? ''} •••• ${card.last4 ?? ''}` : '—']);
  }
  return h(
    'section',
    { 'aria-labelledby': 'instruction-h' },
    h('h2', { id: 'instruction-h' }, 'Instruction'),
    rows.length ? facts(rows) : h('p', { class: 'muted' }, 'No instruction for this method.'),
    pages.length ? h('p', { class: 'links' }, 'Payer pages: ', pages.flatMap((p, i) => (i ? [' · ', p] : [p]))) : null,
  );
}

interface Action {
  name: string;
  label: string;
  enabled: (tx: Tx) => boolean;
  body?: (tx: Tx, note: string, rail: string) => unknown;
}

const pending = (tx: Tx): boolean => tx.status === 'PENDING';
const approved = (tx: Tx): boolean => tx.status === 'APPROVED';

/** Whether the payment instruction is there already: then there is nothing to fill (a card has none). */
export function hasInstruction(tx: Tx): boolean {
  const pi = (tx.paymentInstruction ?? {}) as Record<string, unknown>;
  switch (tx.method) {
    case 'CREDIT_CARD':
      return true;
    case 'PIX':
      return typeof tx.pixCode === 'string' && tx.pixCode !== '';
    case 'BOLETO':
      return pi.type === 'BOLETO';
    case 'PIX_BOLETO':
      return typeof tx.pixCode === 'string' && tx.pixCode !== '' && pi.type === 'BOLETO';
    case 'SPEI':
      // The charge's CLABE comes in the 201: there is nothing to fill.
      return typeof tx.clabe === 'string';
    default:
      return tx.currency === 'COP' ? typeof tx.redirectUrl === 'string' : typeof tx.cvu === 'string';
  }
}

const ACTIONS: readonly Action[] = [
  { name: 'fill', label: 'Fill instruction', enabled: (tx) => pending(tx) && !hasInstruction(tx) },
  { name: 'pay', label: 'Pay', enabled: pending, body: (tx, _note, rail) => (tx.currency === 'BRL' && rail ? { rail } : undefined) },
  { name: 'expire', label: 'Expire', enabled: pending },
  { name: 'decline', label: 'Decline', enabled: pending, body: (_tx, note) => (note ? { message: note } : undefined) },
  { name: 'refund', label: 'Refund', enabled: approved },
  { name: 'chargeback', label: 'Chargeback', enabled: approved, body: (_tx, note) => (note ? { reason: note } : undefined) },
];

/** Kept across the redraws a live event causes, so typing is not lost. */
const actionInputs = { note: '', rail: '' };

function actions(ctx: Context, tx: Tx, after: (tx: Tx) => void): HTMLElement {
  const out = h('p', { class: 'action-result', role: 'status' });
  const rails = tx.method === 'PIX_BOLETO' ? ['PIX', 'BOLETO'] : tx.method === 'PIX' ? ['PIX'] : tx.method === 'BOLETO' ? ['BOLETO'] : [];
  const rail = h('select', { id: 'pay-rail' }, h('option', { value: '' }, 'Default'), rails.map((r) => h('option', { value: r, selected: r === actionInputs.rail }, r)));
  rail.addEventListener('change', () => (actionInputs.rail = rail.value));
  const note = h('input', { id: 'action-note', type: 'text', value: actionInputs.note, autocomplete: 'off' });
  note.addEventListener('input', () => (actionInputs.note = note.value));
  const buttons = ACTIONS.map((action) => {
    const button = h('button', { type: 'button', 'data-action': action.name, class: action.name === 'pay' ? 'primary' : 'secondary', disabled: !action.enabled(tx) }, action.label);
    button.addEventListener('click', async () => {
      for (const b of buttons) b.disabled = true;
      const answer: Answer<Tx> = await ctx.api.post<Tx>(`/_sandbox/transactions/${encodeURIComponent(tx.id)}/${action.name}`, action.body?.(tx, actionInputs.note.trim(), actionInputs.rail));
      if (answer.missing) {
        out.textContent = `${action.label} is not available in this sandbox version.`;
        out.className = 'action-result note';
        for (const [i, b] of buttons.entries()) b.disabled = !ACTIONS[i]!.enabled(tx);
        return;
      }
      if (!answer.ok) {
        ctx.fail(action.label, answer);
        for (const [i, b] of buttons.entries()) b.disabled = !ACTIONS[i]!.enabled(tx);
        return;
      }
      ctx.notify(`${action.label}: transaction ${tx.id} is ${answer.body.status}`, 'ok');
      actionInputs.note = '';
      ctx.state.remember(answer.body);
      after(answer.body);
    });
    return button;
  });
  return h(
    'section',
    { 'aria-labelledby': 'actions-h' },
    h('h2', { id: 'actions-h' }, 'Actions'),
    h(
      'div',
      { class: 'filters' },
      rails.length > 1 ? pair(h('label', { for: 'pay-rail' }, 'Pay by rail'), rail) : null,
      pair(h('label', { for: 'action-note' }, 'Decline message / chargeback reason (optional)'), note),
    ),
    h('div', { class: 'row buttons' }, buttons),
    out,
  );
}

function timeline(events: readonly SandboxEvent[]): HTMLElement {
  return h(
    'section',
    { 'aria-labelledby': 'timeline-h' },
    h('h2', { id: 'timeline-h' }, 'Timeline'),
    events.length === 0
      ? h('p', { class: 'muted' }, 'No events.')
      : h(
          'ol',
          { class: 'timeline' },
          events.map((e) => h('li', { 'data-event': e.type }, disclosure(e.id, {}, [h('span', { class: 'mono small' }, when(e.createdAt)), ' ', h('strong', {}, e.type)], pre(e.data, `Data of ${e.id}`)))),
        ),
  );
}

/** One transaction: status, instruction and payer pages, actions, its events and its webhooks. */
export const transactionView: View = (ctx, id) => {
  if (!id) return;
  const txId = decodeURIComponent(id);
  let seq = 0;
  let refresh: ReturnType<typeof setTimeout> | undefined;
  const draw = async (): Promise<void> => {
    const mine = ++seq;
    clearTimeout(refresh);
    const [tx, events, deliveries, payerPages, account] = await Promise.all([
      ctx.api.get<Tx>(`/transactions/${encodeURIComponent(txId)}`),
      ctx.api.all<SandboxEvent>(`/_sandbox/events?transactionId=${encodeURIComponent(txId)}`),
      ctx.api.all<Delivery>(`/_sandbox/webhooks?transactionId=${encodeURIComponent(txId)}`),
      ctx.api.get<PayerPages>(`/_sandbox/transactions/${encodeURIComponent(txId)}/payer-pages`),
      // Where its webhooks go depends on the account's URL and delivery mode as they are now.
      ctx.api.get<AccountTarget>('/_sandbox/account'),
    ]);
    if (mine !== seq) return;
    const back = h('p', {}, h('a', { href: '#/transactions' }, '← All transactions'));
    if (!tx.ok) {
      replaceChildren(ctx.root, back, h('h1', { tabindex: -1 }, `Transaction ${txId}`), h('p', { class: 'error', role: 'alert' }, json((tx.body as { message?: string }).message ?? tx.status)));
      return;
    }
    const t = tx.body;
    const target = account.ok ? account.body : null;
    const paidBy = paidByOf(t);
    const reason = [reasonOf(t), typeof t.declineReason === 'string' ? t.declineReason : null].filter(Boolean).join(' · ') || null;
    const focused = document.activeElement?.id;
    replaceChildren(
      ctx.root,
      back,
      h('h1', { tabindex: -1 }, `Transaction ${t.id} `, statusBadge(t.status), reason ? h('span', { class: 'small muted' }, ` ${reason}`) : null),
      h(
        'div',
        { class: 'grid' },
        h(
          'section',
          { 'aria-labelledby': 'summary-h' },
          h('h2', { id: 'summary-h' }, 'Summary'),
          facts([
            ['Amount', money(t.amount, t.currency)],
            ['Method', `${t.currency} · ${t.method}`],
            ['External id', t.externalId],
            ['Created', when(t.createdAt)],
            ['Paid', when((t.approvedAt ?? t.paidAt) as string | null)],
            paidBy !== null && ['Paid by', h('span', { id: 'tx-paid-by' }, paidBy)],
            ['Webhooks go to', h('span', { id: 'tx-webhook-target' }, said(webhookTargetOf(t.postbackUrl, target)))],
            ['Fee', money(Number(t.costFee ?? 0), t.currency)],
          ]),
        ),
        instruction(t, payerPages.ok ? payerPages.body : null),
      ),
      actions(ctx, t, () => void draw()),
      timeline(events.ok ? events.body : []),
      h(
        'section',
        { 'aria-labelledby': 'deliveries-h' },
        h('h2', { id: 'deliveries-h' }, 'Webhook deliveries'),
        deliveries.missing
          ? unavailable('The webhook log')
          : deliveries.body.length === 0
            ? h('p', { class: 'muted' }, 'None yet.')
            : h('div', { class: 'stack' }, [...deliveries.body].reverse().map((d) => deliveryCard(ctx, d, target?.webhookDelivery ?? (target ? 'direct' : undefined), () => void draw()))),
      ),
      disclosure(`raw:${t.id}`, {}, `Raw transaction (GET /transactions/${t.id})`, pre(t, 'Raw transaction')),
    );
    if (focused) document.getElementById(focused)?.focus();
    // A failed attempt whose retry is scheduled is no event of its own (the delivery stays
    // pending): while a delivery waits for its first attempt, the view reads the log again.
    // One waiting for a listener is not about to be attempted: a listener connecting sends it, and its webhook.* event redraws.
    if (deliveries.ok && deliveries.body.some((d) => d.status === 'pending' && d.attempts.length === 0 && !d.waitingSince)) refresh = setTimeout(() => void draw(), PENDING_REFRESH_MS);
  };
  void draw();
  const stop = redrawOn(ctx, (e) => e === null || e.transactionId === txId, draw);
  return () => {
    // A draw still waiting on its answers when the view is left must not replace the next view.
    seq++;
    clearTimeout(refresh);
    stop();
  };
};
