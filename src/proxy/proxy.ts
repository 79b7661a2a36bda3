import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Routes } from '../http/match.js';
import { notUsedFields } from '../http/not-used.js';
import { loadPrebuiltValidators } from '../http/prebuilt-validators.js';
import { ResponseValidator } from '../http/response-validation.js';
import { createSpecValidators } from '../http/validate.js';
import { WebhookValidator } from '../http/webhook-validation.js';
import { loadOpenApi, OPENAPI_PATH } from '../spec/openapi.js';
import { ExchangeChecker, type Finding } from './check.js';
import { HarRecorder } from './har.js';
import { isWebhookPath, WebhookChecker, webhookTarget } from './webhooks.js';

/** The header that tells the client how many findings its exchange had (none: no header). */
export const FINDINGS_HEADER = 'x-sandbox-findings';

/** The largest request or answer body the proxy holds to check (it reads each whole before forwarding it). */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** How long the proxy waits for the upstream's whole answer before answering 504. */
export const UPSTREAM_TIMEOUT_MS = 60_000;

/** Hop-by-hop headers (RFC 9110 7.6.1): they belong to one connection and are never forwarded. */
const HOP_BY_HOP: ReadonlySet<string> = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/** One exchange as the proxy reports it: a terminal line, a JSON line, a HAR entry. */
export interface Exchange {
  started: Date;
  method: string;
  /** The path and query as the client sent them. */
  target: string;
  operationId: string | undefined;
  /** The upstream's status, or the proxy's own 502/504 when the upstream gave no answer. */
  status: number;
  ms: number;
  findings: Finding[];
  /** Why the upstream gave no answer, when it did not (unreachable, or the request not forwarded). */
  error?: string;
  /** Set for a webhook the proxy received at `/_proxy/webhooks[/…]` (its status is the app's answer, or the proxy's own). */
  webhook?: {
    /** The body's event, when it is one of openapi.yaml's webhooks. */
    event: string | null;
    /** Where it was forwarded (`--webhooks-to` and the path under /_proxy/webhooks), null when it was not. */
    forwardedTo: string | null;
  };
}

export interface ProxyOptions {
  /** The service the requests go to: http or https, nothing else is contacted. */
  upstream: URL;
  port?: number;
  /** Loopback unless told otherwise: the proxy carries the caller's credentials. */
  host?: string;
  /** A HAR 1.2 file written as the session goes. */
  record?: string;
  /** The app that takes the webhooks the proxy receives (http or https): the only address contacted besides the upstream. */
  webhooksTo?: URL;
  /** The account's webhook secret: each received webhook's x-signature is checked with it. */
  webhookSecret?: string;
  onExchange?: (exchange: Exchange) => void;
}

export interface RunningProxy {
  url: string;
  stop(): Promise<void>;
}

/** The headers a hop forwards: every one but the hop-by-hop ones and those `Connection` names. */
function forwardable(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const named = new Set(
    String(headers.connection ?? '')
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  );
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || named.has(name)) continue;
    out[name] = value;
  }
  return out;
}

class TooLarge extends Error {}

