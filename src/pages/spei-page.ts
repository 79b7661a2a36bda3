import { CHARGE_CLABE_BANK_NAME } from '../rails/clabe.js';
import type { TransactionRecord } from '../transactions/transaction-record.js';
import { actionPath } from './paths.js';
import { CHECKOUT_CSS } from './checkout-page.js';
import { formatClabe, formatMxn } from './format.js';
import { html, type SafeHtml } from './html.js';
import { renderDocument } from './layout.js';

export const speiPagePath = (id: string): string => `/_sandbox/spei/${id}`;

const STATUS: Readonly<Record<string, { es: string; en: string; tone: 'ok' | 'bad' | 'muted' }>> = {
  APPROVED: { es: 'Transferencia recibida', en: 'Transfer received', tone: 'ok' },
  BLOCKED: { es: 'Pago rechazado', en: 'Payment rejected', tone: 'bad' },
  REFUNDED: { es: 'Reembolsado', en: 'Refunded', tone: 'muted' },
  CHARGEBACK: { es: 'Contracargo', en: 'Chargeback', tone: 'bad' },
};
const EXPIRED = { es: 'Expirado', en: 'Expired', tone: 'muted' } as const;

function bilingual(es: string, en: string): SafeHtml {
  return html`${es} <small lang="en">${en}</small>`;
}

function banner(result: string | undefined): SafeHtml | null {
  if (result === 'approved') return html`<p class="banner ok" role="status">${bilingual('Listo: la transferencia llegó.', 'Done: the transfer arrived.')}</p>`;
  if (result === 'rejected') return html`<p class="banner bad" role="status">${bilingual('Listo: el pago fue rechazado.', 'Done: the payment was rejected.')}</p>`;
  return null;
}

/**
 * The payer page of an MXN SPEI charge, like the COP checkout: where a payer would read the
 * CLABE into their bank's app, with the sandbox's buttons for what SPEI would report (the
 * transfer arrives, or the payer gives up).
 */
export function renderSpeiPage(record: TransactionRecord, merchantName: string, result?: string): string {
  const { view, details } = record;
  const clabe = 'clabe' in view && typeof view.clabe === 'string' ? view.clabe : '';
  const amount = formatMxn(view.amount);
  const pending = view.status === 'PENDING';
  const final = view.statusReason === 'EXPIRED' ? EXPIRED : (STATUS[view.status] ?? { es: view.status, en: view.status, tone: 'muted' as const });
  const base = speiPagePath(record.id);
  const token = record.payerToken ?? '';

  const body = html`<main class="card">
<p class="tag">Sandbox · <span lang="en">no real money moves</span></p>
${banner(result)}
<header>
<p class="merchant">${merchantName}</p>
<p class="amount">${amount}</p>
${details.description && html`<p class="description">${details.description}</p>`}
</header>
<dl class="facts meta">
<dt>${bilingual('Medio de pago', 'Method')}</dt><dd>${bilingual('SPEI · Transferencia', 'Bank transfer')}</dd>
<dt>${bilingual('Transacción', 'Transaction')}</dt><dd class="mono">${record.id}</dd>
</dl>
${
  pending
    ? html`<section class="method">
<dl class="facts">
<dt>CLABE</dt><dd class="mono key">${formatClabe(clabe)}</dd>
<dt>${bilingual('Banco', 'Bank')}</dt><dd>${CHARGE_CLABE_BANK_NAME}</dd>
<dt>${bilingual('Beneficiario', 'Payee')}</dt><dd>${merchantName}</dd>
<dt>${bilingual('Concepto', 'Reference')}</dt><dd class="mono">${record.id}</dd>
<dt>${bilingual('Monto exacto', 'Exact amount')}</dt><dd>${amount}</dd>
</dl>
<p class="note">Transfiera el monto exacto a esta CLABE desde la app o banca en línea de su banco.
<small lang="en">Transfer the exact amount to this CLABE from any bank's app or online banking.</small></p>
</section>
<div class="actions">
<form method="post" action="${actionPath(base, 'approve', token)}"><button type="submit" class="approve">${bilingual('Simular transferencia', 'Transfer arrives')}</button></form>
<form method="post" action="${actionPath(base, 'reject', token)}"><button type="submit" class="reject">${bilingual('Rechazar', 'Reject')}</button></form>
</div>
<p class="hint">${bilingual('Sandbox: elija el resultado que SPEI devolvería.', 'Sandbox: choose the outcome SPEI would report.')}</p>`
    : html`<section class="final ${final.tone}" role="status">
<p class="final-title">${final.es}</p>
<p class="final-en" lang="en">${final.en}</p>
</section>`
}
</main>`;

  return renderDocument({ title: `${merchantName} · ${amount}`, lang: 'es', css: CHECKOUT_CSS, body });
}
