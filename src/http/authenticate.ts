import type { AccountRecord, Accounts } from '../accounts/accounts.js';
import { bearerTokenMatches, secretKeyFromHeader } from '../accounts/accounts.js';
import { HttpError } from './errors.js';
import type { SandboxOperation } from './match.js';

/** Who called: the account of the key sent, and whether the sandbox's admin token came with it. */
export interface Caller {
  account: AccountRecord | undefined;
  /** The request carried the sandbox's admin token. */
  admin: boolean;
}

const UNAUTHORIZED = 'API key invalid or absent: send Authorization: Basic base64("secret:" + secretKey)';

/**
 * Stage 3, authenticate: the operation's security requirements, as OpenAPI defines them: any
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
    const account = key ? await this.accounts.authenticate(key) : undefined;
    const admin = this.adminToken !== undefined && bearerTokenMatches(authorization, this.adminToken);
    if (requirements.length === 0) return { account, admin };
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
