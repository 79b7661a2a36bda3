/** The implementation under verification, reached over HTTP only. */
import { basicAuthorization } from '../basic-auth.js';

export interface CallOptions {
  /** Basic auth with this secret key; none when absent. */
  key?: string;
  /** Bearer token (the sandbox's admin token); wins over `key`. */
  bearer?: string;
  body?: unknown;
}

export interface CallResult {
  status: number;
  body: unknown;
}

/** A state could not be set up: the message says which call answered what. */
export class StateSetupError extends Error {}

const TIMEOUT_MS = 10_000;

export class TargetApi {
  readonly baseUrl: string;

  constructor(baseUrl: string) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
  }

  async call(method: string, path: string, options: CallOptions = {}): Promise<CallResult> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (options.bearer !== undefined) headers.authorization = `Bearer ${options.bearer}`;
    else if (options.key !== undefined) headers.authorization = basicAuthorization(options.key);
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers,
      ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = text === '' ? null : JSON.parse(text);
    } catch {
      // not JSON: kept as text for the error message
    }
    return { status: res.status, body };
  }

  /** A call that must answer `status`; anything else is a StateSetupError naming the call. */
  async expect<T>(method: string, path: string, status: number, options: CallOptions = {}): Promise<T> {
    const res = await this.call(method, path, options);
    if (res.status !== status) {
      throw new StateSetupError(`${method} ${path} answered ${res.status} (expected ${status}): ${JSON.stringify(res.body).slice(0, 300)}`);
    }
    return res.body as T;
  }

  /** `GET /_sandbox/health` answering `{status: "ok", version}`: the target is a payments-sandbox. */
  async sandboxVersion(): Promise<string | undefined> {
    try {
      const res = await this.call('GET', '/_sandbox/health');
      const body = res.body as { status?: unknown; version?: unknown } | null;
      if (res.status === 200 && body?.status === 'ok') return typeof body.version === 'string' ? body.version : 'unknown';
    } catch {
      // unreachable or not answering: handled by the caller's own probe
    }
    return undefined;
  }
}
