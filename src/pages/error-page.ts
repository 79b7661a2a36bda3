import { html } from './html.js';
import { renderDocument } from './layout.js';

/** The payer's language: the COP checkout serves Colombia (Spanish), the boleto and Pix pages Brazil. */
export type PayerLanguage = 'es' | 'pt-BR';

const WORDS: Readonly<Record<PayerLanguage, { titles: Readonly<Record<number, string>>; other: string; check: string }>> = {
  'pt-BR': {
    titles: { 404: 'Página não encontrada', 409: 'Esta cobrança já foi encerrada' },
    other: 'Não foi possível abrir esta página',
    check: 'Confira o link recebido do lojista.',
  },
  es: {
    titles: { 404: 'Página no encontrada', 409: 'Este cobro ya fue cerrado' },
    other: 'No fue posible abrir esta página',
    check: 'Revisa el enlace que te dio el comercio.',
  },
};

/**
 * What a payer's browser gets instead of the JSON error an API client reads: the same status, said
 * in words, in the payer's language (Spanish on the Colombian checkout, Portuguese on the Brazilian
 * pages) and in English.
 */
export function renderErrorPage(status: number, message: string, language: PayerLanguage = 'pt-BR'): string {
  const words = WORDS[language];
  const title = words.titles[status] ?? words.other;
  const body = html`<main class="card">
<p class="tag">Sandbox</p>
<h1>${title}</h1>
<p lang="en" class="en">${status === 404 ? 'Page not found' : 'This page cannot be shown'} (HTTP ${status})</p>
<p class="why" lang="en">${message}</p>
<p class="small">${words.check} <span lang="en">Check the link the merchant gave you.</span></p>
</main>`;
  return renderDocument({ title: `${status} · ${title}`, lang: language, css: CSS, body });
}

const CSS = `
*{box-sizing:border-box}
body{margin:0;min-height:100vh;background:#eef1f5;color:#1d2430;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;display:flex;justify-content:center;align-items:flex-start;padding:24px 12px}
.card{width:100%;max-width:440px;background:#fff;border-radius:12px;box-shadow:0 2px 12px rgba(20,30,50,.12);padding:22px 24px}
.tag{margin:0 0 12px;font-size:12px;letter-spacing:.04em;text-transform:uppercase;color:#8a5a00;background:#fff4d6;border-radius:4px;padding:3px 8px;display:inline-block}
h1{font-size:22px;margin:0}
.en{margin:2px 0 12px;color:#4a5463}
.why{background:#f4f6f9;border-radius:8px;padding:10px 12px;overflow-wrap:break-word}
.small{font-size:13px;color:#4a5463}
`;
