import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** src/, with its trailing slash. */
export const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** Every module of the server's code, relative to src/ (`http/body.ts`), sorted: the console's browser code is not the server's. */
export const serverModules: readonly string[] = readdirSync(SRC, { recursive: true, encoding: 'utf8' })
  .map((path) => path.split('\\').join('/'))
  .filter((path) => path.endsWith('.ts') && !path.startsWith('console/client/'))
  .sort();

/** A module's code without its comments, as the TypeScript printer writes it. */
export function codeOf(path: string, text: string): string {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.ES2022, false, ts.ScriptKind.TS);
  return ts.createPrinter({ removeComments: true }).printFile(source);
}

/** What a module's code must not hold, and why. */
export interface CodeRule {
  pattern: RegExp;
  why: string;
}

/** Each line of a module's code (its comments left out) that a rule matches, as `why: line`. */
export function offendingLines(path: string, text: string, rules: readonly CodeRule[]): string[] {
  // Leaving comments out can only take matches away: a module that matches nothing as it is is done.
  if (!rules.some(({ pattern }) => pattern.test(text))) return [];
  const lines = codeOf(path, text).split('\n');
  return lines.flatMap((line) => rules.filter(({ pattern }) => pattern.test(line)).map(({ why }) => `${why}: ${line.trim()}`));
}
