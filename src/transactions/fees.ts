import { readFileSync } from 'node:fs';

/** A fee: basis points of the amount plus a fixed part, both in the currency's centavos. */
export interface Fee {
  percentBps: number;
  fixed: number;
}

export interface FeeTable {
  COP: Fee;
  ARS: Fee;
  BRL: { PIX: Fee; BOLETO: Fee; PIX_BOLETO: Fee; CREDIT_CARD: Fee };
  MXN: Fee;
  /** A Pix cash-out (`POST /withdraws/cash-out`): its `totalAmount` is amount + this fee. */
  CASH_OUT: Fee;
}

/**
 * The sandbox's default prices (documented in the README). COP has one fee for all four
 * methods: the spec says their responses differ only in `method`.
 */
export const DEFAULT_FEES: FeeTable = {
  COP: { percentBps: 299, fixed: 90_000 },
  ARS: { percentBps: 150, fixed: 0 },
  BRL: {
    PIX: { percentBps: 99, fixed: 0 },
    BOLETO: { percentBps: 0, fixed: 349 },
    PIX_BOLETO: { percentBps: 99, fixed: 0 },
    CREDIT_CARD: { percentBps: 399, fixed: 39 },
  },
  // SPEI providers charge a flat fee per transfer received.
  MXN: { percentBps: 0, fixed: 700 },
  CASH_OUT: { percentBps: 0, fixed: 100 },
};

/**
 * A charge's costFee, never more than its amount: a fixed fee larger than a small charge (R$ 3,49
 * on a R$ 1,00 boleto) would credit a negative amount when it is paid. The fee keeps what it
 * can, the charge nets 0, and no balance figure goes below zero for a payment.
 */
export function feeFor(table: FeeTable, currency: 'COP' | 'ARS' | 'BRL' | 'MXN', method: string, amount: number): number {
  const fee = currency === 'BRL' ? table.BRL[method as keyof FeeTable['BRL']] : table[currency];
  return Math.min(applyFee(fee, amount), amount);
}

export function cashOutFee(table: FeeTable, amount: number): number {
  return applyFee(table.CASH_OUT, amount);
}

const applyFee = (fee: Fee, amount: number): number => Math.round((amount * fee.percentBps) / 10_000) + fee.fixed;

const isFee = (v: unknown): v is Fee =>
  typeof v === 'object' && v !== null &&
  Number.isInteger((v as Fee).percentBps) && (v as Fee).percentBps >= 0 &&
  Number.isInteger((v as Fee).fixed) && (v as Fee).fixed >= 0;

/** Reads a JSON file that overrides any part of the default table; anything malformed is refused at start. */
export function loadFeeTable(path: string | undefined): FeeTable {
  if (!path) return DEFAULT_FEES;
  const override = JSON.parse(readFileSync(path, 'utf8')) as Partial<{ COP: unknown; ARS: unknown; MXN: unknown; CASH_OUT: unknown; BRL: Record<string, unknown> }>;
  const table: FeeTable = structuredClone(DEFAULT_FEES);
  for (const currency of ['COP', 'ARS', 'MXN', 'CASH_OUT'] as const) {
    const fee = override[currency];
    if (fee === undefined) continue;
    if (!isFee(fee)) throw new Error(`fee table ${path}: ${currency} must be {percentBps, fixed} with non-negative integers`);
    table[currency] = fee;
  }
  for (const [method, fee] of Object.entries(override.BRL ?? {})) {
    if (!(method in table.BRL) || !isFee(fee)) throw new Error(`fee table ${path}: BRL.${method} must be a known method with {percentBps, fixed}`);
    table.BRL[method as keyof FeeTable['BRL']] = fee;
  }
  return table;
}
