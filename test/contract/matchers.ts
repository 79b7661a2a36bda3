import { fileURLToPath } from 'node:url';
import { MatchersV3 as M } from '@pact-foundation/pact';
import { authorization } from './merchant-client.js';

/**
 * What the consumer pacts expect of generated values: shapes (regexes, types, timestamps),
 * never the literal values one run of the sandbox happened to produce. The examples are real
 * outputs of the sandbox, so that the mock server answers the merchant client realistically.
 */

export const PACT_DIR = fileURLToPath(new URL('../../pacts/', import.meta.url));
export const PROVIDER = 'payments-api';

/** The key the consumer sends; the verifier swaps it for a real key of the account it set up. */
export const PLACEHOLDER_KEY = 'sk_test_placeholder';
/** A key that is no account's: the 401 interactions. */
export const INVALID_KEY = 'sk_test_revoked';

export const authHeader = (key = PLACEHOLDER_KEY) => ({ Authorization: M.regex('^Basic [A-Za-z0-9+/]+=*$', authorization(key)) });
export const jsonHeaders = (key = PLACEHOLDER_KEY) => ({ ...authHeader(key), 'Content-Type': 'application/json' });

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}';
export const EXAMPLE_PRODUCT_ID = 'prd_3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70';
/** Well-formed, never created. */
export const UNKNOWN_PRODUCT_ID = 'prd_00000000-0000-4000-8000-000000000000';

export const productId = () => M.regex(`^prd_${UUID}$`, EXAMPLE_PRODUCT_ID);
export const offerId = () => M.regex(`^ofr_${UUID}$`, 'ofr_8a3e6c1d-2b4f-4e5a-9c7d-0f1e2d3c4b5a');
export const userId = () => M.regex('^usr_[0-9a-f-]{36}$', 'usr_9e9ddd09-1467-4f70-9dd4-17b416afa77f');
/** ISO 8601 UTC with milliseconds, as every timestamp of the API. */
export const timestamp = (example = '2026-01-31T12:00:00.000Z') => M.datetime("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", example);

export const transactionId = () => M.regex('^[0-9]+$', '100000000');
export const url = (example: string) => M.regex('^https?://\\S+$', example);
/** A static Pix BR Code: payload format 01, … , CRC-16 in field 63. */
export const pixCode = () =>
  M.regex(
    '^000201.+6304[0-9A-F]{4}$',
    '00020126580014br.gov.bcb.pix01363de12b26-3bac-4a92-a131-662026b11e035204000053039865406150.005802BR5915Default account6009SAO PAULO62160512SBX10000000263046060',
  );
export const boletoBarcode = () => M.regex('^[0-9]{44}$', '34191164000000150001090000000000000100000002');
export const boletoDigitableLine = () => M.regex('^[0-9]{47}$', '34191090080000000000001000000024116400000015000');
export const cvu = () => M.regex('^[0-9]{22}$', '0003780601974995950268');
export const cuit = () => M.regex('^[0-9]{11}$', '34583928091');
/** The Pix QR as a base64 PNG, no `data:` prefix (a PNG's base64 starts iVBORw0KGgo). */
export const qrCode = () => M.regex('^iVBORw0KGgo[A-Za-z0-9+/]*={0,2}$', 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==');
export const endToEndId = () => M.regex('^E[0-9]{8}[0-9]{12}[A-Za-z0-9]{11}$', 'E18236120202611211530aB3dE5fG7hJ');
export const withdrawalId = () => M.regex(`^${UUID}$`, '7c9e6679-7425-40de-944b-e07fc1f90ae7');
/** An 18-digit CLABE (SPEI), the sandbox's STP 646 / plaza 180 one as the example. */
export const clabe = () => M.regex('^[0-9]{18}$', '646180001000000105');
/** An exact text integrations match on: the same string, nothing else. */
export const exactError = (statusCode: number, message: string, error: string) => ({ statusCode, message, error });

/** 401 and 403 say exactly these words, which integrations match (the explanation is in x-sandbox-hint). */
const AUTH_WORD: Partial<Record<number, string>> = { 401: 'Unauthorized', 403: 'Forbidden' };

/** `{status, error}` of the product endpoints; `error` names what is wrong (401/403: exactly the word). */
export const productError = (status: number, mentions?: string) => ({ status, error: AUTH_WORD[status] ?? (mentions ? M.includes(mentions) : M.string('not allowed')) });

/** `{statusCode, message, error}` of the transaction endpoints (no `error` for 401 and 403, whose message is exactly the word). */
export const transactionError = (statusCode: number, mentions?: string) => {
  const message = AUTH_WORD[statusCode] ?? (mentions ? M.includes(mentions) : M.string('not found'));
  if (statusCode === 401 || statusCode === 403) return { statusCode, message };
  return { statusCode, message, error: M.string(statusCode === 404 ? 'Not Found' : 'Bad Request') };
};

export { M };
