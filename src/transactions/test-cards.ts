/** What a sandbox card number does, like the test cards of other PSP sandboxes. */
export interface CardOutcome {
  status: 'APPROVED' | 'BLOCKED' | 'PENDING';
  declineReason: string | null;
}

export const TEST_CARDS: Record<string, CardOutcome & { description: string }> = {
  '4111111111111111': { status: 'APPROVED', declineReason: null, description: 'Visa, approved at once' },
  '5555555555554444': { status: 'APPROVED', declineReason: null, description: 'Mastercard, approved at once' },
  '4000000000000002': { status: 'BLOCKED', declineReason: 'card_declined', description: 'declined by the issuer' },
  '4000000000009995': { status: 'BLOCKED', declineReason: 'insufficient_funds', description: 'declined: insufficient funds' },
  '4000000000000069': { status: 'BLOCKED', declineReason: 'expired_card', description: 'declined: expired card' },
  '4000000000000127': { status: 'BLOCKED', declineReason: 'incorrect_cvc', description: 'declined: incorrect CVV' },
  '4000000000000119': { status: 'BLOCKED', declineReason: 'processing_error', description: 'declined: processing error' },
  '4000000000000259': { status: 'PENDING', declineReason: null, description: 'held for review: stays PENDING until paid or expired through the control API' },
};

/** Any other number that passes the Luhn check is approved. */
export function cardOutcome(number: string): CardOutcome {
  const known = TEST_CARDS[number];
  return known ? { status: known.status, declineReason: known.declineReason } : { status: 'APPROVED', declineReason: null };
}

export function passesLuhn(number: string): boolean {
  let sum = 0;
  for (let i = 0; i < number.length; i++) {
    let digit = Number(number[number.length - 1 - i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return number.length > 0 && sum % 10 === 0;
}

export function cardBrand(number: string): string {
  if (/^4/.test(number)) return 'visa';
  if (/^(5[1-5]|2[2-7])/.test(number)) return 'mastercard';
  if (/^3[47]/.test(number)) return 'amex';
  if (/^(636368|438935|504175|451416|636297|5067|4576|4011)/.test(number)) return 'elo';
  if (/^(606282|3841)/.test(number)) return 'hipercard';
  return 'unknown';
}
