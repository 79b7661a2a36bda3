/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import type { Answer, Api } from './api.js';
import type { LiveState, SandboxEvent } from './state.js';

/** What every view gets: the API, the live state, and the shell's shared regions. */
export interface Context {
  api: Api;
  state: LiveState;
  /** Where the current view draws. */
  root: HTMLElement;
  /** Announces an outcome in the polite live region (and shows it as a toast). */
  notify(message: string, tone?: 'ok' | 'bad'): void;
  /** Reports a failed call: its status, message and the sandbox's hint. */
  fail(what: string, answer: Answer): void;
  refreshClock(): Promise<void>;
}

/** A view draws itself now and may redraw on live events; the returned function stops it. */
export type View = (ctx: Context, arg: string | undefined) => (() => void) | void;

export type EventFilter = (event: SandboxEvent | null) => boolean;

/** Redraws on the events a view cares about, a frame later so a burst of events draws once. */
export function redrawOn(ctx: Context, wanted: EventFilter, draw: () => void | Promise<void>): () => void {
  let queued = false;
  let stopped = false;
  const unsubscribe = ctx.state.subscribe((event) => {
    if (!wanted(event) || queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      // A frame queued before the view was left must not draw over the next view.
      if (!stopped) void draw();
    });
  });
  return () => {
    stopped = true;
    unsubscribe();
  };
}
