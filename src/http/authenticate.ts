import type { AccountRecord, Accounts } from '../accounts/accounts.js';
import { bearerTokenMatches, secretKeyFromHeader } from '../accounts/accounts.js';
import { StoreUnavailable } from '../store/ports.js';
import { HttpError } from './errors.js';
import type { SandboxOperation } from './match.js';

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

const UNAUTHORIZED = 'API key invalid or absent: send Authorization: Basic base64("secret:" + secretKey)';

/**
 * Stage 5, authenticate: the operation's security requirements, as OpenAPI defines them: any
 * one requirement object must hold, and within it every scheme (`{}` needs nothing). A
 * scheme the sandbox does not implement never holds.
 */
export class Authenticator {
  constructor(
    private readonly accounts: Accounts,
    private readonly adminToken: string | undefined,
  ) {}

  /** The caller, or undefined when the credentials do not satisfy the operation. */
  async caller(operation: SandboxOperation, authorization: string | undefined): Promise<Caller | undefined> {
    const requirements = operation.security ?? [];
    const key = secretKeyFromHeader(authorization);
    // A key is looked up in the store (another instance may have created its account).
    const admin = this.adminToken !== undefined && bearerTokenMatches(authorization, this.adminToken);
    // An operation that needs no key (health) answers without the store: a key sent anyway names no account while it is away.
    if (requirements.length === 0) return { account: key ? await this.accounts.authenticate(key).catch(unlessUnavailable) : undefined, admin };
    const account = key ? await this.accounts.authenticate(key) : undefined;
    const holds = (scheme: string): boolean => (scheme === 'basicAuth' ? account !== undefined : scheme === 'adminToken' ? admin : false);
    return requirements.some((requirement) => Object.keys(requirement).every(holds)) ? { account, admin } : undefined;
  }

  /** The caller, or the 401. */
  async authenticate(operation: SandboxOperation, authorization: string | undefined): Promise<Caller> {
    const caller = await this.caller(operation, authorization);
    if (!caller) throw new HttpError(401, UNAUTHORIZED);
    return caller;
  }
}
