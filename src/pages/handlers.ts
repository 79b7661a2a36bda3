import { createHash, timingSafeEqual } from 'node:crypto';
import type { Accounts } from '../accounts/accounts.js';
import { isDomainError, notFound } from '../errors.js';
import { HttpError } from '../http/errors.js';
import { DOMAIN_STATUS, owner, type Call, type Handlers, type Reply } from '../http/router.js';
import type { SharedUse } from '../http/shared-use.js';
import type { TransactionRecord } from '../transactions/transaction-record.js';
import { TRANSACTION_NOT_FOUND, type Transactions } from '../transactions/transactions.js';
import type { Rail, Transitions } from '../transactions/transitions.js';
import { renderBoletoPage } from './boleto-page.js';
import { renderCheckoutPage } from './checkout-page.js';
import { renderErrorPage } from './error-page.js';
import { payerPageHeaders } from './layout.js';
import { actionPath, boletoPath, checkoutPath, pixPagePath, pixQrPath, withToken } from './paths.js';
import { renderPixPage } from './pix-page.js';
import { pixQrPng } from './pix-qr.js';
import { renderSpeiPage, speiPagePath } from './spei-page.js';

export interface PageServices {
  accounts: Accounts;
  transactions: Transactions;
  transitions: Transitions;
  /** Whether a button's POST comes from the page itself (src/http/shared-use.ts). */
  shared: SharedUse;
  /** Base of the absolute links the owner is given (SANDBOX_PUBLIC_URL). */
  publicUrl: () => string;
}

const HTML = 'text/html; charset=utf-8';

interface Found {
  record: TransactionRecord & { payerToken: string };
  merchant: string;
}

/** Which payer page a transaction has; the others are 404, as a link of the wrong kind names nothing. */
const KINDS = {
  checkout: { has: (r: TransactionRecord) => r.view.currency === 'COP', none: 'has no checkout page (only COP does)' },
  boleto: { has: (r: TransactionRecord) => r.view.method === 'BOLETO' || r.view.method === 'PIX_BOLETO', none: 'has no boleto' },
  pix: { has: (r: TransactionRecord) => r.view.method === 'PIX' || r.view.method === 'PIX_BOLETO', none: 'has no Pix' },
  spei: { has: (r: TransactionRecord) => r.view.currency === 'MXN', none: 'has no SPEI page (only MXN does)' },
} as const;
type Kind = keyof typeof KINDS;

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/** Compared in constant time, as keys are: a token is a key to one transaction's pages. */
function tokenMatches(record: TransactionRecord, token: unknown): boolean {
  if (typeof token !== 'string' || token === '' || record.payerToken === undefined) return false;
  return timingSafeEqual(digest(token), digest(record.payerToken));
}

/**
 * Payer pages carry no key: the link's token is what the payer was given. Without it, or with
 * another transaction's, the page answers exactly as an unknown id does, so nothing tells
 * whether the id exists.
 */
function payerTransaction(s: PageServices, call: Call, kind?: Kind): Found {
  const id = String(call.params.id);
  const record = s.transactions.records.get(id);
  if (!record || !tokenMatches(record, call.query.token)) {
    throw notFound(TRANSACTION_NOT_FOUND, `no transaction with id ${id} whose payer link has this token`);
  }
  if (kind && !KINDS[kind].has(record)) throw notFound(`transaction ${record.id} ${KINDS[kind].none}`);
  return { record: { ...record, payerToken: record.payerToken ?? '' }, merchant: s.accounts.get(record.accountId)?.name ?? 'Sandbox merchant' };
}

/**
 * A payer page's answer with its headers; a payer's browser gets its 4xx as a page, while an API
 * client (or a test) asking for JSON, or for anything, keeps the JSON error the rest of the API
 * answers with.
 */
function forPeople(handler: (call: Call) => Reply | Promise<Reply>): (call: Call) => Promise<Reply> {
  return async (call) => {
    try {
      const reply = await handler(call);
      const document = 'bytes' in reply && reply.contentType === HTML ? String(reply.bytes) : undefined;
      return { ...reply, headers: { ...payerPageHeaders(document), ...reply.headers } };
    } catch (error) {
      const wantsHtml = call.req.accepts(['application/json', 'text/html']) === 'text/html';
      const status = error instanceof HttpError ? error.status : isDomainError(error) ? DOMAIN_STATUS[error.code] : 500;
      if (status >= 500 || !wantsHtml || !(error instanceof Error)) throw error;
      const language = call.req.path.startsWith('/_sandbox/checkout') || call.req.path.startsWith('/_sandbox/spei') ? 'es' : 'pt-BR';
      // A person reads the explanation; the short exact message is for clients that match on it.
      const page = renderErrorPage(status, isDomainError(error) && error.hint ? error.hint : error.message, language);
      return { status, contentType: HTML, bytes: page, headers: payerPageHeaders(page) };
    }
  };
}

