import { describe, expect, it } from 'vitest';
import { conflictHint } from '../../src/mock/answer.js';

describe("a mock 409's hint", () => {
  it('words the state found as the state machine does: a paid one for a call from PENDING, a pending one for a call from APPROVED', () => {
    expect(conflictHint({ conflict: 'pay' }, { id: '100000042' })).toBe('transaction 100000042 is APPROVED (paid by PIX); only a PENDING transaction can be paid');
    expect(conflictHint({ conflict: 'decline' }, {})).toBe('transaction 100000000 is APPROVED (paid by PIX); only a PENDING transaction can be declined');
    expect(conflictHint({ conflict: 'refund' }, { id: '7' })).toBe('transaction 7 is PENDING; only an APPROVED transaction can be refunded');
    expect(conflictHint({ conflict: 'chargeback' }, { id: '7' })).toBe('transaction 7 is PENDING; only an APPROVED transaction can be charged back');
  });

  it('is none for an operation that makes no transition', () => {
    expect(conflictHint(undefined, { id: '7' })).toBeUndefined();
    expect(conflictHint({ withdrawal: { status: 'WITHDRAW_APPROVED' } }, { id: '7' })).toBeUndefined();
  });
});
