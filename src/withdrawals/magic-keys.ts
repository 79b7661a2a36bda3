import type { PixType } from '../spec/types.js';

/**
 * What happens to a withdrawal, decided by its Pix key like a test card decides a payment:
 * `closed` is refused at request (no account behind the key); the others are accepted and
 * end as their name says; any key not in the table is paid out (`approve`).
 */
export type WithdrawalOutcome = 'approve' | 'reject' | 'fail' | 'return' | 'closed';

/**
 * The magic keys, one per outcome and key type, by the digit before the check digits (CPF,
 * CNPJ) or the last digit (PHONE, EVP): 2 rejected, 3 error, 4 returned, 5 closed. All are
 * valid keys of their type. Listed in docs/api.md (Magic Pix keys).
 */
export const MAGIC_KEYS: Readonly<Record<Exclude<WithdrawalOutcome, 'approve'>, Readonly<Record<PixType, string>>>> = {
  reject: { CPF: '00000000272', CNPJ: '00000000000272', PHONE: '+5511900000002', EMAIL: 'reject@example.com', EVP: '00000000-0000-4000-8000-000000000002' },
  fail: { CPF: '00000000353', CNPJ: '00000000000353', PHONE: '+5511900000003', EMAIL: 'error@example.com', EVP: '00000000-0000-4000-8000-000000000003' },
  return: { CPF: '00000000434', CNPJ: '00000000000434', PHONE: '+5511900000004', EMAIL: 'return@example.com', EVP: '00000000-0000-4000-8000-000000000004' },
  closed: { CPF: '00000000515', CNPJ: '00000000000515', PHONE: '+5511900000005', EMAIL: 'closed@example.com', EVP: '00000000-0000-4000-8000-000000000005' },
};

/** The outcome of a normalized key (e-mails compared without case). */
export function outcomeOfKey(type: PixType, normalizedKey: string): WithdrawalOutcome {
  const key = type === 'EMAIL' ? normalizedKey.toLowerCase() : normalizedKey;
  for (const [outcome, keys] of Object.entries(MAGIC_KEYS) as [Exclude<WithdrawalOutcome, 'approve'>, Record<PixType, string>][]) {
    if (keys[type] === key) return outcome;
  }
  return 'approve';
}

/** The `error` / `error_message` of each unhappy end, unless a control call gives its own. */
export const DEFAULT_MESSAGES = {
  reject: 'Rejected by the receiving institution: account blocked',
  fail: 'Pix network error: the settlement did not complete',
  return: 'Returned by the receiving institution',
} as const;