const resultOf = (call: Call): string | undefined => (typeof call.query.result === 'string' ? call.query.result : undefined);

/** The links of a transaction's payer pages, each with its token: what its owner hands the payer. */
function pagesOf(record: TransactionRecord & { payerToken: string }, base: string) {
  const page = (path: string) => ({
    url: `${base}${withToken(path, record.payerToken)}`,
    approveUrl: `${base}${actionPath(path, 'approve', record.payerToken)}`,
    rejectUrl: `${base}${actionPath(path, 'reject', record.payerToken)}`,
  });
  return {
    token: record.payerToken,
    checkout: KINDS.checkout.has(record) ? page(checkoutPath(record.id)) : null,
    boleto: KINDS.boleto.has(record) ? page(boletoPath(record.id)) : null,
    pix: KINDS.pix.has(record) ? { ...page(pixPagePath(record.id)), qrUrl: `${base}${withToken(pixQrPath(record.id), record.payerToken)}` } : null,
    spei: KINDS.spei.has(record) ? page(speiPagePath(record.id)) : null,
  };
}

export function createPageHandlers(s: PageServices): Handlers {
  const decide = (kind: Kind, path: (id: string) => string, outcome: 'approved' | 'rejected', rail?: Rail) =>
    forPeople((call) => {
      const { record } = payerTransaction(s, call, kind);
      // The buttons are the page's own forms: a page of another site must not press them for the payer.
      if (!s.shared.sameOrigin(call.req)) {
        const from = call.req.headers.origin ?? `a ${String(call.req.headers['sec-fetch-site'])} page`;
        throw new HttpError(403, `the payer page's buttons take POSTs from the page itself, not from ${from}`);
      }
      if (outcome === 'approved') s.transitions.pay(record.accountId, record.id, rail);
      else s.transitions.decline(record.accountId, record.id, { reason: 'REJECTED' });
      return { status: 303, redirect: `${withToken(path(record.id), record.payerToken)}&result=${outcome}` };
    });
  return {
    getCheckoutPage: forPeople((call) => {
      const { record, merchant } = payerTransaction(s, call, 'checkout');
      return { status: 200, contentType: HTML, bytes: renderCheckoutPage(record, merchant, resultOf(call)) };
    }),
    approveCheckout: decide('checkout', checkoutPath, 'approved'),
    rejectCheckout: decide('checkout', checkoutPath, 'rejected'),
    getBoletoPage: forPeople((call) => {
      const { record, merchant } = payerTransaction(s, call, 'boleto');
      return { status: 200, contentType: HTML, bytes: renderBoletoPage(record, merchant, resultOf(call)) };
    }),
    approveBoleto: decide('boleto', boletoPath, 'approved', 'BOLETO'),
    rejectBoleto: decide('boleto', boletoPath, 'rejected'),
    getPixPage: forPeople((call) => {
      const { record, merchant } = payerTransaction(s, call, 'pix');
      return { status: 200, contentType: HTML, bytes: renderPixPage(record, merchant, resultOf(call)) };
    }),
    approvePix: decide('pix', pixPagePath, 'approved', 'PIX'),
    rejectPix: decide('pix', pixPagePath, 'rejected'),
    getSpeiPage: forPeople((call) => {
      const { record, merchant } = payerTransaction(s, call, 'spei');
      return { status: 200, contentType: HTML, bytes: renderSpeiPage(record, merchant, resultOf(call)) };
    }),
    approveSpei: decide('spei', speiPagePath, 'approved'),
    rejectSpei: decide('spei', speiPagePath, 'rejected'),
    getPixQr: async (call) => {
      const { record } = payerTransaction(s, call);
      const code = 'pixCode' in record.view ? record.view.pixCode : undefined;
      if (!code) throw notFound(`transaction ${record.id} has no Pix code${code === '' ? ' yet' : ''}`);
      return { status: 200, contentType: 'image/png', bytes: await pixQrPng(code), headers: payerPageHeaders() };
    },
    getPayerPages: (call) => {
      const record = s.transactions.withPayerToken(s.transactions.get(owner(call), String(call.params.id)));
      return { status: 200, json: pagesOf(record, s.publicUrl()) };
    },
  };
}
