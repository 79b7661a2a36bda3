import { systemClock } from '../clock.js';
import type { IncomingMessage, Server } from 'node:http';
import { createServer } from '../node-http.js';
import type { AddressInfo } from 'node:net';
import { signatureValid } from './signature.js';
import type { ReceiverConfig } from './types.js';

/** One request the receiver got, with what it answered. */
export interface ReceivedWebhook {
  /** Arrival order, from 1. */
  seq: number;
  at: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  rawBody: string;
  /** Parsed JSON, or the raw text when it is not JSON. */
  body: unknown;
  /** The status the receiver answered. */
  answered: number;
}

export interface ReceiverOptions {
  /** Address to listen on (default 127.0.0.1). */
  host?: string;
  /** Host name put in `url`, when the sandbox reaches the runner by another name (Docker). */
  publicHost?: string;
}

/**
 * A merchant's webhook endpoint, local to the runner: records every request and answers
 * 200, or a failing status for the next `failFirst` requests.
 */
export class WebhookReceiver {
  readonly requests: ReceivedWebhook[] = [];
  private failuresLeft = 0;
  private failStatus = 500;
  private rejectInvalidSignatures = false;
  private secret: string | undefined;
  private readonly waiters = new Set<() => void>();
  private server: Server | undefined;
  url = '';

  configure(config: ReceiverConfig): void {
    if (config.failFirst !== undefined) this.failuresLeft = config.failFirst;
    if (config.status !== undefined) this.failStatus = config.status;
    if (config.rejectInvalidSignatures !== undefined) this.rejectInvalidSignatures = config.rejectInvalidSignatures;
  }

  /** The scenario account's webhookSecret, for rejectInvalidSignatures. */
  useSecret(secret: string | undefined): void {
    this.secret = secret;
  }

  async start(options: ReceiverOptions = {}): Promise<void> {
    const server = createServer((req, res) => {
      void readBody(req).then((rawBody) => {
        let body: unknown = rawBody;
        try {
          body = JSON.parse(rawBody) as unknown;
        } catch {
          // Kept as text.
        }
        const signature = req.headers['x-signature'];
        const forged =
          this.rejectInvalidSignatures && this.secret !== undefined && !signatureValid(body, typeof signature === 'string' ? signature : undefined, this.secret);
        const failing = !forged && this.failuresLeft > 0;
        if (failing) this.failuresLeft--;
        const answered = forged ? 401 : failing ? this.failStatus : 200;
        this.requests.push({
          seq: this.requests.length + 1,
          at: new Date().toISOString(),
          method: req.method ?? 'GET',
          path: req.url ?? '/',
          headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')])),
          rawBody,
          body,
          answered,
        });
        res.writeHead(answered, { 'content-type': 'application/json' });
        res.end(JSON.stringify(forged ? { error: 'invalid signature' } : failing ? { error: 'scenario receiver failing on purpose' } : { received: true }));
        for (const wake of [...this.waiters]) wake();
      });
    });
    server.keepAliveTimeout = 1000;
    const host = options.host ?? '127.0.0.1';
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, host, () => resolve());
    });
    this.server = server;
    const { port } = server.address() as AddressInfo;
    const shown = options.publicHost ?? (host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host);
    this.url = `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}/webhooks`;
  }

  /**
   * Resolves with the first request, in arrival order, that `accept` takes, waiting up to
   * `timeoutMs` for one to arrive; undefined when none did.
   */
  async waitFor(accept: (request: ReceivedWebhook) => boolean, timeoutMs: number): Promise<ReceivedWebhook | undefined> {
    const deadline = systemClock.nowMs() + timeoutMs;
    let checked = 0;
    for (;;) {
      for (; checked < this.requests.length; checked++) {
        const request = this.requests[checked];
        if (request && accept(request)) return request;
      }
      const left = deadline - systemClock.nowMs();
      if (left <= 0) return undefined;
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          clearTimeout(timer);
          this.waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, left);
        this.waiters.add(wake);
      });
    }
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    for (const wake of [...this.waiters]) wake();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}
