import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HINT_MAX_CHARS, headerText } from '../../src/http/header-text.js';

/** headerText as it was before it bounded its work: every code unit encoded, then cut. */
function encodeAllThenCut(text: string): string {
  const encoded = text.replace(/[^\x20-\x7e]/gu, (c: string) => (c.length === 1 && c >= '\ud800' && c <= '\udfff' ? encodeURIComponent('\ufffd') : encodeURIComponent(c)));
  if (encoded.length <= HINT_MAX_CHARS) return encoded;
  return encoded.slice(0, HINT_MAX_CHARS).replace(/%[0-9A-F]?$/, '');
}

/** Texts around the cut: ASCII, `%`, two- and three-byte characters, surrogate pairs and lone halves. */
const PIECES = ['a', '%', ' ', '\t', 'é', '€', '\u{1F600}', '\ud800', '\udc00', '\n'];
const textNearTheCut = fc
  .tuple(fc.integer({ min: HINT_MAX_CHARS - 40, max: HINT_MAX_CHARS + 40 }), fc.array(fc.constantFrom(...PIECES), { minLength: 0, maxLength: 60 }))
  .map(([ascii, tail]) => 'x'.repeat(Math.max(0, ascii - tail.length)) + tail.join(''));

describe('headerText', () => {
  it('answers as encoding the whole text and cutting would, reading no more than the cut needs', () => {
    fc.assert(
      fc.property(fc.oneof(textNearTheCut, fc.array(fc.constantFrom(...PIECES), { maxLength: 3000 }).map((a) => a.join(''))), (text) => {
        expect(headerText(text)).toBe(encodeAllThenCut(text));
      }),
      { numRuns: 300 },
    );
  });

  it('is a header value: printable ASCII only, at most HINT_MAX_CHARS, for a text of any size', () => {
    const huge = '\ud83d'.repeat(200_000) + '€'.repeat(200_000);
    const value = headerText(huge);
    expect(value.length).toBeLessThanOrEqual(HINT_MAX_CHARS);
    expect(value).toMatch(/^[\x20-\x7e]*$/);
    expect(value.startsWith('%EF%BF%BD%EF%BF%BD')).toBe(true);
  });
});
