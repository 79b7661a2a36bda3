/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * A tiny element builder for the console. Text always goes in as text nodes, never as markup, so
 * whatever the sandbox recorded (payer names, request bodies, receiver answers) cannot become HTML.
 */

export type Child = Node | string | number | null | undefined | false | readonly Child[];
type Attrs = Record<string, string | number | boolean | null | undefined | EventListener>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.replace(/^on/, ''), value);
    else if (value === true) el.setAttribute(name, '');
    else el.setAttribute(name, String(value));
  }
  append(el, children);
  return el;
}

export function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function replaceChildren(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

export const json = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value, null, 2));

/** A body as recorded: pretty JSON when it parses, else the text as it came. */
export function pre(value: unknown, label: string): HTMLElement {
  let text = json(value ?? null);
  if (typeof value === 'string') {
    try {
      text = JSON.stringify(JSON.parse(value), null, 2);
    } catch {
      // not JSON: shown as received
    }
  }
  return h('pre', { class: 'code', tabindex: 0, 'aria-label': label }, text);
}

/** "R$ 150,00" / "$ 15.000,00 COP" / "$1,234.56 MXN": the same hand-written formats as the payer pages. */
export function money(centavos: number, currency: string): string {
  const abs = Math.abs(Math.trunc(centavos));
  const units = String(Math.floor(abs / 100)).replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  const value = `${centavos < 0 ? '-' : ''}${units},${String(abs % 100).padStart(2, '0')}`;
  if (currency === 'MXN') return `${centavos < 0 ? '-' : ''}$${units.replace(/\./g, ',')}.${String(abs % 100).padStart(2, '0')} MXN`;
  return currency === 'BRL' ? `R$ ${value}` : `$ ${value} ${currency}`;
}

/** ISO timestamps shown as UTC, the zone the sandbox's clock and logs use. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})/.exec(iso);
  return match ? `${match[1]} ${match[2]} UTC` : iso;
}

export function badge(text: string, tone: string): HTMLElement {
  return h('span', { class: `badge ${tone}` }, text);
}

const TONES: Record<string, string> = {
  PENDING: 'warn',
  APPROVED: 'ok',
  REFUNDED: 'muted',
  CHARGEBACK: 'bad',
  BLOCKED: 'bad',
  WITHDRAW_REQUEST: 'warn',
  WITHDRAW_PROCESSING: 'warn',
  WITHDRAW_APPROVED: 'ok',
  WITHDRAW_REJECTED: 'bad',
  WITHDRAW_ERROR: 'bad',
  WITHDRAW_RETURNED: 'muted',
  delivered: 'ok',
  pending: 'warn',
  failed: 'bad',
  undeliverable: 'muted',
};

export const statusBadge = (status: string): HTMLElement => badge(status, TONES[status] ?? 'muted');

/** A dl of label/value pairs; empty values show as a dash. */
export function facts(rows: readonly [string, Child][]): HTMLElement {
  return h('dl', { class: 'facts' }, rows.map(([label, value]) => [h('dt', {}, label), h('dd', {}, value === null || value === undefined || value === '' ? '—' : value)]));
}

/** A note for features this sandbox build does not answer (older version, or not merged yet). */
export function unavailable(feature: string): HTMLElement {
  return h('p', { class: 'note', role: 'note' }, `${feature} is not available in this sandbox version.`);
}
