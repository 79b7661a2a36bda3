// A purchase's card is checked and classified once, and the one outcome is both what admits a paid-at-creation charge and what the view shows.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AccountRecord } from '../../src/accounts/accounts.js';
import { domainKit, pixPurchase, type DomainKit } from '../helpers/domain.js';

const counted = vi.hoisted(() => ({ outcome: 0, luhn: 0 }));
vi.mock('../../src/transactions/test-cards.js', async (original) => {
  const actual = await original<typeof import('../../src/transactions/test-cards.js')>();
  return {
    ...actual,
    cardOutcome: (number: string) => {
      counted.outcome++;
      return actual.cardOutcome(number);
    },
    passesLuhn: (number: string) => {
      counted.luhn++;
      return actual.passesLuhn(number);
    },
  };
});

let kit: DomainKit;
let account: AccountRecord;
beforeEach(async () => {
  kit = await domainKit({});
  account = await kit.account();
  counted.outcome = 0;
  counted.luhn = 0;
});
afterEach(() => kit.close());

const card = (number: string) => pixPurchase({ paymentMethod: 'CREDIT_CARD', card: { number, holderName: 'MARIA', expirationMonth: 12, expirationYear: 2040, cvv: '123' } });

describe('a card purchase', () => {
  it.each([
    ['4111111111111111', 'APPROVED'],
    ['4000000000000002', 'BLOCKED'],
    ['4000000000000259', 'PENDING'],
  ])('%s is checked and classified once (%s)', async (number, status) => {
    const created = await kit.inUnit((u) => kit.transactions.create(u, account, card(number)));
    expect(created.view.status).toBe(status);
    expect(counted).toEqual({ outcome: 1, luhn: 1 });
  });
});
