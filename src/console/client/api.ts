/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/** The console's only way to the sandbox: the public control API, with the signed-in key. */

export interface Answer<T = unknown> {
  status: number;
  ok: boolean;
  body: T;
  /** The sandbox's longer explanation of a 4xx (`x-sandbox-hint`). */
  hint: string | null;
  /** The route is not served by this sandbox build (a 501, or a 404 for a path it has no route for). */
  missing: boolean;
}

const KEY = 'payments-sandbox.secretKey';

/** What a call that got no answer says. */
export const UNREACHABLE = 'the sandbox did not answer: check that it is still running (and the tunnel or proxy to it, if any), then reload this page';

/** The key lives in sessionStorage only: it goes when the tab closes, never into localStorage or cookies. */
export const session = {
  get: (): string | null => sessionStorage.getItem(KEY),
  set: (key: string): void => sessionStorage.setItem(KEY, key),
  clear: (): void => sessionStorage.removeItem(KEY),
};

export function authorization(key: string): string {
  // btoa takes Latin-1 only; a key is ASCII, but encode anyway so no key can throw here.
  const bytes = new TextEncoder().encode(`secret:${key}`);
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return `Basic ${btoa(binary)}`;
}

export class Api {
  constructor(readonly key: string) {}

  async request<T = unknown>(method: string, path: string, body?: unknown): Promise<Answer<T>> {
    // Marks the console's own calls, so a request log can tell them from the integration's.
    const headers: Record<string, string> = { authorization: authorization(this.key), accept: 'application/json', 'x-sandbox-client': 'console' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    let text: string;
    try {
      res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      text = await res.text();
    } catch {
      // No answer at all (the sandbox stopped, a tunnel or proxy in between closed): a failed call like any other, status 0.
      return { status: 0, ok: false, body: { message: UNREACHABLE } as T, hint: null, missing: false };
    }
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // a non-JSON answer stays text
    }
    const message = typeof parsed === 'object' && parsed !== null && 'message' in parsed ? String((parsed as { message: unknown }).message) : '';
    const missing = res.status === 501 || (res.status === 404 && message.startsWith('no route for'));
    return { status: res.status, ok: res.ok, body: parsed as T, hint: res.headers.get('x-sandbox-hint'), missing };
  }

  get<T = unknown>(path: string): Promise<Answer<T>> {
    return this.request<T>('GET', path);
  }
  post<T = unknown>(path: string, body?: unknown): Promise<Answer<T>> {
    return this.request<T>('POST', path, body);
  }
  put<T = unknown>(path: string, body?: unknown): Promise<Answer<T>> {
    return this.request<T>('PUT', path, body);
  }
  delete<T = unknown>(path: string): Promise<Answer<T>> {
    return this.request<T>('DELETE', path);
  }

  /** Every page of a `{data, hasMore}` list, following `startingAfter` with the last item's id. */
  async all<T extends { id: string }>(path: string, limit = 100): Promise<Answer<T[]>> {
    const out: T[] = [];
    let after: string | undefined;
    for (;;) {
      const sep = path.includes('?') ? '&' : '?';
      const page = await this.get<{ data: T[]; hasMore: boolean }>(`${path}${sep}limit=${limit}${after ? `&startingAfter=${encodeURIComponent(after)}` : ''}`);
      if (!page.ok) return { ...page, body: out };
      out.push(...page.body.data);
      const last = page.body.data.at(-1);
      if (!page.body.hasMore || !last) return { ...page, body: out };
      after = last.id;
    }
  }
}

/** "404 Transaction not found", with the hint when the sandbox gave one. */
export function describe(answer: Answer): string {
  const body = answer.body as { message?: unknown; error?: unknown } | null;
  const message = body && typeof body === 'object' ? String(body.message ?? body.error ?? '') : String(body ?? '');
  return `${answer.status === 0 ? '' : answer.status} ${message}${answer.hint ? ` — ${answer.hint}` : ''}`.trim();
}
