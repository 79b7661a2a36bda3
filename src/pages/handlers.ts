import type { Accounts } from '../accounts/accounts.js';
import { isDomainError, notFound } from '../errors.js';
import { HttpError } from '../http/errors.js';
import { DOMAIN_STATUS, type Call, type Handlers, type Reply } from '../http/router.js';
import type { TransactionRecord } from '../transactions/transaction-record.js';
import { TRANSACTION_NOT_FOUND, type Transactions } from '../transactions/transactions.js';
import type { Rail, Transitions } from '../transactions/transitions.js';
import { renderBoletoPage } from './boleto-page.js';
import { renderCheckoutPage } from './checkout-page.js';
import { renderErrorPage } from './error-page.js';
import { boletoPath, checkoutPath, pixPagePath } from './paths.js';
import { renderPixPage } from './pix-page.js';
import { pixQrPng } from './pix-qr.js';
import { renderSpeiPage, speiPagePath } from './spei-page.js';

export interface PageServices {
  accounts: Accounts;
  transactions: Transactions;
  transitions: Transitions;
}

const HTML = 'text/html; charset=utf-8';

interface Found {
  record: TransactionRecord;
  merchant: string;
}

/** Which payer page a transaction has; the others are 404, as a link of the wrong kind names nothing. */
const KINDS = {
  checkout: { has: (r: TransactionRecord) => r.view.currency === 'COP', none: 'has no checkout page (only COP does)' },
  boleto: { has: (r: TransactionRecord) => r.view.method === 'BOLETO' || r.view.method === 'PIX_BOLETO', none: 'has no boleto' },
  pix: { has: (r: TransactionRecord) => r.view.method === 'PIX' || r.view.method === 'PIX_BOLETO', none: 'has no Pix' },
  spei: { has: (r: TransactionRecord) => r.view.currency === 'MXN', none: 'has no SPEI page (only MXN does)' },
} as const;

/** Payer pages carry no key: the transaction id in the URL is what the payer was given. */
function payerTransaction(s: PageServices, id: string, kind?: keyof typeof KINDS): Found {
  const record = s.transactions.records.get(id);
  if (!record) throw notFound(TRANSACTION_NOT_FOUND, `no transaction with id ${id}`);
  if (kind && !KINDS[kind].has(record)) throw notFound(`transaction ${record.id} ${KINDS[kind].none}`);
  return { record, merchant: s.accounts.get(record.accountId)?.name ?? 'Sandbox merchant' };
}

/**
 * A payer's browser gets its 4xx as a page; an API client (or a test) asking for JSON, or for
 * anything, keeps the JSON error the rest of the API answers with.
 */
function forPeople(handler: (call: Call) => Reply | Promise<Reply>): (call: Call) => Promise<Reply> {
  return async (call) => {
    try {
      return await handler(call);
    } catch (error) {
      const wantsHtml = call.req.accepts(['application/json', 'text/html']) === 'text/html';
      const status = error instanceof HttpError ? error.status : isDomainError(error) ? DOMAIN_STATUS[error.code] : 500;
      if (status >= 500 || !wantsHtml || !(error instanceof Error)) throw error;
      return { status, contentType: HTML, bytes: renderErrorPage(status, error.message) };
    }
  };
}

const resultOf = (call: Call): string | undefined => (typeof call.query.result === 'string' ? call.query.result : undefined);

export function createPageHandlers(s: PageServices): Handlers {
  const id = (call: Call): string => String(call.params.id);
  const decide = (kind: keyof typeof KINDS, path: (id: string) => string, outcome: 'approved' | 'rejected', rail?: Rail) =>
    forPeople((call) => {
      const { record } = payerTransaction(s, id(call), kind);
      if (outcome === 'approved') s.transitions.pay(record.accountId, record.id, rail);
      else s.transitions.decline(record.accountId, record.id, { reason: 'REJECTED' });
      return { status: 303, redirect: `${path(record.id)}?result=${outcome}` };
    });
  return {
    getCheckoutPage: forPeople((call) => {
      const { record, merchant } = payerTransaction(s, id(call), 'checkout');
      return { status: 200, contentType: HTML, bytes: renderCheckoutPage(record, merchant, resultOf(call)) };
    }),
    approveCheckout: decide('checkout', checkoutPath, 'approved'),
    rejectCheckout: decide('checkout', checkoutPath, 'rejected'),
    getBoletoPage: forPeople((call) => {
      const { record, merchant } = payerTransaction(s, id(call), 'boleto');
      return { status: 200, contentType: HTML, bytes: renderBoletoPage(record, merchant, resultOf(call)) };
    }),
    approveBoleto: decide('boleto', boletoPath, 'approved', 'BOLETO'),
    rejectBoleto: decide('boleto', boletoPath, 'rejected'),
    getPixPage: forPeople((call) => {
      const { record, merchant } = payerTransaction(s, id(call), 'pix');
      return { status: 200, contentType: HTML, bytes: renderPixPage(record, merchant, resultOf(call)) };
    }),
    approvePix: decide('pix', pixPagePath, 'approved', 'PIX'),
    rejectPix: decide('pix', pixPagePath, 'rejected'),
    getSpeiPage: forPeople((call) => {
      const { record, merchant } = payerTransaction(s, id(call), 'spei');
      return { status: 200, contentType: HTML, bytes: renderSpeiPage(record, merchant, resultOf(call)) };
    }),
    approveSpei: decide('spei', speiPagePath, 'approved'),
    rejectSpei: decide('spei', speiPagePath, 'rejected'),
    getPixQr: async (call) => {
      const { record } = payerTransaction(s, id(call));
      const code = 'pixCode' in record.view ? record.view.pixCode : undefined;
      if (!code) throw notFound(`transaction ${record.id} has no Pix code${code === '' ? ' yet' : ''}`);
      return { status: 200, contentType: 'image/png', bytes: await pixQrPng(code) };
    },
  };
}
