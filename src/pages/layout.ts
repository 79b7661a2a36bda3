import { createHash } from 'node:crypto';
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
<meta name="referrer" content="same-origin">
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

const hashOf = (text: string): string => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/**
 * The Content-Security-Policy of a document renderDocument wrote: its own inline style sheet
 * and script (by hash) and images of this origin (the QR), nothing else; forms post to this
 * origin only; no page may frame it (a payer's click must be theirs, not a frame's).
 */
export function contentSecurityPolicy(document: string): string {
  const blocks = (tag: string): string[] => [...document.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g'))].map((m) => hashOf(m[1] ?? ''));
  const styles = blocks('style');
  const scripts = blocks('script');
  return [
    "default-src 'none'",
    `style-src ${styles.length ? styles.join(' ') : "'none'"}`,
    `script-src ${scripts.length ? scripts.join(' ') : "'none'"}`,
    "img-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

/** Headers of every payer page answer (pages, their error pages, the QR image): not framed, not cached, not referred elsewhere. */
export function payerPageHeaders(document?: string): Record<string, string> {
  return {
    'content-security-policy': document === undefined ? "default-src 'none'; frame-ancestors 'none'" : contentSecurityPolicy(document),
    'x-frame-options': 'DENY',
    'cache-control': 'no-store',
    // The links carry their token: never sent to another site. Same-origin (not no-referrer) keeps
    // the Origin header on the buttons' POSTs, which no-referrer would send as null.
    'referrer-policy': 'same-origin',
    'x-content-type-options': 'nosniff',
  };
}