/** A stream read whole, refused past MAX_BODY_BYTES. */
async function readAll(stream: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > MAX_BODY_BYTES) throw new TooLarge(`body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

/** The upstream URL of a request target: the upstream's own path prefix, then the target as sent. */
export function upstreamUrl(upstream: URL, target: string): URL {
  const base = upstream.pathname.replace(/\/+$/, '');
  const url = new URL(upstream.origin);
  const query = target.indexOf('?');
  url.pathname = base + (query < 0 ? target : target.slice(0, query));
  url.search = query < 0 ? '' : target.slice(query);
  return url;
}

interface UpstreamAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

function send(url: URL, method: string, headers: OutgoingHttpHeaders, body: Buffer, timeoutMs = UPSTREAM_TIMEOUT_MS): Promise<UpstreamAnswer> {
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method, headers, timeout: timeoutMs }, (res) => {
      readAll(res).then((bytes) => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: bytes }), reject);
    });
    outgoing.once('timeout', () => outgoing.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    outgoing.once('error', reject);
    outgoing.end(body);
  });
}

/** How long the check at start waits for the upstream's answer. */
export const UPSTREAM_CHECK_TIMEOUT_MS = 10_000;

/**
 * Whether the upstream answers HTTP at all: one GET of its base URL, without credentials, before
 * the proxy listens, so a wrong URL (nothing listening, a name that does not resolve, a port
 * that speaks something else) is one line at start, not a 502 on every exchange. Any status is
 * an answer. Undefined when it answered; else why not.
 */
export async function upstreamProblem(upstream: URL, timeoutMs = UPSTREAM_CHECK_TIMEOUT_MS): Promise<string | undefined> {
  try {
    await send(upstreamUrl(upstream, '/'), 'GET', { accept: 'application/json' }, Buffer.alloc(0), timeoutMs);
    return undefined;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const code = error instanceof Error ? Reflect.get(error, 'code') : undefined;
    return typeof code === 'string' && code.startsWith('HPE_') ? `it does not answer HTTP (${reason})` : reason;
  }
}

/** A request's whole body, or the proxy's answer when it cannot have it: 413 past MAX_BODY_BYTES, 400 when it was cut. */
async function bodyOrRefusal(req: IncomingMessage): Promise<{ body: Buffer } | { refused: ReturnType<typeof proxyError> }> {
  try {
    return { body: await readAll(req) };
  } catch (error) {
    return { refused: proxyError(error instanceof TooLarge ? 413 : 400, error instanceof Error ? error.message : String(error)) };
  }
}

function proxyError(status: number, message: string): { status: number; headers: Record<string, string>; body: Buffer } {
  const body = Buffer.from(JSON.stringify({ message: `payments-sandbox proxy: ${message}` }));
  return { status, headers: { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length) }, body };
}

/**
 * `payments-sandbox proxy` (contract v5): forwards the spec's operations to the upstream as they
 * came and its answers as they came, checking both sides with the sandbox's own validation,
 * reporting each exchange and recording it. `/_sandbox` is the sandbox's own and not forwarded.
 */
export async function startProxy(options: ProxyOptions): Promise<RunningProxy> {
  if (options.upstream.protocol !== 'http:' && options.upstream.protocol !== 'https:') throw new Error(`--upstream must be an http or https URL, not ${options.upstream.protocol}`);
  const webhooksTo = options.webhooksTo;
  if (webhooksTo && webhooksTo.protocol !== 'http:' && webhooksTo.protocol !== 'https:') throw new Error(`--webhooks-to must be an http or https URL, not ${webhooksTo.protocol}`);
  const document = await loadOpenApi();
  const routes = new Routes(document);
  const checker = new ExchangeChecker(routes, createSpecValidators(routes, loadPrebuiltValidators(OPENAPI_PATH)), notUsedFields(routes.operations), new ResponseValidator(document));
  const webhooks = new WebhookChecker(new WebhookValidator(document), options.webhookSecret);
  const recorder = options.record === undefined ? undefined : new HarRecorder(options.record);
  const upstreamHost = options.upstream.host;

  /**
   * A webhook the real service posts to the proxy (its postbackUrl pointed here): checked, then
   * forwarded as it came to `--webhooks-to` (the path under /_proxy/webhooks and the query
   * appended to it), the sender answered with the app's answer. Without --webhooks-to it is
   * checked and recorded and answered 503, so the sender keeps it for a retry.
   */
  const receiveWebhook = async (req: IncomingMessage, res: ServerResponse, started: Date, target: string, path: string): Promise<void> => {
    const method = req.method ?? 'GET';
    const reply = (status: number, headers: OutgoingHttpHeaders, body: Buffer): void => {
      res.writeHead(status, headers);
      res.end(body);
    };
    const report = (status: number, findings: Finding[], event: string | undefined, forwardedTo: string | null, error?: string): void =>
      options.onExchange?.({ started, method, target, operationId: undefined, status, ms: Date.now() - started.getTime(), findings, ...(error !== undefined && { error }), webhook: { event: event ?? null, forwardedTo } });
    if (method !== 'POST') {
      const refused = proxyError(405, `${path} takes webhooks: POST only`);
      reply(refused.status, { ...refused.headers, allow: 'POST' }, refused.body);
      report(refused.status, [], undefined, null, `not a webhook: ${method} ${path}`);
      return;
    }
    const read = await bodyOrRefusal(req);
    if ('refused' in read) {
      const { refused } = read;
      reply(refused.status, refused.headers, refused.body);
      report(refused.status, [], undefined, null, refused.body.toString());
      return;
    }
    const { body } = read;
    const { event, findings } = webhooks.check(req.headers, body);
    const withFindings = (headers: OutgoingHttpHeaders): OutgoingHttpHeaders => (findings.length > 0 ? { ...headers, [FINDINGS_HEADER]: String(findings.length) } : headers);
    // Recorded as the sender asked for it: the proxy's own address, as the Host header named it.
    const received = new URL(target, URL.canParse(`http://${req.headers.host ?? ''}`) ? `http://${req.headers.host ?? ''}` : 'http://127.0.0.1');
    const record = (status: number, responseHeaders: Record<string, string | string[] | undefined>, responseBody: Buffer): void =>
      recorder?.record({ started, ms: Date.now() - started.getTime(), method, url: received, requestHeaders: req.headers, requestBody: body, status, responseHeaders, responseBody, findings, webhook: true });
    if (!webhooksTo) {
      const kept = proxyError(503, 'webhook checked and recorded, not forwarded: the proxy has no --webhooks-to (the sender retries it)');
      reply(kept.status, withFindings(kept.headers), kept.body);
      record(kept.status, kept.headers, kept.body);
      report(kept.status, findings, event, null, 'not forwarded: no --webhooks-to');
      return;
    }
    const url = webhookTarget(webhooksTo, target);
    const headers = forwardable(req.headers);
    headers.host = url.host;
    if (body.length > 0 || req.headers['content-length'] !== undefined) headers['content-length'] = body.length;
    let app: UpstreamAnswer;
    try {
      app = await send(url, method, headers, body);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const failed = proxyError(/within/.test(reason) ? 504 : 502, `the app at ${url.origin} (--webhooks-to) gave no answer: ${reason}`);
      reply(failed.status, withFindings(failed.headers), failed.body);
      record(failed.status, failed.headers, failed.body);
      report(failed.status, findings, event, url.toString(), `no answer from --webhooks-to: ${reason}`);
      return;
    }
    const out = withFindings(forwardable(app.headers));
    if (app.headers['transfer-encoding'] !== undefined) out['content-length'] = app.body.length;
    reply(app.status, out, app.body);
    record(app.status, app.headers, app.body);
    report(app.status, findings, event, url.toString());
  };

  const server: Server = createServer((req, res) => {
    const started = new Date();
    const method = req.method ?? 'GET';
    const target = req.url ?? '/';
    const queryAt = target.indexOf('?');
    const path = queryAt < 0 ? target : target.slice(0, queryAt);
    const operation = checker.operationOf(method, path);
    const report = (status: number, findings: Finding[], error?: string): void =>
      options.onExchange?.({ started, method, target, operationId: operation?.operationId, status, ms: Date.now() - started.getTime(), findings, ...(error !== undefined && { error }) });
    const answer = (status: number, headers: OutgoingHttpHeaders, body: Buffer): void => {
      res.writeHead(status, headers);
      res.end(body);
    };
    if (isWebhookPath(path)) {
      receiveWebhook(req, res, started, target, path).catch((error: unknown) => {
        const failed = proxyError(500, error instanceof Error ? error.message : String(error));
        if (!res.headersSent) answer(failed.status, failed.headers, failed.body);
        else res.destroy();
        options.onExchange?.({ started, method, target, operationId: undefined, status: failed.status, ms: Date.now() - started.getTime(), findings: [], error: failed.body.toString(), webhook: { event: null, forwardedTo: null } });
      });
      return;
    }
    if (path === '/_proxy' || path.startsWith('/_proxy/')) {
      const refused = proxyError(404, `${path} is not the proxy's: it takes webhooks at POST /_proxy/webhooks[/…] and forwards the spec's operations`);
      answer(refused.status, refused.headers, refused.body);
      report(refused.status, [], 'not forwarded: /_proxy is the proxy\'s own');
      return;
    }
    if (path === '/_sandbox' || path.startsWith('/_sandbox/')) {
      const refused = proxyError(404, `${path} is the sandbox's control API, which the real service does not have: the proxy forwards only the spec's operations`);
      answer(refused.status, refused.headers, refused.body);
      report(refused.status, [], "not forwarded: /_sandbox is the sandbox's control API");
      return;
    }
    const run = async (): Promise<void> => {
      const read = await bodyOrRefusal(req);
      if ('refused' in read) {
        const { refused } = read;
        answer(refused.status, refused.headers, refused.body);
        report(refused.status, [], refused.body.toString());
        return;
      }
      const { body } = read;
      const requestFindings = checker.checkRequest(operation, { method, path, query: queryAt < 0 ? undefined : target.slice(queryAt + 1), headers: req.headers, body });
      const url = upstreamUrl(options.upstream, target);
      const headers = forwardable(req.headers);
      headers.host = upstreamHost;
      // The body is forwarded whole: a chunked request goes on with its length, the same bytes.
      if (body.length > 0 || req.headers['content-length'] !== undefined) headers['content-length'] = body.length;
      let upstream: UpstreamAnswer;
      try {
        upstream = await send(url, method, headers, body);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        const failed = proxyError(/within/.test(reason) ? 504 : 502, `the upstream ${options.upstream.origin} gave no answer: ${reason}`);
        const findings = requestFindings;
        answer(failed.status, { ...failed.headers, ...(findings.length > 0 && { [FINDINGS_HEADER]: String(findings.length) }) }, failed.body);
        recorder?.record({ started, ms: Date.now() - started.getTime(), method, url, requestHeaders: req.headers, requestBody: body, status: failed.status, responseHeaders: failed.headers, responseBody: failed.body, findings });
        report(failed.status, findings, reason);
        return;
      }
      const contentType = upstream.headers['content-type'];
      const findings = [...requestFindings, ...checker.checkResponse(operation, { method, path }, { status: upstream.status, contentType, contentEncoding: upstream.headers['content-encoding'], body: upstream.body })];
      const out = forwardable(upstream.headers);
      if (findings.length > 0) out[FINDINGS_HEADER] = String(findings.length);
      if (upstream.headers['transfer-encoding'] !== undefined) out['content-length'] = upstream.body.length;
      answer(upstream.status, out, upstream.body);
      const ms = Date.now() - started.getTime();
      recorder?.record({ started, ms, method, url, requestHeaders: req.headers, requestBody: body, status: upstream.status, responseHeaders: upstream.headers, responseBody: upstream.body, findings });
      report(upstream.status, findings);
    };
    run().catch((error: unknown) => {
      // A bug of the proxy's own: the client gets an answer that says so, never a hung socket.
      const failed = proxyError(500, error instanceof Error ? error.message : String(error));
      if (!res.headersSent) answer(failed.status, failed.headers, failed.body);
      else res.destroy();
      report(failed.status, [], failed.body.toString());
    });
  });

  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}`,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
