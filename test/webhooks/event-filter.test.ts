// `--events` filters (src/webhooks/event-filter.ts): parsing, matching, and a recorded filter read back.
import { describe, expect, it } from 'vitest';
import { EventFilter, MAX_EVENT_PATTERNS } from '../../src/webhooks/event-filter.js';

describe('EventFilter', () => {
  it('takes every event when empty, absent or holding `*`', () => {
    for (const text of [undefined, null, '', ' , ', '*', 'cashin.*,*']) {
      const filter = EventFilter.parse(text);
      expect(filter).toBe(EventFilter.ALL);
      expect(filter.text).toBe('*');
      expect(filter.matches('withdrawal.failed')).toBe(true);
    }
  });

  it('trims the patterns, drops empty ones, and keeps them as text in order', () => {
    const filter = EventFilter.parse(' cashout.success ,, cashin.* ');
    expect(filter.text).toBe('cashout.success,cashin.*');
    expect(['cashin.paid', 'cashin.expired', 'cashout.success', 'cashout.failed', 'cashin'].map((e) => filter.matches(e))).toEqual([true, true, true, false, false]);
  });

  it('refuses too many patterns, and a pattern the glob rules refuse, naming it', () => {
    const many = Array.from({ length: MAX_EVENT_PATTERNS + 1 }, (_, i) => `e${i}.*`).join(',');
    expect(() => EventFilter.parse(many)).toThrow(`events: at most ${MAX_EVENT_PATTERNS} patterns`);
    expect(() => EventFilter.parse(Array.from({ length: MAX_EVENT_PATTERNS }, (_, i) => `e${i}`).join(','))).not.toThrow();
    const bad = '*'.repeat(40);
    expect(() => EventFilter.parse(`cashin.*,${bad}`)).toThrow(`events: pattern ${bad} `);
  });

  it('reads back a recorded filter as it was; one that does not parse takes every event', () => {
    const recorded = EventFilter.recorded(EventFilter.parse('cashin.*').text);
    expect([recorded.matches('cashin.paid'), recorded.matches('cashout.success')]).toEqual([true, false]);
    expect(EventFilter.recorded('*'.repeat(40))).toBe(EventFilter.ALL);
  });
});
