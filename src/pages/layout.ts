import { html, raw, type SafeHtml } from './html.js';

export interface DocumentOptions {
  title: string;
  lang: 'es' | 'pt-BR';
  /** A constant style sheet owned by the page module, never data. */
  css: string;
  body: SafeHtml;
  /** Lets a page that is waiting on the sandbox poll by itself, without JavaScript. */
  refreshSeconds?: number;
  /** A constant script owned by the page module, for enhancements only: the page works without it. */
  script?: string;
}

/** The hosted pages are self-contained: no external assets, so they render offline and in any browser. */
export function renderDocument(options: DocumentOptions): string {
  const { title, lang, css, body, refreshSeconds, script } = options;
  return html`<!DOCTYPE html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
${refreshSeconds !== undefined && html`<meta http-equiv="refresh" content="${refreshSeconds}">`}
<title>${title}</title>
<style>${raw(css)}</style>
</head>
<body>
${body}
${script !== undefined && html`<script>${raw(script)}</script>`}
</body>
</html>
`.toString();
}
