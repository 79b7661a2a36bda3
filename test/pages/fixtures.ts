import type { AccountRecord } from '../../src/accounts/accounts.js';
import type { Transaction } from '../../src/spec/types.js';
import type { PurchaseDetails, TransactionRecord } from '../../src/transactions/transaction-record.js';

export const account: AccountRecord = {
  id: 'acc_pages',
  accountId: '_sandbox',
  userId: 'usr_pages',
  name: 'Loja Exemplo',
  secretKey: 'sk_test_pages',
  keyHash: 'x',
  permissions: ['isInvoiceAvailable', 'createTransaction'],
  webhookUrl: null,
  webhookSecret: 'whsec',
  createdAt: '2026-07-01T12:00:00.000Z',
};

/** The payer-page token of the fixtures' records: their pages' forms and images carry it. */
export const PAYER_TOKEN = 'Fixture_Token-0123456789';

const base = {
  installments: null,
  externalId: 'order-1',
  status: 'PENDING',
  statusReason: null,
  postbackUrl: null,
  referrerUrl: null,
  expiresAt: null,
  createdAt: '2026-07-12T15:30:00.000Z',
  costFee: 0,
  approvedAt: null,
  endToEndId: null,
  payer: null,
} as const;

const baseDetails: PurchaseDetails = {
  name: 'Ana Gómez',
  email: 'ana@example.com',
  phone: '+573211234567',
  cpf: null,
  description: 'Plan mensual',
  responsibleDocument: '1020304050',
  responsibleExternalId: 'cust-1',
  boletoAddress: null,
  dueDate: null,
};

export type CopMethod = 'PSE' | 'NEQUI' | 'BREB' | 'BANK_TRANSFER';

export function copRecord(
  method: CopMethod,
  overrides: { status?: Transaction['status']; statusReason?: Transaction['statusReason']; details?: Partial<PurchaseDetails>; id?: string } = {},
): TransactionRecord {
  const id = overrides.id ?? '1000042';
  return {
    id,
    accountId: account.id,
    view: {
      ...base,
      id,
      transactionId: id,
      currency: 'COP',
      method,
      amount: 1_500_000,
      status: overrides.status ?? 'PENDING',
      statusReason: overrides.statusReason ?? null,
      redirectUrl: `http://localhost:4010/_sandbox/checkout/${id}?token=${PAYER_TOKEN}`,
    },
    details: { ...baseDetails, ...overrides.details },
    filledAt: 1,
    payerToken: PAYER_TOKEN,
  };
}

/** A BRL boleto kind before its instruction is filled, the way the creation handler stores it. */
export function brlPendingRecord(
  method: 'BOLETO' | 'PIX_BOLETO',
  overrides: { details?: Partial<PurchaseDetails>; id?: string; amount?: number } = {},
): TransactionRecord {
  const id = overrides.id ?? '1000077';
  return {
    id,
    accountId: account.id,
    view: {
      ...base,
      id,
      transactionId: id,
      currency: 'BRL',
      method,
      amount: overrides.amount ?? 123_456,
      ...(method === 'PIX_BOLETO' ? { pixCode: '' } : {}),
      paymentInstruction: {},
    },
    details: {
      ...baseDetails,
      name: 'João da Silva',
      phone: '11987654321',
      cpf: '52998224725',
      description: 'Assinatura anual',
      responsibleDocument: '11222333000181',
      boletoAddress: {
        address: 'Rua das Flores',
        number: '100',
        complement: 'Apto 12',
        district: 'Centro',
        city: 'São Paulo',
        zipCode: '01310100',
        uf: 'SP',
      },
      dueDate: '2026-07-15',
      ...overrides.details,
    },
    filledAt: null,
    payerToken: PAYER_TOKEN,
  };
}

export function withStatus(record: TransactionRecord, status: Transaction['status'], statusReason: Transaction['statusReason'] = null): TransactionRecord {
  return { ...record, view: { ...record.view, status, statusReason } as Transaction };
}
