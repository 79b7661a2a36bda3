/**
 * The one encoder of text for a response header (x-sandbox-hint, x-sandbox-response-invalid):
 * whatever the text, the value is printable ASCII, one line, and short enough for any client.
 */

/** Longest header text sent: clients' header limits (undici's 16 KiB for all of them) must not refuse the answer. */
export const HINT_MAX_CHARS = 2048;

const REPLACEMENT = encodeURIComponent('\ufffd');

/**
 * A header value for any text: header values are Latin-1 and one line, so everything outside
 * printable ASCII is percent-encoded as UTF-8 (a lone surrogate, which has no UTF-8 form,
 * as U+FFFD), and the result is cut at HINT_MAX_CHARS without splitting an escape.
 */
export function headerText(text: string): string {
  // Every code unit becomes at least one character, so what lies past HINT_MAX_CHARS code units
  // cannot reach the cut: the work stays bounded whatever the text's size. A pair split here
  // leaves a lone surrogate, whose escape starts with the same `%` the pair's would, and a lone
  // `%` at the cut is removed either way.
  const head = text.length > HINT_MAX_CHARS ? text.slice(0, HINT_MAX_CHARS) : text;
  // With the u flag a surrogate pair is one match; what is left alone is a lone surrogate.
  const encoded = head.replace(/[^\x20-\x7e]/gu, (c: string) => (c.length === 1 && c >= '\ud800' && c <= '\udfff' ? REPLACEMENT : encodeURIComponent(c)));
  if (encoded.length <= HINT_MAX_CHARS && head === text) return encoded;
  return encoded.slice(0, HINT_MAX_CHARS).replace(/%[0-9A-F]?$/, '');
}
