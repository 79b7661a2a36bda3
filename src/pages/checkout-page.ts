import { PSE_BANKS, type Bank } from '../rails/banks.js';
import { hashDigits, merchantNit } from '../rails/merchant.js';
import { actionPath, checkoutPath } from './paths.js';
import type { TransactionRecord } from '../transactions/transaction-record.js';
import { formatAmount, formatColombianPhone, formatNit } from './format.js';
import { html, type SafeHtml } from './html.js';
import { renderDocument } from './layout.js';

export type PseBank = Bank;
export { PSE_BANKS };

/** PSE's own codes for the person type: N natural, J jurídica. */
export const PSE_PERSON_TYPES = [
  { value: 'N', es: 'Persona natural', en: 'Individual' },
  { value: 'J', es: 'Persona jurídica', en: 'Company' },
] as const;

/** An `@` alias is one of the llave kinds Bre-B allows, and one that cannot collide with a real person's. */
export function brebKeyOf(transactionId: string): string {
  return `@sandbox${transactionId}`;
}

export interface TransferDetails {
  bank: string;
  accountType: string;
  /** Printed as Bancolombia prints them: 3-6-2 digits. */
  accountNumber: string;
  nit: string;
}

/**
 * Stable per transaction (account number) and per account (NIT), so a payer reloading the page or a
 * test comparing two renders sees the same details; none of it is a real account.
 */
export function transferDetailsOf(record: TransactionRecord): TransferDetails {
  const account = hashDigits(`transfer-account:${record.id}`, 11);
  const nit = merchantNit(record.accountId);
  return {
    bank: 'Bancolombia',
    accountType: 'Cuenta de ahorros',
    accountNumber: `${account.slice(0, 3)}-${account.slice(3, 9)}-${account.slice(9)}`,
    nit: formatNit(nit.base, nit.dv),
  };
}

type Status = TransactionRecord['view']['status'];

const STATUS_LABELS: Readonly<Record<Status, { es: string; en: string; tone: 'pending' | 'ok' | 'bad' | 'muted' }>> = {
  PENDING: { es: 'Pendiente', en: 'Pending', tone: 'pending' },
  APPROVED: { es: 'Pago aprobado', en: 'Payment approved', tone: 'ok' },
  BLOCKED: { es: 'Pago rechazado', en: 'Payment rejected', tone: 'bad' },
  REFUNDED: { es: 'Reembolsado', en: 'Refunded', tone: 'muted' },
  CHARGEBACK: { es: 'Contracargo', en: 'Chargeback', tone: 'bad' },
};

/** BLOCKED covers a charge that ran out of time, which the payer should not read as a rejection. */
const TIMED_OUT_LABEL = { es: 'Expirado', en: 'Expired', tone: 'muted' } as const;

const METHOD_LABELS: Readonly<Record<string, { es: string; en: string }>> = {
  PSE: { es: 'PSE · Débito bancario', en: 'Online bank debit' },
  NEQUI: { es: 'Nequi', en: 'Digital wallet' },
  BREB: { es: 'Bre-B', en: 'Instant payment' },
  BANK_TRANSFER: { es: 'Transferencia bancaria', en: 'Bank transfer' },
};

function bilingual(es: string, en: string): SafeHtml {
  return html`${es} <small lang="en">${en}</small>`;
}

function resultBanner(result: string | undefined): SafeHtml | null {
  if (!result) return null;
  // Worded as the outcome of the payer's click, since the status block below already names the state.
  if (result === 'approved') {
    return html`<p class="banner ok" role="status">${bilingual('Listo: el pago fue aprobado.', 'Done: the payment was approved.')}</p>`;
  }
  if (result === 'rejected') {
    return html`<p class="banner bad" role="status">${bilingual('Listo: el pago fue rechazado.', 'Done: the payment was rejected.')}</p>`;
  }
  return html`<p class="banner info" role="status">${result}</p>`;
}

