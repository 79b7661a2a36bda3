/**
 * Escape-by-default templating for the hosted pages. Interpolated values are escaped unless they are
 * themselves the output of `html` (or of `raw`, for the few constants such as the style sheet), so a
 * payer name like `<script>` can never become markup.
 */

export class SafeHtml {
  constructor(private readonly markup: string) {}
  toString(): string {
    return this.markup;
  }
}

/** null, undefined and false render as nothing, so `cond && html`…`` works inline. */
export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

const ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Quotes are escaped too, so the same function is safe inside quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ENTITIES[ch] ?? ch);
}

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.toString();
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  for (const [i, value] of values.entries()) out += render(value) + (strings[i + 1] ?? '');
  return new SafeHtml(out);
}

/** Only for markup the module itself owns (constants, generated SVG); never for request or record data. */
export function raw(markup: string): SafeHtml {
  return new SafeHtml(markup);
}
