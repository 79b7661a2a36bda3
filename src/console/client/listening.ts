/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import type { Answer } from './api.js';
import type { Context } from './context.js';
import { h, replaceChildren } from './dom.js';

/** GET /_sandbox/listeners: the account's delivery mode and the listeners connected now. */
export interface Listening {
  delivery: 'direct' | 'listeners';
  listeners: { name: string; events: string; connectedAt: string }[];
}

export const readListening = (ctx: Context): Promise<Answer<Listening>> => ctx.api.get<Listening>('/_sandbox/listeners');

/** What a developer runs on their machine: the key is left for them to fill in, never shown on screen. */
export const listenCommand = (): string => `npx payments-sandbox listen --base-url ${location.origin} --key <your secret key> --forward-to http://localhost:3000/hooks`;

const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

function names(l: Listening): HTMLElement[] {
  return l.listeners.map((x, i) => h('span', { class: 'listener' }, i > 0 ? ', ' : '', h('strong', { class: 'id' }, x.name), x.events === '*' ? '' : ` (${x.events})`));
}

/**
 * The mode and who is connected, in one note, saying what to do whenever webhooks would reach
 * nobody: listeners mode with none connected, or listeners connected to an account that
 * delivers directly.
 */
export function listeningNote(l: Listening, change?: HTMLElement): HTMLElement {
  const n = l.listeners.length;
  const parts =
    l.delivery === 'direct'
      ? n === 0
        ? ['Delivery: ', h('strong', {}, 'direct'), '. The sandbox posts each webhook to its URL itself.']
        : ['Delivery: ', h('strong', {}, 'direct'), `, so the ${plural(n, 'listener', 'listeners')} connected (`, names(l), ') receive nothing: switch the account to listeners to hand them its webhooks.']
      : n === 0
        ? [
            'Delivery: ',
            h('strong', {}, 'listeners'),
            ', and none is connected: each delivery waits for a listener ("waiting for a listener", 72 h by default), using up none of its attempts. Start one where your app runs; it receives every waiting delivery at once, oldest first:',
            h('code', { class: 'command' }, listenCommand()),
          ]
        : ['Delivery: ', h('strong', {}, 'listeners'), `. ${plural(n, 'listener', 'listeners')} connected: `, names(l), '.'];
  const warn = l.delivery === 'direct' ? n > 0 : n === 0;
  return h(
    'div',
    { id: 'listening-status', class: `note listening${warn ? ' warn' : ''}`, role: 'status', 'data-delivery': l.delivery, 'data-connected': n },
    h('p', {}, parts, change ? [' ', change] : null),
  );
}

/** A region that shows the note and reads it again on demand (after webhook events, or a mode switch). */
export function listeningRegion(ctx: Context, change?: () => HTMLElement): { element: HTMLElement; draw(): Promise<Listening | undefined> } {
  const element = h('div', { class: 'listening-region' });
  let seq = 0;
  return {
    element,
    async draw() {
      const mine = ++seq;
      const answer = await readListening(ctx);
      if (mine !== seq) return undefined;
      // A sandbox older than listeners mode has nothing to say here; the rest of the view works.
      if (answer.missing) {
        replaceChildren(element);
        return undefined;
      }
      if (!answer.ok) {
        ctx.fail('Reading the listeners', answer);
        return undefined;
      }
      replaceChildren(element, listeningNote(answer.body, change?.()));
      return answer.body;
    },
  };
}
