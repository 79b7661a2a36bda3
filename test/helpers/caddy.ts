import { ensureDebianPackages, onPath } from './apt.js';

/**
 * Caddy for the test of docker-compose.yml's balancer, natively: Debian's `caddy` package,
 * installed when missing (test/helpers/apt.ts, like the PostgreSQL the tests start), never
 * started as the package's own service.
 */

const findCaddy = (): string | undefined => onPath('caddy');

/** The caddy program, installed from Debian when missing and we may (root); otherwise the error says what to run. */
export const ensureCaddy = (): Promise<string> =>
  ensureDebianPackages({ packages: ['caddy'], neededFor: "This test needs caddy (the compose file's balancer)", find: findCaddy });
