import type { Logger } from './log.js';

/** What the guards need of `process`, so tests can drive them without ending the test runner. */
export interface GuardedProcess {
  on(event: 'unhandledRejection', listener: (reason: unknown) => void): unknown;
  on(event: 'uncaughtException', listener: (error: Error, origin: string) => void): unknown;
  exit(code: number): void;
}

/**
 * The server process's last line of defence (`payments-sandbox start`).
 *
 * A rejected promise nobody handled would end Node (its default since v15). The request
 * pipeline answers or closes every request itself (src/http/pipeline.ts), so one that still
 * gets here is a bug away from any request: it is logged and the sandbox keeps serving;
 * everything acknowledged is already on disk, so nothing stored depends on that promise.
 *
 * An uncaught exception is different: it unwound a stack nobody expected to stop midway, and
 * the state it left is unknown, so the process logs it and exits with code 1, as Node's own
 * documentation advises. Every acknowledged change is durable (journal), so a restart
 * (`docker run --restart unless-stopped`, a supervisor) resumes where it stopped.
 */
export function installProcessGuards(logger: Logger, target: GuardedProcess = process): void {
  target.on('unhandledRejection', (reason) => {
    try {
      logger.error({ err: reason }, 'unhandled promise rejection; the sandbox keeps serving');
    } catch {
      // Logging must not turn a survivable rejection into an exception.
    }
  });
  target.on('uncaughtException', (error, origin) => {
    try {
      logger.fatal({ err: error, origin }, 'uncaught exception; the sandbox stops (every acknowledged change is on disk)');
    } finally {
      target.exit(1);
    }
  });
}
