import { randomUUID } from 'node:crypto';
import type { AttemptOutcome } from './dispatcher.js';
import type { WebhookEvent } from './payload.js';

/**
 * What a listener (`payments-sandbox listen`) and the sandbox say to each other (contract v4,
 * Listening), and what the delivery log keeps of it. Plain JSON values addressed by the offer's
 * id, so that they travel between instances on the bus as they travel over a listener's socket.
 */

/** One attempt as a listener receives it (`type: 'attempt'`): the exact request a direct delivery would send. */
export interface OfferMessage {
  type: 'attempt';
  /** This offer's id: the answer names it (a replay and an automatic attempt of one delivery may be under way together). */
  id: string;
  deliveryId: string;
  /** The attempt's number (its x-sandbox-attempt). */
  attempt: number;
  event: WebhookEvent;
  /** The delivery's own target (its postbackUrl, else the account's webhook URL), or null when it has none. */
  url: string | null;
  /** Exactly the headers a direct attempt is sent with, x-signature and x-sandbox-attempt included. */
  headers: Record<string, string>;
  /** Exactly the body bytes, as UTF-8 text: what x-signature signs. */
  body: string;
  replay: boolean;
  /** How long the sandbox waits for the answer. */
  timeoutMs: number;
}

/** A listener's answer to an offer (`type: 'answer'`): its target's status, or the error that kept it from answering. */
export interface AnswerMessage {
  type: 'answer';
  id: string;
  deliveryId: string;
  attempt: number;
  status?: number;
  durationMs: number;
  /** The first KiB of the target's answer. */
  body?: string;
  error?: string;
}

/** One listener's part in an attempt, as the delivery log shows it. */
export interface ListenerReport {
  name: string;
  httpStatus: number | null;
  error: string | null;
  durationMs: number;
}

/** An offered attempt's outcome: `via` names the listener whose answer it is. */
export interface OfferOutcome extends AttemptOutcome {
  via?: string;
  listeners: ListenerReport[];
}

/** A connected listener as `GET /_sandbox/listeners` and the console show it. */
export interface CensusEntry {
  name: string;
  /** Its `--events` filter (`*`: every event). */
  events: string;
  connectedAt: string;
}

export const NO_LISTENER = 'no listener connected';
/** What an offer a listener owed records when it goes: the listener's next connection is offered it again at once. */
export const LISTENER_DISCONNECTED = 'listener disconnected';
/** The longest listener name kept. */
const MAX_NAME_LENGTH = 64;
const EXCERPT_CHARS = 1024;

/** An answer as a listener may send it, checked field by field: anything else is ignored. */
export function parseAnswer(message: unknown): AnswerMessage | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const m = message as Record<string, unknown>;
  if (m.type !== 'answer' || typeof m.id !== 'string' || typeof m.deliveryId !== 'string' || typeof m.attempt !== 'number') return undefined;
  const status = typeof m.status === 'number' && Number.isInteger(m.status) && m.status >= 100 && m.status <= 599 ? m.status : undefined;
  const error = typeof m.error === 'string' ? m.error.slice(0, EXCERPT_CHARS) : undefined;
  if (status === undefined && error === undefined) return undefined;
  const durationMs = typeof m.durationMs === 'number' && Number.isFinite(m.durationMs) && m.durationMs >= 0 ? Math.round(m.durationMs) : 0;
  return {
    type: 'answer',
    id: m.id,
    deliveryId: m.deliveryId,
    attempt: m.attempt,
    ...(status !== undefined && { status }),
    durationMs,
    ...(typeof m.body === 'string' && { body: m.body.slice(0, EXCERPT_CHARS) }),
    ...(error !== undefined && { error }),
  };
}

export const is2xx = (status: number): boolean => status >= 200 && status < 300;

/** What the log keeps of a listener's answer: a status outside 2xx is its error when it names none. */
export function reportOf(name: string, answer: AnswerMessage): ListenerReport {
  return {
    name,
    httpStatus: answer.status ?? null,
    error: answer.error ?? (answer.status !== undefined && !is2xx(answer.status) ? `HTTP ${answer.status}` : null),
    durationMs: answer.durationMs,
  };
}

/** A listener's name as the log shows it: printable, bounded. */
export function listenerName(given: string | null | undefined): string {
  const cleaned = (given ?? '').replace(/[^\x21-\x7e]/g, '').slice(0, MAX_NAME_LENGTH);
  return cleaned === '' ? `anonymous-${randomUUID().slice(0, 8)}` : cleaned;
}
