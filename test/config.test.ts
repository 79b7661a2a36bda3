import { describe, expect, it } from 'vitest';
import { DEFAULTS, parseDuration, resolveConfig } from '../src/config.js';

describe('the connection and request-timeout settings', () => {
  it('leave the caps to be derived from the fd limit, and time a body for 30 s, unless set', () => {
    const config = resolveConfig({});
    expect(config.maxConnections).toBeUndefined();
    expect(config.maxConnectionsPerClient).toBeUndefined();
    expect(config.requestTimeoutMs).toBe(DEFAULTS.requestTimeoutMs);
    expect(resolveConfig({ maxConnections: 500, maxConnectionsPerClient: 50, requestTimeoutMs: 5_000 })).toMatchObject({ maxConnections: 500, maxConnectionsPerClient: 50, requestTimeoutMs: 5_000 });
  });

  it('refuse 0, which would refuse every connection or every body, naming the setting', () => {
    expect(() => resolveConfig({ maxConnections: 0 })).toThrow('the connection cap (SANDBOX_MAX_CONNECTIONS) must be a whole number of at least 1, not 0');
    expect(() => resolveConfig({ maxConnectionsPerClient: 0 })).toThrow(/SANDBOX_MAX_CONNECTIONS_PER_CLIENT/);
    expect(() => resolveConfig({ requestTimeoutMs: 0 })).toThrow(/SANDBOX_REQUEST_TIMEOUT_MS/);
  });
});

describe('the listener wait (SANDBOX_LISTENER_WAIT)', () => {
  it('is 72 h unless set, and takes a duration as a person writes it', () => {
    expect(resolveConfig({}).listenerWaitMs).toBe(72 * 3_600_000);
    expect([parseDuration('72h', 'w'), parseDuration('30m', 'w'), parseDuration('30min', 'w'), parseDuration('90s', 'w'), parseDuration('2d', 'w'), parseDuration('1500', 'w'), parseDuration('1.5h', 'w')]).toEqual([
      259_200_000, 1_800_000, 1_800_000, 90_000, 172_800_000, 1_500, 5_400_000,
    ]);
    expect(resolveConfig({ listenerWaitMs: 60_000 }).listenerWaitMs).toBe(60_000);
  });

  it('refuses what is not one, naming the forms', () => {
    // Spaces around the number and its unit are a reader's; a long run of them before a stray letter is refused like any other text.
    expect([parseDuration(' 72h ', 'w'), parseDuration('\t30 m\n', 'w')]).toEqual([72 * 3_600_000, 30 * 60_000]);
    for (const bad of ['', 'soon', '0', '-1h', '3 weeks', `1${' '.repeat(20_000)}x`]) expect(() => parseDuration(bad, 'the listener wait')).toThrow(/^the listener wait must be a duration such as 72h, 30m, 90s or 2d \(or milliseconds\)/);
    expect(() => resolveConfig({ listenerWaitMs: 0 })).toThrow(/SANDBOX_LISTENER_WAIT/);
  });
});
