// @ts-check
import { readFileSync } from 'node:fs';
/**
 * The fixed reply of both baselines: a product as POST /v2/products answers
 * it, so every server under test sends a body of the same size.
 */
export const FIXED_PRODUCT = JSON.stringify({
  id: 'prd_3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70',
  createdByUserId: 'usr_0b9f3c52-6c1e-4d2a-9f5e-7a8b9c0d1e2f',
  name: 'bench 0123456789abcdef',
  description: null,
  imageUrl: null,
  externalId: null,
  active: true,
  metadata: {},
  deletedAt: null,
  createdAt: '2026-01-31T12:00:00.000Z',
  updatedAt: '2026-01-31T12:00:00.000Z',
});

/** @param {string[]} argv */
export function portArg(argv) {
  const i = argv.indexOf('--port');
  const port = Number(i >= 0 ? argv[i + 1] : NaN);
  if (!Number.isInteger(port) || port <= 0) throw new Error('usage: --port <port>');
  return port;
}

/**
 * The fixed replies of the baselines and stubs in the transactions suite when the sandbox's own
 * answers could not be captured at the start of the run (see transactionReplies): a BRL Pix
 * charge as POST /transactions/v2/purchase answered it (PENDING, instruction not filled yet) and
 * as GET /transactions/:id answered it once filled, before the QR image and payer fields.
 */
const PURCHASE = {
  id: '100000000',
  currency: 'BRL',
  method: 'PIX',
  installments: null,
  externalId: null,
  status: 'PENDING',
  amount: 15000,
  postbackUrl: null,
  referrerUrl: null,
  expiresAt: null,
  createdAt: '2026-01-31T12:00:00.000Z',
  costFee: 149,
  paidAt: null,
  pixCode: '',
  paidRail: null,
};
export const FIXED_PURCHASE = JSON.stringify(PURCHASE);
export const FIXED_TRANSACTION = JSON.stringify({
  ...PURCHASE,
  pixCode:
    '00020126580014br.gov.bcb.pix01363de12b26-3bac-4a92-a131-662026b11e035204000053039865406150.005802BR5915Default account6009SAO PAULO62160512SBX100000000630424E3',
});

/** @param {string[]} argv @param {string} name @returns {string | undefined} */
export function stringArg(argv, name) {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}

/**
 * What POST /_sandbox/transactions/:id/pay answers (200): the Pix charge APPROVED, with its payer
 * and the QR code image of its pixCode (base64 PNG, 1,216 characters here: a stand-in of that
 * length), 1,917 bytes like the sandbox's; the node:http baseline's fixed reply to a pay.
 */
export const FIXED_PAID = JSON.stringify({
  id: '100000000',
  transactionId: '100000000',
  currency: 'BRL',
  method: 'PIX',
  installments: null,
  externalId: null,
  status: 'APPROVED',
  statusReason: null,
  amount: 15000,
  postbackUrl: null,
  referrerUrl: null,
  expiresAt: '2026-02-01T12:00:00.000Z',
  createdAt: '2026-01-31T12:00:00.000Z',
  costFee: 149,
  approvedAt: '2026-01-31T12:00:00.193Z',
  endToEndId: 'E90400888202601311200kQ3b90XIlq9',
  payer: { name: 'Maria Silva', document: '52998224725', bank: 'BCO SANTANDER (BRASIL) S.A.', ispb: '90400888' },
  pixCode: JSON.parse(FIXED_TRANSACTION).pixCode,
  paidRail: 'PIX',
  qrCode: `iVBORw0KGgo${'A'.repeat(1216 - 11)}`,
});

/**
 * @typedef {{ purchase: string, transaction: string, paid: string }} TransactionReplies the JSON
 *   texts of a purchase's 201, a GET of it and its pay's 200
 */

/** @type {TransactionReplies} */
export const FIXED_TRANSACTION_REPLIES = { purchase: FIXED_PURCHASE, transaction: FIXED_TRANSACTION, paid: FIXED_PAID };

/**
 * The transactions suite captures the sandbox's own answers at the start of a run (their fields
 * and sizes change with the sandbox: a QR image was added to them) and hands them to the
 * baselines with `--replies <file>`; without it, the constants above.
 * @param {string[]} argv
 * @returns {TransactionReplies}
 */
export function transactionReplies(argv) {
  const file = stringArg(argv, '--replies');
  return file ? JSON.parse(readFileSync(file, 'utf8')) : FIXED_TRANSACTION_REPLIES;
}
