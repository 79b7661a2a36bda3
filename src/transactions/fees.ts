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
};

export function feeFor(table: FeeTable, currency: 'COP' | 'ARS' | 'BRL', method: string, amount: number): number {
  const fee = currency === 'BRL' ? table.BRL[method as keyof FeeTable['BRL']] : table[currency];
  return Math.round((amount * fee.percentBps) / 10_000) + fee.fixed;
}

const isFee = (v: unknown): v is Fee =>
  typeof v === 'object' && v !== null &&
  Number.isInteger((v as Fee).percentBps) && (v as Fee).percentBps >= 0 &&
  Number.isInteger((v as Fee).fixed) && (v as Fee).fixed >= 0;

/** Reads a JSON file that overrides any part of the default table; anything malformed is refused at start. */
export function loadFeeTable(path: string | undefined): FeeTable {
  if (!path) return DEFAULT_FEES;
  const override = JSON.parse(readFileSync(path, 'utf8')) as Partial<{ COP: unknown; ARS: unknown; BRL: Record<string, unknown> }>;
  const table: FeeTable = structuredClone(DEFAULT_FEES);
  for (const currency of ['COP', 'ARS'] as const) {
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
