import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, expect } from 'vitest';
import type { components } from '../../src/spec/openapi-types.js';
import type { Client } from './sandbox.js';
import { control, type Body, type Tx } from './purchases.js';

export type Delivery = components['schemas']['WebhookDelivery'];
export type DeliveryList = components['schemas']['WebhookDeliveryList'];
export type SandboxEvent = components['schemas']['Event'];
export type EventList = components['schemas']['EventList'];
export type CashinPaid = components['schemas']['WebhookBody'];

/** One request as the receiver saw it, recorded once its body was fully read. */
export interface ReceivedRequest {
  /** 0-based arrival order. */
  index: number;
  method: string;
  /** Path and query. */
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** The body parsed as JSON, undefined when it is not JSON. */
  body: unknown;
  /** Date.now() when the body was complete. */
  at: number;
}

/**
 * What the receiver does with a request: answer (after an optional delay), hang (never
 * answer: the socket stays open until the receiver closes) or close the socket unanswered.
 */
export type Reaction = { status: number; body?: string; delayMs?: number } | 'hang' | 'close';
/**
 * A status code or reaction for every request; a list for the 1st, 2nd, … request (the
 * last one repeats); or a function of the request.
 */
export type Behaviour = number | Reaction | readonly (number | Reaction)[] | ((request: ReceivedRequest) => number | Reaction);

export interface Receiver {
  /** http://127.0.0.1:<port>/hook */
  url: string;
  port: number;
  requests: ReceivedRequest[];
  setBehaviour(behaviour: Behaviour): void;
  /** Resolves with the requests once at least `count` arrived; fails at the deadline. */
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  /** Stops listening and destroys every open socket (hanging ones included). */
  close(): Promise<void>;
}

function reactionFor(behaviour: Behaviour, request: ReceivedRequest): Reaction {
  let chosen: number | Reaction;
  if (typeof behaviour === 'function') chosen = behaviour(request);
  else if (Array.isArray(behaviour)) {
    const list = behaviour as readonly (number | Reaction)[];
    chosen = list[Math.min(request.index, list.length - 1)] ?? 200;
  } else chosen = behaviour as number | Reaction;
  return typeof chosen === 'number' ? { status: chosen } : chosen;
}

/**
 * For a test file: a `receiver(behaviour)` starter whose receivers are all closed after
 * each test.
 */
export function receiversClosedAfterEach(): (behaviour?: Behaviour) => Promise<Receiver> {
  const open: Receiver[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((r) => r.close()));
  });
  return async (behaviour: Behaviour = 200) => {
    const r = await startReceiver(behaviour);
    open.push(r);
    return r;
  };
}

/** POST /_sandbox/transactions/:id/pay, expecting 200. */
export async function payOk(client: Client, id: string, body?: Body): Promise<Tx> {
  const res = await control(client, id, 'pay', body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** A real HTTP webhook receiver on a free local port that records every request. */
export async function startReceiver(initial: Behaviour = 200): Promise<Receiver> {
  let behaviour = initial;
  const requests: ReceivedRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(rawBody);
      } catch {
        body = undefined;
      }
      const request: ReceivedRequest = {
        index: requests.length,
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        rawBody,
        body,
        at: Date.now(),
      };
      requests.push(request);
      const reaction = reactionFor(behaviour, request);
      if (reaction === 'hang') return;
      if (reaction === 'close') {
        req.socket.destroy();
        return;
      }
      const answer = (): void => {
        res.writeHead(reaction.status, { 'content-type': 'text/plain' });
        res.end(reaction.body ?? `receiver answered ${reaction.status} to request ${request.index + 1}`);
      };
      if (reaction.delayMs) setTimeout(answer, reaction.delayMs);
      else answer();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    requests,
    setBehaviour(next) {
      behaviour = next;
    },
    async waitForRequests(count, timeoutMs = 3000) {
      const deadline = Date.now() + timeoutMs;
      while (requests.length < count) {
        if (Date.now() > deadline) {
          throw new Error(`receiver got ${requests.length} requests, expected ${count}, within ${timeoutMs} ms`);
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return requests;
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}

/** A URL on which nothing listens: a port that was free a moment ago. */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/hook`;
}

/** Written here, independently of src/webhooks/signature.ts: object keys sorted at every depth. */
export function sortedDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => sortedDeep(item));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) out[key] = sortedDeep((value as Record<string, unknown>)[key]);
  return out;
}

export const hmacHex = (secret: string, text: string): string => createHmac('sha256', secret).update(text, 'utf8').digest('hex');

/** The contract's x-signature of a body: HMAC-SHA256 of JSON.stringify of the key-sorted body, without a top-level `signature`. */
export function expectedSignature(secret: string, body: Record<string, unknown>): string {
  const signed = { ...body };
  delete signed.signature;
  return hmacHex(secret, JSON.stringify(sortedDeep(signed)));
}

/** Fails unless the keys of every object in `value` are in sorted order, as they appear. */
export function expectKeysSortedDeep(value: unknown, path = '$'): void {
  if (Array.isArray(value)) {
    value.forEach((item, i) => expectKeysSortedDeep(item, `${path}[${i}]`));
    return;
  }
  if (value === null || typeof value !== 'object') return;
  const keys = Object.keys(value);
  expect(keys, `keys of ${path}`).toEqual([...keys].sort());
  for (const key of keys) expectKeysSortedDeep((value as Record<string, unknown>)[key], `${path}.${key}`);
}

/** Polls `probe` until it returns something other than undefined/false; fails at the deadline. */
export async function waitUntil<T>(probe: () => Promise<T | undefined | false> | T | undefined | false, what: string, timeoutMs = 3000, everyMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** GET /_sandbox/webhooks with a query, expecting 200. */
export async function listDeliveries(client: Client, query: Record<string, string | number> = {}): Promise<DeliveryList> {
  const params = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
  const res = await client.get<DeliveryList>(`/_sandbox/webhooks${params.size ? `?${params}` : ''}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** The single delivery of a transaction. */
export async function deliveryOf(client: Client, transactionId: string): Promise<Delivery> {
  const { data } = await listDeliveries(client, { transactionId });
  expect(data, `deliveries of transaction ${transactionId}`).toHaveLength(1);
  return data[0]!;
}

/** Polls the delivery log until the transaction's delivery satisfies `done`. */
export function waitForDelivery(client: Client, transactionId: string, done: (d: Delivery) => boolean, what: string, timeoutMs = 3000): Promise<Delivery> {
  return waitUntil(
    async () => {
      const { data } = await listDeliveries(client, { transactionId });
      const d = data[0];
      return d && done(d) ? d : undefined;
    },
    `delivery of transaction ${transactionId}: ${what}`,
    timeoutMs,
  );
}

/** GET /_sandbox/events with a query, expecting 200. */
export async function listEvents(client: Client, query: Record<string, string | number> = {}): Promise<EventList> {
  const params = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
  const res = await client.get<EventList>(`/_sandbox/events${params.size ? `?${params}` : ''}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** POST /_sandbox/clock/advance, expecting 200; returns the clock's offset. */
export async function advance(client: Client, ms: number): Promise<number> {
  const res = await client.post<{ offsetMs: number }>('/_sandbox/clock/advance', { ms });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.offsetMs;
}

/** The account clock's current instant, in ms. */
export async function clockNow(client: Client): Promise<number> {
  const res = await client.get<{ now: string }>('/_sandbox/clock');
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return Date.parse(res.body.now);
}
