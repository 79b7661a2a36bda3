import { basicAuthorization } from '../basic-auth.js';
import type { Exchange } from './types.js';

export interface CallOptions {
  method: string;
  /** Path (with its query string, if any) relative to the base URL. */
  path: string;
  query?: Record<string, unknown>;
  body?: unknown;
  headers?: Record<string, string>;
  /** Secret key for Basic auth; null sends none. */
  key: string | null;
  /** `Authorization: Bearer <token>` instead of Basic (account creation with an admin token). */
  bearer?: string;
}

/** Talks to a sandbox over HTTP only, as a merchant's test would; every call is kept for reports (the test kit's typed client is KitHttp). */
export class ScenarioHttp {
  constructor(readonly baseUrl: string) {}

  async call(options: CallOptions): Promise<Exchange> {
    const url = new URL(options.path, this.baseUrl.endsWith('/') ? this.baseUrl : `${this.baseUrl}/`);
    // An absolute path keeps the base URL's own path prefix, if any.
    if (options.path.startsWith('/')) url.pathname = `${new URL(this.baseUrl).pathname.replace(/\/+$/, '')}${options.path.split('?')[0] ?? ''}`;
    for (const [name, value] of Object.entries(options.query ?? {})) url.searchParams.append(name, String(value));
    const headers: Record<string, string> = {};
    if (options.bearer !== undefined) headers.authorization = `Bearer ${options.bearer}`;
    else if (options.key !== null) headers.authorization = basicAuthorization(options.key);
    let payload: string | undefined;
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(options.body);
    }
    Object.assign(headers, options.headers);
    const started = performance.now();
    const base = { method: options.method, url: url.toString(), ...(options.body !== undefined && { requestBody: options.body }) };
    try {
      // Redirects are answers too (the checkout's 303): a test sees them as they are.
      const res = await fetch(url, { method: options.method, headers, body: payload, redirect: 'manual', signal: AbortSignal.timeout(30_000) });
      const type = res.headers.get('content-type') ?? '';
      const text = await res.text();
      let responseBody: unknown = text;
      if (type.includes('json')) {
        try {
          responseBody = JSON.parse(text) as unknown;
        } catch {
          // Shown as text: a broken JSON answer is itself worth reporting.
        }
      }
      return { ...base, status: res.status, responseBody, headers: Object.fromEntries(res.headers), durationMs: Math.round(performance.now() - started) };
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const reason = cause?.code ?? cause?.message ?? (error as Error).message;
      return { ...base, status: 0, responseBody: undefined, headers: {}, durationMs: Math.round(performance.now() - started), error: `no answer from ${url.origin}: ${reason}` };
    }
  }
}
