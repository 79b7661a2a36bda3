/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import { describe, type Answer } from './api.js';
import type { View } from './context.js';
import { h, replaceChildren, type Child } from './dom.js';
import type { Tx } from './state.js';

/**
 * "New purchase": POST /transactions/v2/purchase from a form, as a dashboard's "create payment"
 * does, prefilled with test data the sandbox accepts, so one click makes a charge to try the
 * actions on. The request it sends is shown, to copy into code.
 */

type Currency = 'BRL' | 'COP' | 'ARS' | 'MXN';

/** The methods each currency takes (openapi.yaml's *PurchaseRules; a test keeps them equal), its default first. */
export const CONSOLE_METHODS: Readonly<Record<Currency, readonly string[]>> = {
  BRL: ['PIX', 'BOLETO', 'PIX_BOLETO', 'CREDIT_CARD'],
  COP: ['PSE', 'BANK_TRANSFER', 'NEQUI', 'BREB'],
  ARS: ['BANK_TRANSFER'],
  MXN: ['SPEI'],
};

/** Test data per currency, in the formats the purchase rules ask for (the README's examples). */
export const CONSOLE_DEFAULTS: Readonly<Record<Currency, { amount: string; name: string; email: string; phone: string; cpf: string; responsibleDocument: string }>> = {
  BRL: { amount: '150.00', name: 'Maria Silva', email: 'maria@example.com', phone: '11987654321', cpf: '52998224725', responsibleDocument: '11222333000181' },
  COP: { amount: '15000.00', name: 'Juan Pérez', email: 'juan@example.com', phone: '+573211234567', cpf: '', responsibleDocument: '1020304050' },
  ARS: { amount: '2500.00', name: 'Ana Gómez', email: 'ana@example.com', phone: '', cpf: '', responsibleDocument: '20055361682' },
  // A Mexican payer; the responsible document is the merchant's RFC (the SAT's generic one).
  MXN: { amount: '250.00', name: 'Sofía Hernández', email: 'sofia@example.com', phone: '+525512345678', cpf: '', responsibleDocument: 'XAXX010101000' },
};

/** What the responsible document is in each currency, as the purchase rules say. */
const DOCUMENT_HINTS: Readonly<Record<Currency, string>> = {
  BRL: "the merchant's CPF or CNPJ",
  COP: "the payer's CC, NIT, CE or TI",
  ARS: 'a CPF (11 digits) or CNPJ (14)',
  MXN: "the merchant's RFC (12 or 13 characters) or CPF/CNPJ",
};

/** Phone rules per currency: required where the service requires it. */
const PHONE_HINTS: Readonly<Record<Currency, string>> = {
  BRL: '8 to 12 digits',
  COP: 'with the country code, e.g. +573211234567',
  ARS: 'optional',
  MXN: 'optional: 8 to 12 digits, or +52 and 10 digits',
};

/** The README's test cards (src/transactions/test-cards.ts; a test keeps the two lists equal). */
export const CONSOLE_TEST_CARDS: readonly [string, string][] = [
  ['4111 1111 1111 1111', 'Visa: approved'],
  ['5555 5555 5555 4444', 'Mastercard: approved'],
  ['4000 0000 0000 0002', 'declined (card_declined)'],
  ['4000 0000 0000 9995', 'declined (insufficient_funds)'],
  ['4000 0000 0000 0069', 'declined (expired_card)'],
  ['4000 0000 0000 0127', 'declined (incorrect_cvc)'],
  ['4000 0000 0000 0119', 'declined (processing_error)'],
  ['4000 0000 0000 0259', 'held for review (PENDING)'],
];

const BOLETO_ADDRESS = { address: 'Rua Augusta', number: '1200', district: 'Consolação', city: 'São Paulo', zipCode: '01304001', uf: 'SP' };

/** "150,00" or "150.00" → 15000 centavos; undefined when it is not an amount. */
export function centavosOf(text: string): number | undefined {
  const match = /^\s*(\d{1,13})(?:[.,](\d{1,2}))?\s*$/.exec(text);
  if (!match) return undefined;
  return Number(match[1]) * 100 + Number((match[2] ?? '0').padEnd(2, '0'));
}

