import cors from 'cors';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import type { Config } from '../config.js';
import { HttpError } from './errors.js';
import type { RequestFacts } from './request.js';

/**
 * The checks that let one sandbox be shared (contract v3, "Shared use"), before any routing:
 * the Host header (DNS rebinding), CORS for the origins the operator names, cross-origin
 * state changes, and JSON-only control calls. They run on every request, the API's and
 * those for people alike; a WebSocket handshake also asks `upgradeRefusal` (its Origin).
 */
export interface SharedUseOptions {
  /** The address bound (config.host). */
  host: string;
  allowedHosts: string[] | undefined;
  allowedOrigins: string[];
  /** SANDBOX_PUBLIC_URL as configured (undefined when the sandbox derives it). */
  publicUrl: string | undefined;
}

/** Whether an address to bind (or a Host name) is a loopback one: then only this machine reaches it. */
export function isLoopback(host: string): boolean {
  const name = bare(host);
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (isIP(name) === 4) return name.startsWith('127.');
  return name === '::1' || name === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(name);
}

/** `Name:port`, `[v6]:port`, `name.` → `name` / `v6`, lowercased. */
function bare(host: string): string {
  let name = host.trim().toLowerCase();
  if (name.startsWith('[')) name = name.slice(1, name.indexOf(']') === -1 ? undefined : name.indexOf(']'));
  else if (name.split(':').length === 2) name = name.slice(0, name.indexOf(':'));
  return name.endsWith('.') ? name.slice(0, -1) : name;
}

/** `host[:port]` of an origin or URL, lowercased, or undefined when it is not one. */
function hostOf(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return parsed.host === '' ? undefined : parsed.host.toLowerCase();
  } catch {
    return undefined;
  }
}

/** What the shared-use checks decide for a request. */
export type Admission = 'admitted' | 'preflight' | HttpError;

/** Browsers' Fetch-Metadata values under which a request is the page's own doing. */
const OWN_FETCH_SITES: ReadonlySet<string> = new Set(['same-origin', 'none']);
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);
/** The payer pages' buttons are HTML forms, outside the JSON-only rule; their handlers demand the same origin. */
const PAYER_PAGE = /^\/_sandbox\/(checkout|boletos|pix|spei)\//;
/** What a browser script of an allowed origin may read of an answer, besides the CORS-safelisted headers. */
const EXPOSED_HEADERS: readonly string[] = ['x-trace-id', 'x-sandbox-hint', 'x-sandbox-fault', 'x-sandbox-response-invalid', 'retry-after', 'ratelimit-policy', 'ratelimit'];

export class SharedUse {
  private readonly loopbackBound: boolean;
  private readonly hostNames: Set<string>;
  private readonly hostSuffixes: string[];
  private readonly anyHost: boolean;
  private readonly origins: Set<string>;
  private readonly anyOrigin: boolean;
  private readonly publicHost: string | undefined;

  constructor(private readonly options: SharedUseOptions) {
    this.loopbackBound = isLoopback(options.host);
    const hosts = (options.allowedHosts ?? []).map((h) => h.trim().toLowerCase()).filter((h) => h !== '');
    this.anyHost = hosts.includes('*') || (!this.loopbackBound && options.allowedHosts === undefined);
    this.hostNames = new Set(hosts.filter((h) => !h.startsWith('.')).map(bare));
    this.hostSuffixes = hosts.filter((h) => h.startsWith('.'));
    this.publicHost = options.publicUrl === undefined ? undefined : hostOf(options.publicUrl);
    if (this.publicHost !== undefined) this.hostNames.add(bare(this.publicHost));
    this.anyOrigin = options.allowedOrigins.includes('*');
    this.origins = new Set(options.allowedOrigins.filter((o) => o !== '*').map((o) => o.trim().toLowerCase().replace(/\/+$/, '')));
  }

  /** True while bound to loopback: what needs the admin token elsewhere is open to this machine's users. */
  get boundToLoopback(): boolean {
    return this.loopbackBound;
  }

  /** The Host header names the sandbox answers (DNS rebinding: another name may point at this address). */
  hostAllowed(host: string | undefined): boolean {
    // Without one (HTTP/1.0) no browser sent it; a rebound name always travels in it.
    if (host === undefined || host === '' || this.anyHost) return true;
    const name = bare(host);
    if (isIP(name) !== 0 || isLoopback(name) || this.hostNames.has(name)) return true;
    return this.hostSuffixes.some((suffix) => name.endsWith(suffix) || name === suffix.slice(1));
  }

  /** The request comes from a page of the sandbox itself: its Origin names the Host it was sent to, or the public URL's. */
  sameOrigin(req: { headers: IncomingHttpHeaders }): boolean {
    const origin = req.headers.origin;
    const site = req.headers['sec-fetch-site'];
    // A page whose referrer policy is no-referrer sends `Origin: null` even to itself; the browser's Sec-Fetch-Site still tells.
    if (origin === undefined || (origin === 'null' && site !== undefined)) return OWN_FETCH_SITES.has(String(site ?? 'same-origin'));
    const from = hostOf(origin);
    return from !== undefined && (from === req.headers.host?.toLowerCase() || from === this.publicHost);
  }

  /** An origin the operator listed in SANDBOX_ALLOWED_ORIGINS. */
  originListed(origin: string): boolean {
    return this.anyOrigin || this.origins.has(origin.toLowerCase());
  }

