import type { IncomingHttpHeaders } from 'node:http';
import { request as httpRequest } from '../node-http.js';
import type { operations } from '../spec/openapi-types.js';
import { describe } from '../webhooks/answer-text.js';

/**
 * The test kit's HTTP client: one typed call per operation of openapi.yaml, so a control wrapper
 * says which operation it calls and gets that operation's answer type, and a non-2xx answer
 * throws an Error carrying its status and body (a test's failure then says what the sandbox said).
 */

type Operations = operations;
export type OperationName = keyof Operations;

/** The JSON body of an operation's success answer (200, else 201). */
export type Answer<Op extends OperationName> = Operations[Op]['responses'] extends { 200: { content: { 'application/json': infer T } } }
  ? T
  : Operations[Op]['responses'] extends { 201: { content: { 'application/json': infer T } } }
    ? T
    : never;

/** The JSON request body an operation takes (never when it takes none). */
export type RequestBody<Op extends OperationName> = Operations[Op] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

/** The query parameters an operation takes. */
export type Query<Op extends OperationName> = Operations[Op]['parameters'] extends { query?: infer Q } ? NonNullable<Q> : never;

/** Sent on every call the kit makes, so `requests.list()` can tell the kit's own calls from the app's. */
export const KIT_HEADER = 'x-sandbox-test-kit';

/** A call the sandbox answered with anything but 2xx. */
export class SandboxRequestError extends Error {
  override readonly name = 'SandboxRequestError';
  constructor(
    readonly method: string,
    readonly path: string,
    readonly status: number,
    /** The answer's body: parsed JSON, else its text. */
    readonly body: unknown,
    /** The sandbox's explanation (x-sandbox-hint), when it gave one. */
    readonly hint: string | null,
  ) {
    super(`${method} ${path}: HTTP ${status}${messageOf(body)}${hint ? ` (${hint})` : ''}`);
  }
}

const messageOf = (body: unknown): string => {
  if (typeof body === 'object' && body !== null) {
    for (const field of ['message', 'error'] as const) {
      const value: unknown = (body as Record<string, unknown>)[field];
      if (typeof value === 'string') return ` ${value}`;
    }
  }
  return typeof body === 'string' && body !== '' ? ` ${body.slice(0, 200)}` : '';
};

/** No call of the kit waits longer than this for the sandbox (a test's own timeout usually ends it first). */
const CALL_TIMEOUT_MS = 30_000;

export interface CallOptions<Op extends OperationName> {
  body?: RequestBody<Op>;
  query?: Query<Op>;
}

/** The test kit's client, one typed call per operation (the scenario runner's, which records its exchanges, is ScenarioHttp). */
export class KitHttp {
  constructor(
    readonly url: string,
    /** The Authorization header sent: the account's Basic auth, or the admin token's Bearer. */
    private readonly authorization: string | undefined,
  ) {}

  /**
   * Calls `operation` (named for its answer type) at `method path`. The answer is the sandbox's,
   * which checks its own answers against openapi.yaml; the kit takes it as that operation's type.
   */
  async call<Op extends OperationName>(_operation: Op, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, options: CallOptions<Op> = {}): Promise<Answer<Op>> {
    const url = new URL(path, this.url);
    for (const [name, value] of Object.entries(options.query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
    const headers: Record<string, string> = { [KIT_HEADER]: '1', accept: 'application/json' };
    if (this.authorization !== undefined) headers.authorization = this.authorization;
    // State-changing calls take JSON bodies only: an empty object where the operation's body is optional.
    const body = method === 'GET' ? undefined : JSON.stringify(options.body ?? {});
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res: { status: number; headers: IncomingHttpHeaders; text: string };
    try {
      res = await send(url, method, headers, body);
    } catch (error) {
      throw new Error(`cannot reach the sandbox at ${this.url} (${method} ${url.pathname}: ${describe(error)}): is it running there? (startSandbox() starts one in this process)`);
    }
    const { text } = res;
    let parsed: unknown = text;
    try {
      parsed = text === '' ? null : JSON.parse(text);
    } catch {
      // Not JSON (a proxy's error page): kept as text for the error.
    }
    if (res.status < 200 || res.status > 299) throw new SandboxRequestError(method, url.pathname + url.search, res.status, parsed, headerValue(res.headers['x-sandbox-hint']));
    // The network boundary: the sandbox answered this operation's 2xx, whose shape openapi.yaml fixes.
    return parsed as Answer<Op>;
  }
}

const headerValue = (value: string | string[] | undefined): string | null => (Array.isArray(value) ? value.join(', ') : (value ?? null));

/**
 * One request with node:http (node:https for an https URL), not fetch: a process's first fetch
 * loads and compiles Node's bundled undici, ~100-250 ms that were most of the kit's first
 * account(), where the sandbox's own server has node:http loaded already.
 */
async function send(url: URL, method: string, headers: Record<string, string>, body: string | undefined): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
  const request = url.protocol === 'https:' ? (await import('node:https')).request : httpRequest;
  const sent = body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) };
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: sent, signal: AbortSignal.timeout(CALL_TIMEOUT_MS) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}