function pseFields(): SafeHtml {
  return html`<fieldset class="field">
<legend><label for="bank">${bilingual('Banco', 'Bank')}</label></legend>
<select id="bank" name="bank" required>
<option value="" selected disabled>Seleccione su banco…</option>
${PSE_BANKS.map((bank) => html`<option value="${bank.code}">${bank.name}</option>\n`)}</select>
</fieldset>
<fieldset class="field radios">
<legend>${bilingual('Tipo de persona', 'Person type')}</legend>
${PSE_PERSON_TYPES.map(
  (type, i) =>
    html`<label><input type="radio" name="personType" value="${type.value}"${i === 0 && html` checked`}> ${bilingual(type.es, type.en)}</label>\n`,
)}</fieldset>`;
}

function methodDetails(record: TransactionRecord, merchantName: string): SafeHtml | null {
  const { view, details } = record;
  switch (view.method) {
    case 'NEQUI':
      return html`<section class="method">
<dl class="facts">
<dt>${bilingual('Celular', 'Mobile')}</dt><dd class="mono">${details.phone ? formatColombianPhone(details.phone) : '—'}</dd>
</dl>
<p class="note">Se enviaría una notificación push a la app Nequi de este celular para que el pagador acepte el pago.
<small lang="en">A push notification would be sent to the Nequi app on this number for the payer to accept.</small></p>
</section>`;
    case 'BREB':
      return html`<section class="method">
<dl class="facts">
<dt>${bilingual('Llave Bre-B', 'Bre-B key')}</dt><dd class="mono key">${brebKeyOf(record.id)}</dd>
<dt>${bilingual('Destinatario', 'Payee')}</dt><dd>${merchantName}</dd>
</dl>
<p class="note">Envíe el pago a esta llave desde la app de su banco o billetera.
<small lang="en">Send the payment to this key from any bank or wallet app.</small></p>
</section>`;
    case 'BANK_TRANSFER': {
      const transfer = transferDetailsOf(record);
      return html`<section class="method">
<dl class="facts">
<dt>${bilingual('Banco', 'Bank')}</dt><dd>${transfer.bank}</dd>
<dt>${bilingual('Tipo de cuenta', 'Account type')}</dt><dd>${transfer.accountType} <small lang="en">Savings</small></dd>
<dt>${bilingual('Número de cuenta', 'Account number')}</dt><dd class="mono">${transfer.accountNumber}</dd>
<dt>${bilingual('Titular', 'Holder')}</dt><dd>${merchantName}</dd>
<dt>NIT</dt><dd class="mono">${transfer.nit}</dd>
<dt>${bilingual('Referencia', 'Reference')}</dt><dd class="mono">${record.id}</dd>
</dl>
</section>`;
    }
    default:
      return null;
  }
}

function actions(record: TransactionRecord): SafeHtml {
  const base = checkoutPath(record.id);
  const token = record.payerToken ?? '';
  const isPse = record.view.method === 'PSE';
  return html`<div class="actions">
<form method="post" action="${actionPath(base, 'approve', token)}">
${isPse && pseFields()}
<button type="submit" class="approve">${bilingual('Aprobar pago', 'Approve')}</button>
</form>
<form method="post" action="${actionPath(base, 'reject', token)}">
<button type="submit" class="reject">${bilingual('Rechazar', 'Reject')}</button>
</form>
</div>
<p class="hint">${bilingual(
    'Sandbox: elija el resultado que el banco devolvería.',
    'Sandbox: choose the outcome the bank would return.',
  )}</p>`;
}

/**
 * The hosted payer page a COP `redirectUrl` points to. In production the payer would be at the bank
 * or wallet; here they pick the outcome, which the handlers turn into the same state change and webhook.
 */
export function renderCheckoutPage(
  record: TransactionRecord,
  merchantName: string,
  result?: 'approved' | 'rejected' | string,
): string {
  const { view, details } = record;
  const status = view.statusReason === 'EXPIRED' ? TIMED_OUT_LABEL : STATUS_LABELS[view.status];
  const method = METHOD_LABELS[view.method] ?? { es: view.method, en: '' };
  const amount = formatAmount(view.amount, view.currency);
  const pending = view.status === 'PENDING';

  const body = html`<main class="card">
<p class="tag">Sandbox · <span lang="en">no real money moves</span></p>
${resultBanner(result)}
<header>
<p class="merchant">${merchantName}</p>
<p class="amount">${amount}</p>
${details.description && html`<p class="description">${details.description}</p>`}
</header>
<dl class="facts meta">
<dt>${bilingual('Medio de pago', 'Method')}</dt><dd>${bilingual(method.es, method.en)}</dd>
<dt>${bilingual('Transacción', 'Transaction')}</dt><dd class="mono">${record.id}</dd>
${pending && html`<dt>${bilingual('Estado', 'Status')}</dt><dd><span class="status ${status.tone}">${status.es}</span></dd>`}
</dl>
${
  pending
    ? html`${methodDetails(record, merchantName)}${actions(record)}`
    : html`<section class="final ${status.tone}" role="status">
<p class="final-title">${status.es}</p>
<p class="final-en" lang="en">${status.en}</p>
</section>`
}
</main>`;

  return renderDocument({ title: `${merchantName} · ${amount}`, lang: 'es', css: CSS, body });
}

