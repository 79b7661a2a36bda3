/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * A tiny element builder for the console. Text always goes in as text nodes, never as markup, so
 * whatever the sandbox recorded (payer names, request bodies, receiver answers) cannot become HTML.
 */

import type { Said } from './targets.js';

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

/**
 * What the user opened or closed, by each details element's key: views redraw from scratch on
 * every live event and action, and a redraw must not fold up what someone is reading.
 */
const chosenOpen = new Map<string, boolean>();

/**
 * A details element that keeps the user's choice across redraws. `key` names what it shows
 * (an event id, a delivery id and part), stable from one draw to the next; `open` is how it
 * starts when the user has not chosen, which may change between draws (attempts appear).
 */
export function disclosure(key: string, attrs: Attrs & { open?: boolean }, summary: Child, ...content: Child[]): HTMLDetailsElement {
  const startsOpen = attrs.open === true;
  const el = h('details', { ...attrs, open: chosenOpen.get(key) ?? startsOpen, 'data-key': key }, h('summary', {}, summary), ...content);
  // toggle also fires for the element's first state: only a state other than its start is a choice.
  el.addEventListener('toggle', () => {
    if (el.open === startsOpen) chosenOpen.delete(key);
    else chosenOpen.set(key, el.open);
  });
  return el;
}

/**
 * A label and its control as one piece of a wrapping row (.filters): the row may wrap between
 * pairs, never between a label and what it labels.
 */
export const pair = (...children: Child[]): HTMLElement => h('span', { class: 'pair' }, ...children);

/** A pair whose control takes the row's room (a URL to read whole). */
export const widePair = (...children: Child[]): HTMLElement => h('span', { class: 'pair grow' }, ...children);

/** A text with its machine values (URLs, listener names) as code, breakable where they must. */
export const said = (parts: Said): (string | HTMLElement)[] =>
  // A flag (--forward-to) is not broken at its hyphens; ids and URLs break where they must.
  parts.map((p) => (typeof p === 'string' ? p : h('span', { class: p.code.startsWith('--') ? 'mono nowrap' : 'mono id' }, p.code)));

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

/** A dl of label/value pairs; empty values show as a dash, and rows given as null or false are left out. */
export function facts(rows: readonly ([string, Child] | null | false)[]): HTMLElement {
  return h('dl', { class: 'facts' }, rows.map((row) => row && [h('dt', {}, row[0]), h('dd', {}, row[1] === null || row[1] === undefined || row[1] === '' ? '—' : row[1])]));
}

/** A note for features this sandbox build does not answer (older version, or not merged yet). */
export function unavailable(feature: string): HTMLElement {
  return h('p', { class: 'note', role: 'note' }, `${feature} is not available in this sandbox version.`);
}
