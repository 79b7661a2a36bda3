// An offer's states (src/webhooks/listener-offer.ts): each transition, on plain values.
import { describe, expect, it } from 'vitest';
import { next, offering, type OfferEvent, type OfferState } from '../../src/webhooks/listener-offer.js';
import { LISTENER_DISCONNECTED, NO_LISTENER, type ListenerReport, type OfferOutcome } from '../../src/webhooks/listener-protocol.js';

const report = (name: string, httpStatus: number | null, error: string | null = null): ListenerReport => ({ name, httpStatus, error, durationMs: 5 });
const run = (state: OfferState, ...events: OfferEvent[]): OfferState => events.reduce((s, e) => next(s, e, 42), state);
const sendingTo = (...names: string[]): OfferEvent[] => names.map((name) => ({ kind: 'sending', listener: `id-${name}`, name }));

describe('offer states', () => {
  it('offered to nobody here nor elsewhere: failed once every taker was tried, saying none is connected', () => {
    const ended = run(offering(undefined), { kind: 'sent' });
    expect(ended).toEqual({ kind: 'failed', outcome: { httpStatus: null, error: NO_LISTENER, durationMs: 42, responseBody: null, ok: false, listeners: [] } });
  });

  it('a taker that could not be sent it is reported, and its reason is the outcome', () => {
    const ended = run(offering(undefined), ...sendingTo('a'), { kind: 'unsent', listener: 'id-a', report: report('a', null, 'listener not reading') }, { kind: 'sent' });
    expect(ended).toMatchObject({ kind: 'failed', outcome: { ok: false, error: 'listener not reading', via: 'listener a', listeners: [{ name: 'a' }] } });
  });

  it('the first 2xx answers it; a later answer changes nothing', () => {
    const waiting = run(offering(undefined), ...sendingTo('a', 'b'), { kind: 'sent' });
    expect(waiting.kind).toBe('offered');
    const answered = run(waiting, { kind: 'answer', listener: 'id-b', report: report('b', 204), responseBody: 'ok' });
    expect(answered).toEqual({ kind: 'answered', outcome: { httpStatus: 204, error: null, durationMs: 5, responseBody: 'ok', ok: true, via: 'listener b', listeners: [report('b', 204)] } });
    expect(run(answered, { kind: 'answer', listener: 'id-a', report: report('a', 500, 'HTTP 500'), responseBody: null }, { kind: 'timeout', timeoutMs: 10 })).toBe(answered);
  });

  it('fails with the last non-2xx once every listener answered; an answer from one not waited for is ignored', () => {
    const ended = run(
      offering(undefined),
      ...sendingTo('a', 'b'),
      { kind: 'sent' },
      { kind: 'answer', listener: 'id-stranger', report: report('stranger', 200), responseBody: null },
      { kind: 'answer', listener: 'id-a', report: report('a', 500, 'HTTP 500'), responseBody: null },
      { kind: 'answer', listener: 'id-a', report: report('a', 200), responseBody: null },
    );
    expect(ended.kind).toBe('offered');
    const failed = run(ended, { kind: 'answer', listener: 'id-b', report: report('b', 404, 'HTTP 404'), responseBody: 'nope' });
    expect(failed).toMatchObject({ kind: 'failed', outcome: { ok: false, httpStatus: 404, via: 'listener b', responseBody: 'nope' } });
    expect(failed.kind === 'failed' && failed.outcome.listeners.map((l) => l.name)).toEqual(['a', 'b']);
  });

  it('is lost when the last listener it waited for disconnects', () => {
    const lost = run(offering(undefined), ...sendingTo('a'), { kind: 'sent' }, { kind: 'disconnected', listener: 'id-a' });
    expect(lost).toMatchObject({ kind: 'lost', outcome: { ok: false, error: LISTENER_DISCONNECTED, via: 'listener a', listeners: [{ name: 'a', error: LISTENER_DISCONNECTED }] } });
  });

  it('times out, reporting each listener still owing an answer as silent', () => {
    const timedOut = run(offering(undefined), ...sendingTo('a', 'b'), { kind: 'sent' }, { kind: 'answer', listener: 'id-a', report: report('a', 500, 'HTTP 500'), responseBody: null }, { kind: 'timeout', timeoutMs: 50 });
    expect(timedOut).toMatchObject({ kind: 'timed-out', outcome: { httpStatus: 500, via: 'listener a' } });
    expect(timedOut.kind === 'timed-out' && timedOut.outcome.listeners).toEqual([report('a', 500, 'HTTP 500'), { name: 'b', httpStatus: null, error: 'no answer within 50 ms', durationMs: 50 }]);
    const silent = run(offering(undefined), ...sendingTo('a'), { kind: 'sent' }, { kind: 'timeout', timeoutMs: 50 });
    expect(silent).toMatchObject({ kind: 'timed-out', outcome: { error: 'no answer within 50 ms', durationMs: 42, via: 'listener a' } });
  });

  it('relayed to named instances: waits for each, and one without a listener for it is waited for no more', () => {
    const none: OfferOutcome = { httpStatus: null, error: NO_LISTENER, durationMs: 0, responseBody: null, ok: false, listeners: [] };
    const failure: OfferOutcome = { httpStatus: 500, error: 'HTTP 500', durationMs: 5, responseBody: null, ok: false, via: 'listener far', listeners: [report('far', 500, 'HTTP 500')] };
    const relayed = run(offering(new Set(['i1', 'i2'])), { kind: 'sent' });
    expect(relayed.kind).toBe('offered');
    const oneLeft = run(relayed, { kind: 'relayed-answer', instance: 'i1', outcome: none });
    expect(oneLeft).toMatchObject({ kind: 'offered', relayed: new Set(['i2']), reports: [] });
    expect(run(oneLeft, { kind: 'relayed-answer', instance: 'i2', outcome: failure })).toMatchObject({ kind: 'failed', outcome: { httpStatus: 500, via: 'listener far' } });
    expect(run(oneLeft, { kind: 'relayed-answer', instance: 'i2', outcome: { ...failure, ok: true, httpStatus: 200, error: null } })).toMatchObject({ kind: 'answered', outcome: { httpStatus: 200 } });
  });

  it('relayed to unknown instances: only a 2xx or the timeout ends it', () => {
    const none: OfferOutcome = { httpStatus: null, error: NO_LISTENER, durationMs: 0, responseBody: null, ok: false, listeners: [] };
    const waiting = run(offering('unknown'), { kind: 'sent' }, { kind: 'relayed-answer', instance: 'i1', outcome: none });
    expect(waiting.kind).toBe('offered');
    expect(run(waiting, { kind: 'timeout', timeoutMs: 50 })).toMatchObject({ kind: 'timed-out', outcome: { error: NO_LISTENER } });
  });

  it('does not share its sets with the caller', () => {
    const instances = new Set(['i1']);
    const state = offering(instances);
    instances.add('i2');
    expect(state.relayed).toEqual(new Set(['i1']));
  });
});
