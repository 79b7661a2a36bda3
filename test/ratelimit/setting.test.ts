import { describe, expect, it } from 'vitest';
import { SHARED_DEFAULTS, describeSetting, effectiveRateLimit, parseRateLimit } from '../../src/ratelimit/setting.js';

describe('parseRateLimit (SANDBOX_RATE_LIMIT)', () => {
  it('reads auto, off, on and per-class lists, unnamed classes keeping the shared default', () => {
    expect(parseRateLimit(undefined)).toBe('auto');
    expect(parseRateLimit(' Auto ')).toBe('auto');
    expect(parseRateLimit('off')).toBe('off');
    expect(parseRateLimit('on')).toEqual(SHARED_DEFAULTS);
    expect(parseRateLimit('write=5:7, read=off')).toEqual({ write: { perSecond: 5, burst: 7 }, read: 'off', control: SHARED_DEFAULTS.control });
    expect(parseRateLimit('control=3')).toEqual({ ...SHARED_DEFAULTS, control: { perSecond: 3, burst: 6 } });
  });

  it.each([
    ['write=fast', 'not one of'],
    ['writes=5', 'not one of'],
    ['write=5,write=6', 'names write twice'],
    ['write=0', 'from 1 to'],
    ['write=5:0', 'burst must be'],
    ['write=2000000', 'from 1 to'],
    ['write=5.5', 'not one of'],
  ])('refuses %s at start, saying why', (value, why) => {
    expect(() => parseRateLimit(value)).toThrow(why);
  });

  it('is off by default on loopback without an admin token, the shared defaults when shared', () => {
    expect(effectiveRateLimit('auto', false)).toBe('off');
    expect(effectiveRateLimit('auto', true)).toEqual(SHARED_DEFAULTS);
    expect(effectiveRateLimit('off', true)).toBe('off');
    expect(describeSetting(SHARED_DEFAULTS)).toBe('write=50:100,read=200:400,control=20:40');
  });
});
