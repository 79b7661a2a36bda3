import { describe, expect, it } from 'vitest';
import { DEFAULTS, resolveConfig } from '../src/config.js';

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
