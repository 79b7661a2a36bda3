import { Agent, request } from 'undici';
import { VERSION } from '../version.js';

export interface AttemptOutcome {
  httpStatus: number | null;
  error: string | null;
  durationMs: number;
  /** The first bytes of the receiver's answer, for the delivery log. */
  responseBody: string | null;
  ok: boolean;
}

const EXCERPT_BYTES = 1024;

/**
 * Sends webhook requests over keep-alive connections. undici's per-origin connection
 * limit bounds concurrency per host, so a slow receiver only queues its own deliveries.
 */
export class Dispatcher {
  private readonly agent: Agent;

  constructor(
    readonly timeoutMs: number,
    connectionsPerHost = 8,
  ) {
    this.agent = new Agent({ connections: connectionsPerHost, keepAliveTimeout: 10_000, connect: { timeout: timeoutMs } });
  }

  async post(url: string, body: string, headers: Record<string, string>): Promise<AttemptOutcome> {
    const started = performance.now();
    const elapsed = (): number => Math.round(performance.now() - started);
    // A timer cleared with the answer rather than AbortSignal.timeout, whose timer always runs
    // to its end: at hundreds of webhooks a second that was thousands of live timers, each
    // firing an abort (and building a DOMException) seconds after its webhook was answered.
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.timeoutMs).unref();
    try {
      const res = await request(url, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', 'user-agent': `payments-sandbox/${VERSION}`, ...headers },
        dispatcher: this.agent,
        signal: controller.signal,
      });
      const responseBody = await excerpt(res.body);
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      return { httpStatus: res.statusCode, error: ok ? null : `HTTP ${res.statusCode}`, durationMs: elapsed(), responseBody, ok };
    } catch (error) {
      const message = controller.signal.aborted ? `timeout after ${this.timeoutMs} ms` : describe(error);
      return { httpStatus: null, error: message, durationMs: elapsed(), responseBody: null, ok: false };
    } finally {
      clearTimeout(timer);
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

async function excerpt(body: AsyncIterable<Buffer> & { destroy?: () => void }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= EXCERPT_BYTES) {
      body.destroy?.();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8');
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: string }).code ?? ((error as { cause?: { code?: string } }).cause?.code);
  return code ? `${code}: ${error.message}` : error.message;
}