  /**
   * Why a request from a browser page of another site is refused, if it is: a browser marks
   * it with Origin (every POST, PUT, PATCH, DELETE and WebSocket) or Sec-Fetch-Site. Clients
   * that are not browsers (curl, CI, SDKs) send neither and are not concerned.
   */
  crossOriginRefusal(req: { headers: IncomingHttpHeaders }): string | undefined {
    const origin = req.headers.origin;
    if (origin !== undefined) {
      if (this.sameOrigin(req) || this.originListed(origin)) return undefined;
      return `cross-origin request from ${origin} refused: the sandbox takes changes from its own pages, from clients that are not browsers, and from the origins in SANDBOX_ALLOWED_ORIGINS`;
    }
    const site = req.headers['sec-fetch-site'];
    if (site === undefined || OWN_FETCH_SITES.has(String(site))) return undefined;
    return `${String(site)} request refused: the sandbox takes changes from its own pages, from clients that are not browsers, and from the origins in SANDBOX_ALLOWED_ORIGINS`;
  }

  private hostRefusal(host: string | undefined): string | undefined {
    if (this.hostAllowed(host)) return undefined;
    const bound = this.loopbackBound ? `bound to ${this.options.host}, it answers loopback names and IP literals` : `it answers`;
    return `Host ${host ?? ''} is not served by this sandbox (DNS-rebinding guard): ${bound}, SANDBOX_ALLOWED_HOSTS and the host of SANDBOX_PUBLIC_URL`;
  }

  /**
   * A WebSocket handshake's check beyond admission's (which lets a GET through whatever its
   * Origin): a browser sends Origin with every handshake, and a page of another site must not
   * read the account's stream. Undefined lets it through.
   */
  upgradeRefusal(req: { headers: IncomingHttpHeaders }): string | undefined {
    return req.headers.origin === undefined ? undefined : this.crossOriginRefusal(req);
  }

  /**
   * The shared-use stage, run before routing on every request: `done` gets what to do with it
   * (go on, answer a CORS preflight of an allowed origin, or refuse it with an HttpError).
   * The cors package decides and sets the CORS headers on the response; the answer itself is
   * the reply stage's.
   */
  admission(): (req: IncomingMessage, facts: RequestFacts, res: ServerResponse, done: (outcome: Admission) => void) => void {
    const allowCors = this.anyOrigin || this.origins.size > 0;
    const allowed = (origin: string | undefined): boolean => origin !== undefined && this.originListed(origin);
    const corsHandler = allowCors
      ? cors({
          origin: (origin, callback) => callback(null, allowed(origin)),
          exposedHeaders: [...EXPOSED_HEADERS],
          maxAge: 600,
          // The preflight's 204 is written by the reply stage, like every other answer.
          preflightContinue: true,
        })
      : undefined;
    return (req, facts, res, done) => {
      const { path, media } = facts;
      const host = this.hostRefusal(req.headers.host);
      if (host) return done(new HttpError(403, host));
      const method = (req.method ?? 'GET').toUpperCase();
      const proceed = (): void => {
        // With an allowed Origin, cors answers every OPTIONS as a preflight.
        if (corsHandler && method === 'OPTIONS' && allowed(req.headers.origin)) return done('preflight');
        if (SAFE_METHODS.has(method)) return done('admitted');
        const crossOrigin = this.crossOriginRefusal(req);
        if (crossOrigin) return done(new HttpError(403, crossOrigin));
        // The Content-Type as the edge read it (src/http/request.ts), the body stage and validate reading the same.
        if (media !== undefined && !media.isJson && path.startsWith('/_sandbox/') && !PAYER_PAGE.test(path)) {
          return done(
            new HttpError(
              415,
              `Content-Type must be application/json (or no body at all) on control calls that change state, not ${media.type ?? media.header}: a form of another site cannot make them`,
            ),
          );
        }
        done('admitted');
      };
      if (corsHandler) corsHandler(req, res, proceed);
      else proceed();
    };
  }

  /**
   * Account creation, reset and the unauthenticated request log: with an admin token they
   * need it (the caller decides how to say so); without one they are open only while the
   * sandbox is bound to loopback.
   */
  requireAdminOrLoopback(adminToken: string | undefined, what: string): void {
    if (adminToken !== undefined || this.loopbackBound) return;
    throw new HttpError(
      403,
      `${what} is closed: this sandbox is bound to ${this.options.host}, beyond loopback, without an admin token; start it with SANDBOX_ADMIN_TOKEN (then send Authorization: Bearer <token>) or bind it to 127.0.0.1 (SANDBOX_HOST)`,
    );
  }
}

/** The shared-use settings of a configuration. */
export const sharedUseOf = (config: Config): SharedUse =>
  new SharedUse({ host: config.host, allowedHosts: config.allowedHosts, allowedOrigins: config.allowedOrigins, publicUrl: config.publicUrl });

/**
 * What a sandbox bound beyond loopback without an admin token leaves open, said once at
 * start; undefined when there is nothing to warn about.
 */
export function exposureWarning(config: Config, defaultKey: string, wellKnownKey: string): string | undefined {
  if (config.adminToken !== undefined || isLoopback(config.host)) return undefined;
  const key = defaultKey === wellKnownKey ? `the well-known key ${wellKnownKey}` : 'its key';
  return (
    `bound to ${config.host}, not loopback, without SANDBOX_ADMIN_TOKEN: anyone who reaches this address can use the default account with ${key} ` +
    `(its transactions, webhook secret and webhook URL), the console and the API reference; account creation, reset and the unauthenticated request log stay closed. ` +
    `Set SANDBOX_ADMIN_TOKEN (and SANDBOX_SECRET_KEY) to share it, or publish it on loopback only (docker run -p 127.0.0.1:4010:4010).`
  );
}
