import { FAVICON } from './favicon.js';
import { html } from '../pages/html.js';

/**
 * The API reference: swagger-ui-dist renders openapi.yaml from this sandbox. Its assets are the
 * package's own (copied into dist/ at build time), served by the sandbox, so the page works
 * offline; the online spec validator is off.
 */
export function renderDocsPage(): string {
  return html`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>payments-sandbox API reference</title>
<link rel="icon" href="${FAVICON}">
<link rel="stylesheet" href="/_sandbox/docs/assets/swagger-ui.css">
<style>body{margin:0}.back{display:block;padding:10px 16px;background:#111827;color:#fff;font:600 15px system-ui,sans-serif;text-decoration:none}</style>
</head>
<body>
<a class="back" href="/_sandbox/">← payments-sandbox console</a>
<main id="swagger-ui"></main>
<script src="/_sandbox/docs/assets/swagger-ui-bundle.js"></script>
<script src="/_sandbox/docs/docs.js"></script>
</body>
</html>
`.toString();
}

export const DOCS_INIT = `window.ui = SwaggerUIBundle({
  url: '/_sandbox/openapi.yaml',
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  tryItOutEnabled: false,
  presets: [SwaggerUIBundle.presets.apis],
});
`;
