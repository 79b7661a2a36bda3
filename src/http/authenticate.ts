import type { AccountKeys, AccountRecord } from '../accounts/accounts.js';
import { bearerTokenMatches, secretKeyFromHeader } from '../accounts/accounts.js';
import { StoreUnavailable } from '../store/ports.js';
import { HttpError } from './errors.js';
import type { SandboxOperation } from './match.js';

/** What the authenticate stage writes on a request's facts (src/http/request.ts). */
export interface AuthenticatedRequest {
  caller: Caller | undefined;
  keyOwner: { account: AccountRecord | undefined } | undefined;
}

/** Who called: the account of the key sent, and whether the sandbox's admin token came with it. */
export interface Caller {
  account: AccountRecord | undefined;
  /** The request carried the sandbox's admin token. */
  admin: boolean;
}

const unlessUnavailable = (error: unknown): undefined => {
  if (error instanceof StoreUnavailable) return undefined;
  throw error;
};

const HOW = 'send Authorization: Basic base64("secret:" + secretKey)';
const UNAUTHORIZED = `API key invalid or absent: ${HOW}`;

/**
 * The 401's hint, naming the mistake in the Authorization header sent (the message stays
 * exactly `Unauthorized`): each of these was a newcomer's round trip with one generic hint.
 * It never repeats what was sent: the header holds a secret.
 */
export function unauthorizedHint(authorization: string | undefined, bearerAccepted: boolean): string {
  const problem = credentialsProblem(authorization?.trim() ?? '', bearerAccepted);
  return problem ? `API key invalid or absent: ${problem}; ${HOW}` : UNAUTHORIZED;
}

function credentialsProblem(header: string, bearerAccepted: boolean): string | undefined {
  if (header === '') return undefined;
  const scheme = /^(\S+)(?:\s+([\s\S]*))?$/.exec(header);
  const [name, rest] = [scheme?.[1] ?? '', (scheme?.[2] ?? '').trim()];
  if (/^bearer$/i.test(name)) {
    return bearerAccepted ? "the Bearer token is not this sandbox's admin token (SANDBOX_ADMIN_TOKEN), and this API's keys go in Basic, not Bearer" : 'the header is a Bearer token; this API takes HTTP Basic, not Bearer, even for the secret key';
  }
  if (!/^basic$/i.test(name)) return rest === '' ? 'the header has no scheme (the bare key?): it must start with Basic' : 'the header is not of the Basic scheme';
  if (rest === '') return 'the Basic credentials are empty';
  // `base64` wraps its output at 76 characters: a long key's credentials arrive in pieces.
  if (/\s/.test(rest)) return 'the base64 is wrapped (it holds a line break or space): encode without wrapping, e.g. base64 -w0, or btoa()';
  if (/[-_]/.test(rest) && /^[A-Za-z0-9_-]+=*$/.test(rest)) return 'the credentials are base64url (- and _); this API takes standard base64 (+ and /)';
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(rest) || rest.replace(/=+$/, '').length % 4 === 1) return 'the credentials are not valid base64';
  const decoded = Buffer.from(rest, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return 'the decoded credentials have no colon: they must be the word secret, a colon, then the key';
  const [user, key] = [decoded.slice(0, colon), decoded.slice(colon + 1)];
  if (user !== 'secret') {
    if (user === '') return 'the user part (before the colon) is empty: it must be the literal word secret';
    if (user.toLowerCase() === 'secret') return 'the user part must be the word secret in lower case';
    if (key === '') return 'the key is in the user part (key:); it goes after the literal word secret (secret:key)';
    return 'the user part (before the colon) is not the literal word secret';
  }
  if (key === '') return 'the key after "secret:" is empty';
  if (/[\r\n]$/.test(key)) return 'the key ends with a line break (echo adds one: encode with echo -n or printf)';
  if (key.trim() !== key) return 'the key has spaces around it';
  return 'no account of this sandbox has this secret key';
}

/**
 * The authenticate stage: the operation's security requirements, as OpenAPI defines them: any
 * one requirement object must hold, and within it every scheme (`{}` needs nothing). A
 * scheme the sandbox does not implement never holds.
 */
export class Authenticator {
  constructor(
    private readonly accounts: AccountKeys,
    private readonly adminToken: string | undefined,
  ) {}

  /**
   * The caller, or undefined when the credentials do not satisfy the operation. The account
   * of the key sent, found or not, goes on the request's facts (`keyOwner`), so that nothing
   * after looks the key up again.
   */
  private async caller(operation: SandboxOperation, request: AuthenticatedRequest, authorization: string | undefined): Promise<Caller | undefined> {
    const requirements = operation.security ?? [];
    const key = secretKeyFromHeader(authorization);
    // A key is looked up in the store (another instance may have created its account).
    const admin = this.adminToken !== undefined && bearerTokenMatches(authorization, this.adminToken);
    const owner = async (lookUp: Promise<AccountRecord | undefined>): Promise<AccountRecord | undefined> => {
      const account = await lookUp;
      request.keyOwner = { account };
      return account;
    };
    // An operation that needs no key (health) answers without the store: a key sent anyway names no account while it is away.
    if (requirements.length === 0) return { account: key ? await owner(this.accounts.authenticate(key).catch(unlessUnavailable)) : undefined, admin };
    const account = key ? await owner(this.accounts.authenticate(key)) : undefined;
    const holds = (scheme: string): boolean => (scheme === 'basicAuth' ? account !== undefined : scheme === 'adminToken' ? admin : false);
    return requirements.some((requirement) => Object.keys(requirement).every(holds)) ? { account, admin } : undefined;
  }

  /**
   * The caller of a WebSocket operation, or the 401: the account of the key in the Basic
   * header or, from a browser (which cannot set headers on a WebSocket), in `?key=`.
   */
  async authenticateStream(request: AuthenticatedRequest, authorization: string | undefined, queryKey: string | undefined): Promise<Caller & { account: AccountRecord }> {
    const key = secretKeyFromHeader(authorization) ?? queryKey;
    const account = key ? await this.accounts.authenticate(key) : undefined;
    if (key) request.keyOwner = { account };
    if (!account) throw new HttpError(401, `${unauthorizedHint(authorization, false)}, or ?key=<secret key> from a browser`);
    const caller = { account, admin: false };
    request.caller = caller;
    return caller;
  }

  /** The caller, or the 401. */
  async authenticate(operation: SandboxOperation, request: AuthenticatedRequest, authorization: string | undefined): Promise<Caller> {
    const caller = await this.caller(operation, request, authorization);
    if (!caller) {
      const requirements = operation.security ?? [];
      const bearerAccepted = this.adminToken !== undefined && requirements.some((requirement) => 'adminToken' in requirement);
      if (bearerAccepted && !requirements.some((requirement) => 'basicAuth' in requirement)) {
        throw new HttpError(401, "this endpoint requires the sandbox's admin token: Authorization: Bearer <SANDBOX_ADMIN_TOKEN>");
      }
      throw new HttpError(401, unauthorizedHint(authorization, bearerAccepted));
    }
    request.caller = caller;
    return caller;
  }
}
