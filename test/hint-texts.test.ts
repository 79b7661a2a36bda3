import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The sandbox's own messages and hints are ASCII: a hint travels in the x-sandbox-hint header,
 * where anything else is percent-encoded (an ellipsis became %E2%80%A6). What a user sent may be
 * quoted in them and is encoded then; the sandbox's own words never need it. This reads every
 * error the source builds (the domain's invalid/notFound/conflict, the HTTP layer's badRequest,
 * HttpError, the event streams' refusals) and checks the text written there.
 */
const SRC = fileURLToPath(new URL('../src/', import.meta.url));
const CALL = /\b(invalid|notFound|conflict|badRequest|new HttpError|refuse)\(/g;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? (e.name === 'console' || e.name === 'pages' ? [] : sources(join(dir, e.name))) : e.name.endsWith('.ts') && e.name !== 'openapi-types.ts' ? [join(dir, e.name)] : [],
  );
}

/** The text of a call, from its name to its closing parenthesis. */
function callText(text: string, start: number): string {
  let depth = 0;
  for (let i = text.indexOf('(', start); i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) return text.slice(start, i + 1);
  }
  return text.slice(start);
}

describe("the sandbox's own error texts", () => {
  it('are ASCII in every message and hint the source writes', () => {
    const offending: string[] = [];
    let calls = 0;
    for (const file of sources(SRC)) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(CALL)) {
        calls++;
        const call = callText(text, match.index ?? 0);
        // Comments inside a call are not sent.
        const sent = call.replace(/\/\/.*$/gm, '').replace(/\/\*[\s\S]*?\*\//g, '');
        if (/[^\x00-\x7f]/.test(sent)) offending.push(`${relative(SRC, file)}:${text.slice(0, match.index).split('\n').length}: ${call.slice(0, 200)}`);
      }
    }
    expect(calls).toBeGreaterThan(50);
    expect(offending).toEqual([]);
  });
});
