/** Mexico's CLABE (SPEI): bank (3) + plaza (3) + account (11) + check digit, 18 digits. */

const WEIGHTS = [3, 7, 1] as const;

/** Weights 3, 7, 1 repeated over the first 17 digits, each product mod 10, summed; (10 − sum mod 10) mod 10. */
export function clabeCheckDigit(first17: string): string {
  if (!/^\d{17}$/.test(first17)) throw new RangeError('a CLABE body is 17 digits');
  let sum = 0;
  for (let i = 0; i < 17; i++) sum += (Number(first17[i]) * (WEIGHTS[i % 3] ?? 1)) % 10;
  return String((10 - (sum % 10)) % 10);
}

export function isValidClabe(clabe: string): boolean {
  return /^\d{18}$/.test(clabe) && clabeCheckDigit(clabe.slice(0, 17)) === clabe.slice(17);
}

export function buildClabe(bank: string, plaza: string, account: string): string {
  if (!/^\d{3}$/.test(bank) || !/^\d{3}$/.test(plaza) || !/^\d{11}$/.test(account)) {
    throw new RangeError('a CLABE is bank (3 digits), plaza (3) and account (11)');
  }
  const body = bank + plaza + account;
  return body + clabeCheckDigit(body);
}

/**
 * The CLABE of a charge: STP (646), the SPEI participant fintechs use to give each charge
 * its own CLABE, plaza 180, and the transaction id as the account number, so no two
 * charges ever share one.
 */
export function chargeClabe(transactionId: string): string {
  if (!/^\d{1,11}$/.test(transactionId)) throw new RangeError(`transaction id ${transactionId} does not fit a CLABE account number`);
  return buildClabe(CHARGE_CLABE_BANK, '180', transactionId.padStart(11, '0'));
}

export const CHARGE_CLABE_BANK = '646';
export const CHARGE_CLABE_BANK_NAME = 'STP';
