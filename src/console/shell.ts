import { html } from '../pages/html.js';
import { FAVICON } from './favicon.js';

const NAV: readonly [string, string][] = [
  ['#/transactions', 'Transactions'],
  ['#/withdrawals', 'Payouts'],
  ['#/webhooks', 'Webhooks'],
  ['#/requests', 'Requests'],
  ['#/catalog', 'Catalog'],
  ['#/clock', 'Clock'],
  ['#/account', 'Account'],
  ['#/faults', 'Faults'],
  ['#/usage', 'Usage'],
];

/**
 * The console's page: server-rendered so the sign-in form is there before any script runs; the
 * client module (served beside it, no CDN) draws the views. Everything comes from this sandbox.
 */
export function renderConsoleShell(version: string): string {
  return html`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>payments-sandbox console</title>
<link rel="icon" href="${FAVICON}">
<link rel="stylesheet" href="/_sandbox/console/console.css">
<script type="module" src="/_sandbox/console/console.js"></script>
</head>
<body>
<a class="skip" href="#view">Skip to content</a>
<header class="top">
<a class="brand" href="#/transactions">payments-sandbox <span>console</span></a>
<div id="signed-in" class="status-bar" hidden>
<span id="header-account" class="small"></span>
<span id="live" class="live off" role="status">Connecting…</span>
<time id="header-clock" class="mono small" aria-live="off"></time>
<button type="button" id="sign-out" class="secondary">Sign out</button>
</div>
</header>
<nav id="nav" aria-label="Sections" hidden><ul>
${NAV.map(([href, label]) => html`<li><a href="${href}">${label}</a></li>`)}
<li><a href="/_sandbox/docs">API docs</a></li>
</ul></nav>
<main>
<section id="sign-in" class="sign-in" aria-labelledby="sign-in-h">
<h1 id="sign-in-h">Sign in</h1>
<form id="sign-in-form">
<label for="secret-key">Secret key</label>
<input id="secret-key" name="secretKey" type="password" autocomplete="off" spellcheck="false" required>
<button type="submit">Sign in</button>
<p id="sign-in-error" class="error" role="alert"></p>
</form>
<p class="muted small">The default account's key is printed when the sandbox starts (<code>sk_test_sandbox</code> unless changed). It is kept in this browser tab only (sessionStorage) and sent only to this sandbox.</p>
<noscript><p class="error">The console needs JavaScript; the control API works without it (see the API docs).</p></noscript>
</section>
<div id="view" tabindex="-1"></div>
</main>
<div id="toast" class="toast" role="status" aria-live="polite" hidden></div>
<footer class="muted small">payments-sandbox ${version} · <a href="/_sandbox/openapi.yaml">openapi.yaml</a></footer>
</body>
</html>
`.toString();
}
