/**
 * Errors of the domain (transactions, webhooks, autopilot...), free of HTTP: code that
 * decides what a request means throws these, the router maps each code to a status once,
 * and jobs that run outside any request (scheduler, autopilot) catch them by code.
 */
export type DomainErrorCode = 'invalid' | 'not_found' | 'conflict' | 'quota_exceeded';

export class DomainError extends Error {
  constructor(
    readonly code: DomainErrorCode,
    message: string,
    /** A longer explanation for the developer, sent apart from `message` (x-sandbox-hint). */
    readonly hint?: string,
  ) {
    super(message);
  }
}

export const invalid = (message: string, hint?: string): DomainError => new DomainError('invalid', message, hint);
export const notFound = (message: string, hint?: string): DomainError => new DomainError('not_found', message, hint);
export const conflict = (message: string, hint?: string): DomainError => new DomainError('conflict', message, hint);
/** An account quota (records, stored bytes) a change would pass: src/accounts/usage.ts. */
export const quotaExceeded = (message: string, hint?: string): DomainError => new DomainError('quota_exceeded', message, hint);

export const isDomainError = (error: unknown, code?: DomainErrorCode): error is DomainError =>
  error instanceof DomainError && (code === undefined || error.code === code);
