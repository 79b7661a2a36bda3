import type { Unit } from '../store/ports.js';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Accounts } from '../accounts/accounts.js';
import { isDomainError, notFound } from '../errors.js';
import { owner, type AnyReply, type BytesReply, type RedirectReply } from '../http/call.js';
import { json, type EndpointTable } from '../http/endpoint.js';
import { HttpError } from '../http/errors.js';
import { statusOf } from '../http/map-errors.js';
import type { ApiRequest } from '../http/request.js';
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
/** What a payer page's call carries: the transaction id, and the link's token. */
export interface PageCall {
  req: ApiRequest;
  unit: Unit;
  params: { id: string };
  query: { token?: string; result?: string };
}

async function payerTransaction(s: PageServices, call: PageCall, kind?: Kind): Promise<Found> {
  const id = call.params.id;
  const record = await s.transactions.forPayer(id);
  if (!record || !tokenMatches(record, call.query.token)) {
    throw notFound(TRANSACTION_NOT_FOUND, `no transaction with id ${id} whose payer link has this token`);
  }
  if (kind && !KINDS[kind].has(record)) throw notFound(`transaction ${record.id} ${KINDS[kind].none}`);
  return { record: { ...record, payerToken: record.payerToken ?? '' }, merchant: (await s.accounts.get(call.unit, record.accountId))?.name ?? 'Sandbox merchant' };
}

/**
 * A payer page's answer with its headers; a payer's browser gets its 4xx as a page (an
 * HttpError carrying it, rendered by the error stage), while an API client (or a test)
 * asking for JSON, or for anything, keeps the JSON error the rest of the API answers with.
 */
function forPeople<R extends AnyReply>(handler: (call: PageCall, s: PageServices) => R | Promise<R>): (call: PageCall, s: PageServices) => Promise<R> {
  return async (call, s) => {
    try {
      const reply = await handler(call, s);
      const answered: AnyReply = reply;
      const document = 'bytes' in answered && answered.contentType === HTML ? String(answered.bytes) : undefined;
      return { ...reply, headers: { ...payerPageHeaders(document), ...answered.headers } };
    } catch (error) {
      const wantsHtml = call.req.accepts(['application/json', 'text/html']) === 'text/html';
      const status = statusOf(error);
      if (status >= 500 || !wantsHtml || !(error instanceof Error)) throw error;
      const language = call.req.path.startsWith('/_sandbox/checkout') || call.req.path.startsWith('/_sandbox/spei') ? 'es' : 'pt-BR';
      // A person reads the explanation; the short exact message is for clients that match on it.
      const page = renderErrorPage(status, isDomainError(error) && error.hint ? error.hint : error.message, language);
      throw new HttpError(status, error.message, { page: { contentType: HTML, bytes: page, headers: payerPageHeaders(page) } });
    }
  };
}

const htmlPage = (bytes: string): BytesReply<200> => ({ status: 200, contentType: HTML, bytes });
const redirect = (to: string): RedirectReply => ({ status: 303, redirect: to });

const resultOf = (call: PageCall): string | undefined => call.query.result;

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

/** A payer page's button: the transition it makes, then back to the page with its result. */
const decide = (kind: Kind, path: (id: string) => string, outcome: 'approved' | 'rejected', rail?: Rail) =>
  forPeople(async (call, s) => {
    const { record } = await payerTransaction(s, call, kind);
    // The buttons are the page's own forms: a page of another site must not press them for the payer.
    if (!s.shared.sameOrigin(call.req)) {
      const from = call.req.headers.origin ?? `a ${String(call.req.headers['sec-fetch-site'])} page`;
      throw new HttpError(403, `the payer page's buttons take POSTs from the page itself, not from ${from}`);
    }
    if (outcome === 'approved') await s.transitions.pay(call.unit, record.accountId, record.id, rail);
    else await s.transitions.decline(call.unit, record.accountId, record.id, { reason: 'REJECTED' });
    return redirect(`${withToken(path(record.id), record.payerToken)}&result=${outcome}`);
  });

/** The payer pages (the link's token instead of a key), their buttons, the Pix QR image, and the links' lookup. */
export const pageEndpoints = {
  getCheckoutPage: {
    handle: forPeople(async (call, s) => {
      const { record, merchant } = await payerTransaction(s, call, 'checkout');
      return htmlPage(renderCheckoutPage(record, merchant, resultOf(call)));
    }),
  },
  approveCheckout: { handle: decide('checkout', checkoutPath, 'approved') },
  rejectCheckout: { handle: decide('checkout', checkoutPath, 'rejected') },
  getBoletoPage: {
    handle: forPeople(async (call, s) => {
      const { record, merchant } = await payerTransaction(s, call, 'boleto');
      return htmlPage(renderBoletoPage(record, merchant, resultOf(call)));
    }),
  },
  approveBoleto: { handle: decide('boleto', boletoPath, 'approved', 'BOLETO') },
  rejectBoleto: { handle: decide('boleto', boletoPath, 'rejected') },
  getPixPage: {
    handle: forPeople(async (call, s) => {
      const { record, merchant } = await payerTransaction(s, call, 'pix');
      return htmlPage(renderPixPage(record, merchant, resultOf(call)));
    }),
  },
  approvePix: { handle: decide('pix', pixPagePath, 'approved', 'PIX') },
  rejectPix: { handle: decide('pix', pixPagePath, 'rejected') },
  getSpeiPage: {
    handle: forPeople(async (call, s) => {
      const { record, merchant } = await payerTransaction(s, call, 'spei');
      return htmlPage(renderSpeiPage(record, merchant, resultOf(call)));
    }),
  },
  approveSpei: { handle: decide('spei', speiPagePath, 'approved') },
  rejectSpei: { handle: decide('spei', speiPagePath, 'rejected') },
  getPixQr: {
    handle: async (call, s) => {
      const { record } = await payerTransaction(s, call);
      const code = 'pixCode' in record.view ? record.view.pixCode : undefined;
      if (!code) throw notFound(`transaction ${record.id} has no Pix code${code === '' ? ' yet' : ''}`);
      return { status: 200, contentType: 'image/png', bytes: await pixQrPng(code), headers: payerPageHeaders() };
    },
  },
  getPayerPages: {
    handle: async (call, s) => {
      const record = await s.transactions.withPayerToken(call.unit, await s.transactions.get(call.unit, owner(call), call.params.id));
      return json(200, pagesOf(record, s.publicUrl()));
    },
  },
} satisfies EndpointTable<PageServices>;