const CSS = `
*{box-sizing:border-box}
body{margin:0;min-height:100vh;background:#eef1f5;color:#1d2430;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;display:flex;justify-content:center;align-items:flex-start;padding:24px 12px}
small{font-size:.78em;color:#6b7483;font-weight:normal}
.card{width:100%;max-width:440px;background:#fff;border-radius:12px;box-shadow:0 2px 12px rgba(20,30,50,.12);padding:22px 24px}
.tag{margin:0 0 12px;font-size:12px;letter-spacing:.04em;text-transform:uppercase;color:#8a5a00;background:#fff4d6;border-radius:4px;padding:3px 8px;display:inline-block}
header{border-bottom:1px solid #e3e7ee;padding-bottom:12px;margin-bottom:12px}
.merchant{margin:0;font-weight:600;font-size:17px}
.amount{margin:4px 0 0;font-size:28px;font-weight:700;letter-spacing:-.01em}
.description{margin:4px 0 0;color:#4a5463}
.facts{display:grid;grid-template-columns:auto 1fr;gap:6px 14px;margin:0 0 14px}
.facts dt{color:#4a5463}
.facts dd{margin:0;text-align:right;overflow-wrap:break-word}
/* Numbers and keys the payer types stay whole: the label column gives way instead. */
.facts dd.mono{white-space:nowrap}
.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.key{font-weight:600}
.status{display:inline-block;border-radius:999px;padding:1px 10px;font-size:13px;font-weight:600}
.status.pending{background:#fff4d6;color:#8a5a00}
.status.ok{background:#dcf5e4;color:#146c34}
.status.bad{background:#fde2e1;color:#a1261f}
.status.muted{background:#e8ebf0;color:#4a5463}
.method{border-top:1px solid #e3e7ee;padding-top:12px}
.note{margin:0 0 14px;color:#4a5463;font-size:14px}
.banner{margin:0 0 14px;padding:10px 12px;border-radius:8px;font-weight:600}
.banner.ok{background:#dcf5e4;color:#146c34}
.banner.bad{background:#fde2e1;color:#a1261f}
.banner.info{background:#e4ecfb;color:#1f3f7a}
.actions{display:grid;grid-template-columns:1fr auto;gap:10px;border-top:1px solid #e3e7ee;padding-top:14px}
/* The approve form's fields span the row and its button sits beside the reject form; the tags stay bare. */
.actions>form:first-child{display:contents}
.actions>form:last-child{margin:0}
.field{grid-column:1/-1;border:0;margin:0;padding:0}
.field legend{padding:0;margin-bottom:4px;font-weight:600}
select{width:100%;padding:8px;font:inherit;border:1px solid #c6ccd6;border-radius:6px;background:#fff}
.radios label{display:block;margin:2px 0}
button{font:inherit;font-weight:600;border:0;border-radius:8px;padding:11px 16px;cursor:pointer;width:100%}
button small{color:inherit;opacity:.8}
.approve{background:#146c34;color:#fff}
.reject{background:#fff;color:#a1261f;border:1px solid #e2a8a4}
.hint{margin:10px 0 0;font-size:12px;color:#6b7483;text-align:center}
.final{text-align:center;border-radius:10px;padding:18px 12px;margin-top:4px}
.final.ok{background:#dcf5e4;color:#146c34}
.final.bad{background:#fde2e1;color:#a1261f}
.final.muted{background:#e8ebf0;color:#4a5463}
.final-title{margin:0;font-size:24px;font-weight:700}
.final-en{margin:2px 0 0;font-size:13px;opacity:.85}
`;
