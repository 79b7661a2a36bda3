import { is2xx, LISTENER_DISCONNECTED, NO_LISTENER, type ListenerReport, type OfferOutcome } from './listener-protocol.js';

/**
 * One offer's life, as svix types a dispatch: `offered` while answers may still come, then one of
 * four ends, each with the outcome the delivery records. Transitions are pure: the hub holds the
 * state, the timer and the sockets.
 *
 * - answered: a listener (here or on another instance) answered 2xx; later answers are not waited for.
 * - failed: every listener it waited for answered otherwise; the last such answer is the outcome.
 * - lost: the last listener it waited for disconnected.
 * - timed-out: the wait ran out; each listener still owing an answer is reported as silent.
 */
export type OfferState =
  | {
      kind: 'offered';
      /** Listeners here that still owe an answer: id → name. */
      waiting: ReadonlyMap<string, string>;
      /**
       * Offered to other instances' listeners too: the instances whose answers are still to come
       * (known from presence records), or `unknown` (none could be read: any may answer until the
       * timeout). Undefined: offered here only.
       */
      relayed: ReadonlySet<string> | 'unknown' | undefined;
      reports: readonly ListenerReport[];
      /** The last answer that was not a 2xx, to report when none is. */
      lastFailure: OfferOutcome | undefined;
    }
  | { kind: 'answered' | 'failed' | 'lost' | 'timed-out'; outcome: OfferOutcome };

export type OfferedState = Extract<OfferState, { kind: 'offered' }>;
export type EndedState = Exclude<OfferState, OfferedState>;

export type OfferEvent =
  /** It is being sent to a listener here, which then owes an answer. */
  | { kind: 'sending'; listener: string; name: string }
  /** It could not be given to a taker (busy, or not reading): reported, and not waited for. */
  | { kind: 'unsent'; listener?: string; report: ListenerReport }
  /** Every taker here was tried: an offer nobody can answer ends now. */
  | { kind: 'sent' }
  /** A listener here answered. */
  | { kind: 'answer'; listener: string; report: ListenerReport; responseBody: string | null }
  /** A listener here went before answering. */
  | { kind: 'disconnected'; listener: string }
  /** Another instance's outcome: its listeners' reports, or none when it had no listener for the offer. */
  | { kind: 'relayed-answer'; instance: string; outcome: OfferOutcome }
  | { kind: 'timeout'; timeoutMs: number };

/** An offer about to be sent to this instance's listeners, and (`relayed`) to other instances'. */
export function offering(relayed: OfferedState['relayed']): OfferedState {
  return { kind: 'offered', waiting: new Map(), relayed: relayed instanceof Set ? new Set(relayed) : relayed, reports: [], lastFailure: undefined };
}

/** The state after `event`; an ended offer stays as it ended (a late answer changes nothing). */
export function next(state: OfferState, event: OfferEvent, elapsedMs: number): OfferState {
  if (state.kind !== 'offered') return state;
  switch (event.kind) {
    case 'sending':
      return { ...state, waiting: new Map([...state.waiting, [event.listener, event.name]]) };
    case 'unsent': {
      const waiting = new Map(state.waiting);
      if (event.listener !== undefined) waiting.delete(event.listener);
      return { ...state, waiting, reports: [...state.reports, event.report] };
    }
    case 'sent':
      return endIfAnswered(state, 'failed', elapsedMs);
    case 'answer':
      return answered(state, event.listener, event.report, event.responseBody, 'failed', elapsedMs);
    case 'disconnected': {
      const name = state.waiting.get(event.listener);
      if (name === undefined) return state;
      return answered(state, event.listener, { name, httpStatus: null, error: LISTENER_DISCONNECTED, durationMs: 0 }, null, 'lost', elapsedMs);
    }
    case 'relayed-answer': {
      const relayed = state.relayed instanceof Set ? new Set([...state.relayed].filter((i) => i !== event.instance)) : state.relayed;
      const heard = { ...state, relayed };
      // An instance that had no listener for it by the time it came says so, and is waited for no more.
      if (event.outcome.listeners.length === 0 && !event.outcome.ok) return endIfAnswered(heard, 'failed', elapsedMs);
      const reports = [...state.reports, ...event.outcome.listeners];
      const outcome: OfferOutcome = { ...event.outcome, listeners: reports };
      if (outcome.ok) return { kind: 'answered', outcome };
      return endIfAnswered({ ...heard, reports, lastFailure: outcome }, 'failed', elapsedMs);
    }
    case 'timeout': {
      const silent = [...state.waiting.values()].map((name) => ({ name, httpStatus: null, error: `no answer within ${event.timeoutMs} ms`, durationMs: event.timeoutMs }));
      const reports = [...state.reports, ...silent];
      return { kind: 'timed-out', outcome: failure({ ...state, reports }, elapsedMs) };
    }
  }
}

function answered(state: OfferedState, listener: string, report: ListenerReport, responseBody: string | null, end: 'failed' | 'lost', elapsedMs: number): OfferState {
  if (!state.waiting.has(listener)) return state;
  const waiting = new Map(state.waiting);
  waiting.delete(listener);
  const reports = [...state.reports, report];
  const outcome: OfferOutcome = {
    httpStatus: report.httpStatus,
    error: report.error,
    durationMs: report.durationMs,
    responseBody,
    ok: report.httpStatus !== null && is2xx(report.httpStatus) && report.error === null,
    via: `listener ${report.name}`,
    listeners: reports,
  };
  // First 2xx wins: the others' later answers are not waited for.
  if (outcome.ok) return { kind: 'answered', outcome };
  return endIfAnswered({ ...state, waiting, reports, lastFailure: outcome }, end, elapsedMs);
}

/** Ends an offer that every listener it waits for answered without a 2xx. */
function endIfAnswered(state: OfferedState, end: 'failed' | 'lost', elapsedMs: number): OfferState {
  if (state.waiting.size > 0) return state;
  if (state.relayed === 'unknown' || (state.relayed instanceof Set && state.relayed.size > 0)) return state;
  return { kind: end, outcome: failure(state, elapsedMs) };
}

/** The outcome when no listener answered 2xx: the last failed answer, else why none came. */
function failure(state: OfferedState, elapsedMs: number): OfferOutcome {
  const reports = [...state.reports];
  if (state.lastFailure) return { ...state.lastFailure, listeners: reports };
  const first = reports[0];
  return {
    httpStatus: null,
    error: first?.error ?? NO_LISTENER,
    durationMs: Math.round(elapsedMs),
    responseBody: null,
    ok: false,
    ...(first && { via: `listener ${first.name}` }),
    listeners: reports,
  };
}
