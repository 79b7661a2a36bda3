import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { HttpError } from './errors.js';

/**
 * Connections taken past a cap, each for one request: health is answered on it, anything else
 * 503, then it is closed. Without them a client holding every connection it can would keep
 * out the health probe that tells an operator so.
 */
export const OVERFLOW_SLOTS = 16;
/** An overflow connection must have sent its request (headers whole) within this, or it is closed. */
export const OVERFLOW_IDLE_MS = 2_000;
/**
 * File descriptors kept back from the default cap: the data file, its journal and lock, object
 * files, the log, PostgreSQL's two pools (10 each by default), a worker thread's, webhook sockets.
 */
export const FD_RESERVE = 256;
/**
 * The highest default total. An idle connection costs ~6 KiB (5,000 measured at 5.7 KiB each),
 * so this many hold ~190 MiB: where the fd limit is a million (Docker's default), the fd limit
 * alone would let idle sockets take gigabytes.
 */
export const MAX_DEFAULT_CONNECTIONS = 32_768;
/** The fd limit assumed where the process cannot read its own (not Linux); Node raises its soft limit at start. */
export const FALLBACK_FD_LIMIT = 8_192;
/** Connections left to other clients by the per-client default: an eighth of the total, at least this many. */
export const MIN_ROOM_FOR_OTHERS = 32;

export interface ConnectionLimits {
  /** Open connections in all (overflow slots not counted). */
  total: number;
  /** Open connections from one client address. */
  perClient: number;
}

