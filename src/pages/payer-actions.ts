import { html, type SafeHtml } from './html.js';
import { actionPath } from './paths.js';

/**
 * The outcome buttons of the Brazilian payer pages, like the COP checkout's: in production the payer
 * pays at their bank; here they choose what the bank would report, and the same state change and
 * webhook follow. Plain forms, so they work without JavaScript; hidden when printed. Their actions
 * carry the page's token, as the page's own link does.
 */
export function payerActions(basePath: string, token: string, payLabel: SafeHtml): SafeHtml {
  return html`<div class="payer-actions noprint">
<form method="post" action="${actionPath(basePath, 'approve', token)}"><button type="submit" class="approve">${payLabel}</button></form>
<form method="post" action="${actionPath(basePath, 'reject', token)}"><button type="submit" class="reject">Recusar <small lang="en">Reject</small></button></form>
</div>
<p class="hint noprint">Sandbox: escolha o resultado que o banco devolveria. <span lang="en">Choose the outcome the bank would return.</span></p>`;
}

/** The banner after a button's redirect, worded as the outcome of the payer's click. */
export function payerResult(result: string | undefined): SafeHtml | null {
  if (result === 'approved') return html`<p class="banner ok" role="status">Pronto: pagamento aprovado. <small lang="en">Payment approved.</small></p>`;
  if (result === 'rejected') return html`<p class="banner bad" role="status">Pronto: pagamento recusado. <small lang="en">Payment rejected.</small></p>`;
  return null;
}

export const PAYER_ACTIONS_CSS = `
.payer-actions{display:flex;flex-wrap:wrap;gap:10px;margin:12px 0 4px}
.payer-actions form{margin:0;flex:1 1 160px}
.payer-actions button{width:100%;font:inherit;font-weight:bold;border-radius:8px;padding:11px 16px;cursor:pointer}
.payer-actions button small{font-weight:normal;opacity:.85}
.payer-actions .approve{background:#146c34;color:#fff;border:1px solid #146c34}
.payer-actions .reject{background:#fff;color:#a1261f;border:1px solid #c9847f}
.payer-actions button:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
.hint{margin:4px 0 0;font-size:12px;color:#555}
.banner{margin:0 0 12px;padding:10px 12px;border-radius:8px;font-weight:bold}
.banner.ok{background:#dcf5e4;color:#146c34}
.banner.bad{background:#fde2e1;color:#a1261f}
@media print{.payer-actions,.hint.noprint{display:none}}
`;