export const newPurchaseView: View = (ctx) => {
  const field = (id: string, label: string, control: HTMLElement, hint?: string | HTMLElement): HTMLElement =>
    h('div', { class: 'field', 'data-field': id }, h('label', { for: id }, label), control, typeof hint === 'string' ? h('small', { class: 'muted' }, hint) : (hint ?? null));
  const input = (id: string, attrs: Record<string, string | number | boolean> = {}): HTMLInputElement => h('input', { id, type: 'text', autocomplete: 'off', ...attrs });

  const currency = h('select', { id: 'np-currency' }, (Object.keys(CONSOLE_METHODS) as Currency[]).map((c) => h('option', { value: c }, c)));
  const method = h('select', { id: 'np-method' });
  const amount = input('np-amount', { inputmode: 'decimal', required: true });
  const name = input('np-name', { required: true, maxlength: 255 });
  const email = input('np-email', { type: 'email', required: true });
  const phone = input('np-phone');
  const cpf = input('np-cpf', { inputmode: 'numeric' });
  const responsible = input('np-document', { required: true });
  const documentHint = h('small', { class: 'muted', id: 'np-document-hint' });
  const phoneHint = h('small', { class: 'muted', id: 'np-phone-hint' });
  const description = input('np-description', { required: true, maxlength: 255, value: 'Pedido de teste' });
  const responsibleExternalId = input('np-responsible-ref', { required: true, value: 'cli-console' });
  const externalId = input('np-external-id', { placeholder: 'optional, e.g. order-1001' });
  const postbackUrl = input('np-postback-url', { type: 'url', placeholder: "optional; else the account's URL" });
  const dueDate = input('np-due-date', { type: 'date' });
  const card = h('select', { id: 'np-card' }, CONSOLE_TEST_CARDS.map(([number, label]) => h('option', { value: number }, `${number} · ${label}`)));
  const installments = input('np-installments', { type: 'number', min: 1, max: 12, step: 1, value: 1, inputmode: 'numeric' });

  const byMethod: Record<string, HTMLElement[]> = {
    cpf: [field('np-cpf', 'CPF or CNPJ of the payer', cpf)],
    boleto: [field('np-due-date', 'Boleto due date', dueDate, 'optional: today + 3 days')],
    card: [field('np-card', 'Test card', card), field('np-installments', 'Installments', installments)],
  };
  const error = h('p', { class: 'error', role: 'alert', id: 'np-error' });
  const sent = h('pre', { class: 'code', 'aria-label': 'Request sent', hidden: true });
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Create purchase');

  const currencyNow = (): Currency => currency.value as Currency;
  /** Another currency: its methods, and its test data where the fields still hold the previous one's. */
  function onCurrency(previous: Currency | undefined): void {
    const next = currencyNow();
    replaceChildren(method, CONSOLE_METHODS[next].map((m) => h('option', { value: m }, m)));
    documentHint.textContent = DOCUMENT_HINTS[next];
    phoneHint.textContent = PHONE_HINTS[next];
    const before = previous ? CONSOLE_DEFAULTS[previous] : undefined;
    const now = CONSOLE_DEFAULTS[next];
    for (const [control, key] of [[amount, 'amount'], [name, 'name'], [email, 'email'], [phone, 'phone'], [cpf, 'cpf'], [responsible, 'responsibleDocument']] as const) {
      if (!before || control.value === before[key] || control.value === '') control.value = now[key];
    }
    onMethod();
  }
  function onMethod(): void {
    const m = method.value;
    for (const el of byMethod.cpf!) el.hidden = currencyNow() !== 'BRL';
    for (const el of byMethod.boleto!) el.hidden = m !== 'BOLETO' && m !== 'PIX_BOLETO';
    for (const el of byMethod.card!) el.hidden = m !== 'CREDIT_CARD';
    phone.required = currencyNow() === 'BRL' || currencyNow() === 'COP';
  }
  let shownCurrency: Currency | undefined;
  currency.addEventListener('change', () => {
    onCurrency(shownCurrency);
    shownCurrency = currencyNow();
  });
  method.addEventListener('change', onMethod);

  function body(): Record<string, unknown> | string {
    const cents = centavosOf(amount.value);
    if (cents === undefined) return 'Amount must be a number with at most two decimals, e.g. 150.00';
    const c = currencyNow();
    const m = method.value;
    const out: Record<string, unknown> = {
      ...(c !== 'BRL' && { currency: c }),
      paymentMethod: m,
      amount: cents,
      name: name.value.trim(),
      email: email.value.trim(),
      ...(phone.value.trim() && { phone: phone.value.trim() }),
      ...(c === 'BRL' && cpf.value.trim() && { cpf: cpf.value.trim() }),
      description: description.value.trim(),
      responsibleDocument: responsible.value.trim(),
      responsibleExternalId: responsibleExternalId.value.trim(),
      ...(externalId.value.trim() && { externalId: externalId.value.trim() }),
      ...(postbackUrl.value.trim() && { postbackUrl: postbackUrl.value.trim() }),
    };
    if (m === 'BOLETO' || m === 'PIX_BOLETO') {
      out.boletoAddress = { ...BOLETO_ADDRESS };
      if (dueDate.value) out.dueDate = dueDate.value;
    }
    if (m === 'CREDIT_CARD') {
      out.card = { number: card.value, holderName: name.value.trim().toUpperCase() || 'TEST', expirationMonth: 12, expirationYear: new Date().getUTCFullYear() + 5, cvv: '123' };
      out.installments = Number(installments.value) || 1;
    }
    return out;
  }

  const form = h(
    'form',
    { class: 'card stack', id: 'new-purchase', novalidate: true },
    // The method's own fields (due date, card) beside it, so no group is a lone field stretched across the card.
    h('div', { class: 'fields' }, field('np-currency', 'Currency', currency), field('np-method', 'Method', method), field('np-amount', 'Amount', amount, 'in units, e.g. 150.00; sent in centavos'), byMethod.boleto, byMethod.card),
    h('h2', {}, 'Payer'),
    h('div', { class: 'fields' }, field('np-name', 'Name', name), field('np-email', 'E-mail', email), field('np-phone', 'Phone', phone, phoneHint), byMethod.cpf, field('np-document', 'Responsible document', responsible, documentHint)),
    h('h2', {}, 'Your references'),
    h('div', { class: 'fields' }, field('np-description', 'Description', description), field('np-responsible-ref', 'Responsible external id', responsibleExternalId), field('np-external-id', 'External id', externalId), field('np-postback-url', 'Postback URL', postbackUrl)),
    error,
    h('div', { class: 'row buttons' }, submit, h('a', { href: '#/transactions' }, 'Cancel')),
    h('details', {}, h('summary', {}, 'The request this sends'), sent),
  );
  const showRequest = (): void => {
    const b = body();
    sent.hidden = false;
    sent.textContent = typeof b === 'string' ? b : `POST /transactions/v2/purchase\n\n${JSON.stringify(b, null, 2)}`;
  };
  form.addEventListener('input', showRequest);
  form.addEventListener('change', showRequest);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const b = body();
    if (typeof b === 'string') {
      error.textContent = b;
      amount.focus();
      return;
    }
    error.textContent = '';
    submit.disabled = true;
    const answer: Answer<Tx> = await ctx.api.post<Tx>('/transactions/v2/purchase', b);
    submit.disabled = false;
    if (!answer.ok) {
      // Said here, beside the fields, as well as in the toast: the form stays as it was.
      error.textContent = `The sandbox refused it: ${describe(answer)}`;
      return;
    }
    ctx.state.remember(answer.body);
    ctx.notify(`Purchase ${answer.body.id} created: ${answer.body.status}`, 'ok');
    location.hash = `#/transactions/${encodeURIComponent(answer.body.id)}`;
  });

  const intro: Child = h('p', { class: 'muted' }, 'Creates a charge with POST /transactions/v2/purchase and this account\'s key, as your integration would; then fill, pay, expire or decline it from its page.');
  replaceChildren(ctx.root, h('p', {}, h('a', { href: '#/transactions' }, '← All transactions')), h('h1', { tabindex: -1 }, 'New purchase'), intro, form);
  onCurrency(undefined);
  shownCurrency = currencyNow();
  showRequest();
};