/** The soft "Max open files" limit of this process (Linux: /proc/self/limits); undefined where it cannot be read, or is unlimited. */
export function fdSoftLimit(read: () => string = () => readFileSync('/proc/self/limits', 'utf8')): number | undefined {
  let text: string;
  try {
    text = read();
  } catch {
    return undefined;
  }
  const match = /^Max open files\s+(\d+)\s/m.exec(text);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

/**
 * The caps in effect: what was configured, the rest derived from the fd limit. The total is
 * the fd limit less the reserve and the overflow slots (at most MAX_DEFAULT_CONNECTIONS); one
 * client may hold all but an eighth of it (at least half), so a developer's own load test from
 * 127.0.0.1 gets nearly every connection the process can open, and another client still gets in.
 */
export function connectionLimits(configured: { total?: number | undefined; perClient?: number | undefined }, fdLimit: number = fdSoftLimit() ?? FALLBACK_FD_LIMIT): ConnectionLimits {
  const reserve = Math.min(FD_RESERVE, Math.floor(fdLimit / 4));
  const total = configured.total ?? Math.max(1, Math.min(MAX_DEFAULT_CONNECTIONS, fdLimit - reserve - OVERFLOW_SLOTS));
  const share = Math.max(Math.ceil(total / 2), total - Math.max(MIN_ROOM_FOR_OTHERS, Math.ceil(total / 8)));
  return { total, perClient: Math.min(total, configured.perClient ?? share) };
}

/** Why a connection was given an overflow slot, for the hint of what it is refused. */
type Reason = { kind: 'client'; client: string } | { kind: 'total' };

export interface ConnectionCapsOptions {
  overflowSlots?: number;
  overflowIdleMs?: number;
}

/**
 * The connections stage, before any request: counts the server's open sockets, in all and per client address, as
 * they are accepted ('connection') and as they close. Under both caps a socket is served as
 * always. Past one it takes an overflow slot: its first request is screened (`screen`), and it
 * closes after that request's answer, or after OVERFLOW_IDLE_MS without a request. When every
 * overflow slot is taken, the oldest one still waiting for its request makes room (a client
 * opening connections in a loop cannot keep the next health probe out); when every one is
 * answering, the new socket is destroyed at once.
 */
export class ConnectionCaps {
  private open = 0;
  private readonly byClient = new Map<string, number>();
  private overflowOpen = 0;
  /** Overflow sockets with no request yet, oldest first, each with what frees its slot. */
  private readonly waiting = new Map<Socket, { release: () => void; idle: NodeJS.Timeout }>();
  private readonly overflow = new WeakMap<Socket, Reason>();
  private refusedCount = 0;
  private readonly slots: number;
  private readonly idleMs: number;

  constructor(
    readonly limits: ConnectionLimits,
    options: ConnectionCapsOptions = {},
  ) {
    this.slots = options.overflowSlots ?? OVERFLOW_SLOTS;
    this.idleMs = options.overflowIdleMs ?? OVERFLOW_IDLE_MS;
  }

  /** The server's 'connection' listener. */
  readonly admit = (socket: Socket): void => {
    const client = clientOf(socket);
    const held = this.byClient.get(client) ?? 0;
    if (this.open < this.limits.total && held < this.limits.perClient) {
      this.open++;
      this.byClient.set(client, held + 1);
      socket.once('close', () => {
        this.open--;
        const left = (this.byClient.get(client) ?? 1) - 1;
        if (left === 0) this.byClient.delete(client);
        else this.byClient.set(client, left);
      });
      return;
    }
    if (this.overflowOpen >= this.slots && !this.evictOldestWaiting()) {
      this.refusedCount++;
      socket.destroy();
      return;
    }
    this.overflowOpen++;
    this.overflow.set(socket, held >= this.limits.perClient ? { kind: 'client', client } : { kind: 'total' });
    const idle = setTimeout(() => socket.destroy(), this.idleMs);
    let counted = true;
    const release = (): void => {
      if (!counted) return;
      counted = false;
      this.overflowOpen--;
      clearTimeout(idle);
      this.waiting.delete(socket);
    };
    this.waiting.set(socket, { release, idle });
    socket.once('close', release);
  };

  /**
   * What a request is answered on its connection: undefined on a connection under the caps.
   * On an overflow connection the answer closes it; health (`GET /_sandbox/health`) is
   * answered as always (undefined), anything else gets the returned 503.
   */
  screen(socket: Socket, response: ServerResponse, method: string, path: string): HttpError | undefined {
    const reason = this.overflow.get(socket);
    if (reason === undefined) return undefined;
    // Answered now: no longer one to make room for a newer one, nor idle. Its slot is freed on close.
    const waiting = this.waiting.get(socket);
    if (waiting) {
      clearTimeout(waiting.idle);
      this.waiting.delete(socket);
    }
    response.setHeader('connection', 'close');
    if ((method === 'GET' || method === 'HEAD') && path === HEALTH_PATH) return undefined;
    return new HttpError(503, 'too many connections; try again', { hint: this.hintFor(reason), headers: { 'retry-after': '1' } });
  }

  /** Whether the socket holds an overflow slot (its upgrade requests are no WebSockets, only screened requests). */
  isOverflow(socket: Socket): boolean {
    return this.overflow.has(socket);
  }

  /** Open connections, overflow ones, those destroyed at once since the start, and the caps. */
  counts(): { open: number; overflow: number; refused: number; limit: number; perClientLimit: number } {
    return { open: this.open, overflow: this.overflowOpen, refused: this.refusedCount, limit: this.limits.total, perClientLimit: this.limits.perClient };
  }

  private evictOldestWaiting(): boolean {
    const oldest = this.waiting.entries().next();
    if (oldest.done === true) return false;
    const [socket, { release }] = oldest.value;
    release();
    socket.destroy();
    return true;
  }

  private hintFor(reason: Reason): string {
    const { total, perClient } = this.limits;
    if (reason.kind === 'client') {
      return `too many connections from ${reason.client}: it holds ${perClient}, the most one client address may (SANDBOX_MAX_CONNECTIONS_PER_CLIENT); close idle ones or reuse them (keep-alive), then try again`;
    }
    return `too many connections: the sandbox holds ${total}, its cap (SANDBOX_MAX_CONNECTIONS); this connection is closed after this answer, try again shortly`;
  }
}

const HEALTH_PATH = '/_sandbox/health';

/** The client's address, an IPv4 one as such when it came over a dual-stack socket (`::ffff:127.0.0.1`). */
function clientOf(socket: Socket): string {
  const address = socket.remoteAddress ?? 'unknown';
  return address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
}
