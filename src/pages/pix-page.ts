import type { TransactionRecord } from '../transactions/transaction-record.js';
import { pixPagePath, pixQrPath, withToken } from './paths.js';
import { formatBrl } from './format.js';
import { html } from './html.js';
import { renderDocument } from './layout.js';
import { PAYER_ACTIONS_CSS, payerActions, payerResult } from './payer-actions.js';

/** Keyed by string, not by the status enum, so a status added later still renders (as its own name). */
const STATUS: Readonly<Record<string, { pt: string; en: string; tone: 'ok' | 'bad' | 'muted' }>> = {
  APPROVED: { pt: 'Pago', en: 'Paid', tone: 'ok' },
  BLOCKED: { pt: 'Cancelado', en: 'Cancelled', tone: 'bad' },
  REFUNDED: { pt: 'Estornado', en: 'Refunded', tone: 'muted' },
  CHARGEBACK: { pt: 'Contestado', en: 'Charged back', tone: 'bad' },
};
/** An expired Pix is BLOCKED with statusReason EXPIRED; the payer reads it as expired. */
const EXPIRED = { pt: 'Expirado', en: 'Expired', tone: 'muted' } as const;

/** "22/11/2026 14:05 UTC": the account clock's instant, in the zone the sandbox keeps. */
function formatInstant(iso: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})/.exec(iso);
  return m ? `${m[3]}/${m[2]}/${m[1]} ${m[4]}:${m[5]} UTC` : iso;
}

/**
 * The Pix payer page: the QR a phone scans, the copy-and-paste code with a copy button, and the
 * sandbox's pay and reject buttons. Plain Pix and the hybrid's Pix side both have one.
 */
export function renderPixPage(record: TransactionRecord, merchantName: string, result?: string): string {
  const { view, details } = record;
  const code = 'pixCode' in view && typeof view.pixCode === 'string' ? view.pixCode : '';
  const expiresAt = typeof view.expiresAt === 'string' ? view.expiresAt : null;
  const pending = view.status === 'PENDING';
  const amount = formatBrl(view.amount);
  const final = view.statusReason === 'EXPIRED' ? EXPIRED : (STATUS[view.status] ?? { pt: view.status, en: view.status, tone: 'muted' as const });
  const token = record.payerToken ?? '';

  const pay = html`<section class="pix" aria-labelledby="pix-h">
<h2 id="pix-h">Pague com Pix <small lang="en">Pay with Pix</small></h2>
<img class="qr" src="${withToken(pixQrPath(record.id), token)}" width="220" height="220" alt="QR Code Pix de ${amount}">
<label for="pix-code">Pix copia e cola <small lang="en">Copy and paste code</small></label>
<textarea id="pix-code" readonly rows="4" spellcheck="false">${code}</textarea>
<button type="button" id="copy" class="copy" hidden>Copiar código <small lang="en">Copy</small></button>
<p id="copied" class="copied" role="status"></p>
${expiresAt && html`<p class="small">Válido até ${formatInstant(expiresAt)}</p>`}
</section>
${payerActions(pixPagePath(record.id), token, html`Pagar no sandbox <small lang="en">Pay in sandbox</small>`)}`;

  const waiting = html`<section class="pix"><h2>Gerando o código Pix…</h2><p class="small">Esta página se atualiza sozinha. <span lang="en">This page refreshes by itself.</span></p></section>`;

  const body = html`<main class="card">
<p class="tag">Sandbox · sem dinheiro real <span lang="en">(no real money moves)</span></p>
${payerResult(result)}
<header>
<p class="merchant">${merchantName}</p>
<p class="amount">${amount}</p>
${details.description && html`<p class="description">${details.description}</p>`}
<p class="small">Transação <span class="mono">${record.id}</span></p>
</header>
${
  pending
    ? code
      ? pay
      : waiting
    : html`<section class="final ${final.tone}" role="status"><p class="final-title">${final.pt}</p><p class="final-en" lang="en">${final.en}</p></section>`
}
</main>`;

  return renderDocument({
    title: `Pix ${merchantName} · ${amount}`,
    lang: 'pt-BR',
    css: CSS,
    body,
    ...(pending && !code ? { refreshSeconds: 3 } : {}),
    ...(pending && code ? { script: COPY_SCRIPT } : {}),
  });
}

/** Shown only with JavaScript; falls back to selecting the text where the clipboard API is refused. */
const COPY_SCRIPT = `(function(){var b=document.getElementById('copy'),t=document.getElementById('pix-code'),s=document.getElementById('copied');if(!b||!t)return;b.hidden=false;b.addEventListener('click',function(){function done(){s.textContent='Código copiado.'}t.select();if(navigator.clipboard){navigator.clipboard.writeText(t.value).then(done,function(){document.execCommand('copy');done()})}else{document.execCommand('copy');done()}})})();`;

const CSS = `
*{box-sizing:border-box}
body{margin:0;min-height:100vh;background:#eef1f5;color:#1d2430;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;display:flex;justify-content:center;align-items:flex-start;padding:24px 12px}
small{font-size:.78em;color:inherit;opacity:.8;font-weight:normal}
.card{width:100%;max-width:440px;background:#fff;border-radius:12px;box-shadow:0 2px 12px rgba(20,30,50,.12);padding:22px 24px}
.tag{margin:0 0 12px;font-size:12px;letter-spacing:.04em;text-transform:uppercase;color:#8a5a00;background:#fff4d6;border-radius:4px;padding:3px 8px;display:inline-block}
header{border-bottom:1px solid #e3e7ee;padding-bottom:12px;margin-bottom:12px}
.merchant{margin:0;font-weight:600;font-size:17px}
.amount{margin:4px 0 0;font-size:28px;font-weight:700}
.description{margin:4px 0 0;color:#4a5463}
.small{font-size:13px;color:#4a5463;margin:6px 0 0}
.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.pix h2{font-size:17px;margin:0 0 10px}
.qr{display:block;width:220px;max-width:100%;height:auto;margin:0 auto 12px;image-rendering:pixelated}
label{display:block;font-weight:600;margin-bottom:4px}
textarea{width:100%;font:13px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;border:1px solid #8a94a3;border-radius:6px;padding:8px;resize:vertical;word-break:break-all}
.copy{margin-top:8px;width:100%;font:inherit;font-weight:600;border:1px solid #1d4ed8;background:#fff;color:#1d4ed8;border-radius:8px;padding:9px 14px;cursor:pointer}
.copied{min-height:1.2em;margin:4px 0 0;color:#146c34;font-weight:600}
.final{text-align:center;border-radius:10px;padding:18px 12px}
.final.ok{background:#dcf5e4;color:#146c34}
.final.bad{background:#fde2e1;color:#a1261f}
.final.muted{background:#e8ebf0;color:#4a5463}
.final-title{margin:0;font-size:24px;font-weight:700}
.final-en{margin:2px 0 0;font-size:13px}
${PAYER_ACTIONS_CSS}`;
