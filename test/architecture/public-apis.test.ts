import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { codeOf, offendingLines, serverModules as modules, SRC, type CodeRule } from '../helpers/src-code.js';

/**
 * Libraries are used through their public API: nothing in src re-creates express's or
 * body-parser's insides, assigns into an express or openapi-backend object, or overrides an
 * openapi-backend class, so that an upgrade of any of them is an upgrade and not a
 * compatibility project (issue 37). What an import graph cannot see (.dependency-cruiser.cjs
 * checks the imports): each pattern below is looked for in the code of every module of src,
 * its comments left out, and the last test shows each one catching what it forbids.
 */
const FORBIDDEN: readonly CodeRule[] = [
  { pattern: /\bObject\.setPrototypeOf\(/, why: "swapping an object's prototype (what express's app.handle does to each request)" },
  { pattern: /\.prototype(\.\w+)?\s*=[^=]/, why: "assigning into a class's prototype" },
  { pattern: /\b\w+\.(request|response)\.\w+\s*=[^=]/, why: "patching express's app.request or app.response" },
  { pattern: /\b(res|response|req|request|target|this)\.(json|send|write|end|setHeader|writeHead|status|set)\s*=[^=]/, why: 'replacing a method of a request or response (the res.json and write/end patches)' },
  { pattern: /\.locals\b/, why: "talking between stages through express's res.locals" },
  { pattern: /\b(req|request)\.(body|res|originalUrl|baseUrl|params|query)\s*=[^=]/, why: 'setting the properties express sets up on its request' },
  { pattern: /\bres\.req\s*=[^=]/, why: "setting up express's response" },
  { pattern: /\bextends\s+(OpenAPIRouter|OpenAPIValidator|OpenAPIBackend)\b/, why: 'subclassing openapi-backend to override what it calls itself' },
  { pattern: /\bexpress\.(json|urlencoded|raw|text)\(/, why: "express's body parsers: the body stage reads bodies with raw-body" },
  { pattern: /entity\.parse\.failed|strict violation/, why: "body-parser's own errors" },
];

/**
 * `file: line` → why it may stand. The one subclass: it overrides only the documented
 * `getRequestValidatorsForOperation` (same contract: an operation's ValidateFunctions), so the
 * build's compiled validators serve `validateRequest` unchanged; copying validateRequest's
 * parsing and coercion instead would be the re-creation this rule is against. Should an upgrade
 * stop asking the method, test/scripts/prebuild-validators.test.ts fails (the files go unused).
 */
const ALLOWED: ReadonlyMap<string, string> = new Map([
  [
    'http/prebuilt-validators.ts: export class PrebuiltRequestValidator extends OpenAPIValidator<OpenApiDocument> {',
    "supplies the build's compiled validators through the documented getRequestValidatorsForOperation, and overrides nothing else",
  ],
]);

const offences = (path: string, text: string): string[] => offendingLines(path, text, FORBIDDEN);

describe("libraries through their public API only", () => {
  it('reads every module of src', () => {
    expect(modules.length).toBeGreaterThan(150);
    expect(modules).toContain('http/transport.ts');
    expect(modules).toContain('http/body.ts');
  });

  it('no module re-creates express or body-parser, assigns into their objects or openapi-backend\'s, or overrides a library class', () => {
    const found = modules.flatMap((path) =>
      offences(path, readFileSync(`${SRC}${path}`, 'utf8'))
        .filter((what) => !ALLOWED.has(`${path}: ${what.slice(what.indexOf(': ') + 2)}`))
        .map((what) => `src/${path}: ${what}`),
    );
    expect(found).toEqual([]);
    // Each allowed line is still there, and its class overrides one method only.
    for (const key of ALLOWED.keys()) {
      const [path, line] = [key.slice(0, key.indexOf(': ')), key.slice(key.indexOf(': ') + 2)];
      const code = codeOf(path, readFileSync(`${SRC}${path}`, 'utf8'));
      expect(code.split('\n').map((l) => l.trim()), key).toContain(line);
      expect(code.match(/\boverride\s+\w+/g), key).toEqual(['override getRequestValidatorsForOperation']);
    }
  });

  it('each pattern catches what it forbids, and not what a comment says', () => {
    const probe = fileURLToPath(new URL('./fixtures/public-apis-probe.ts.txt', import.meta.url));
    const found = offences(probe, readFileSync(probe, 'utf8'));
    for (const { why } of FORBIDDEN) expect(found.some((f) => f.startsWith(`${why}:`)), why).toBe(true);
    expect(found.filter((f) => f.includes('in a comment'))).toEqual([]);
  });
});

/**
 * The PostgreSQL store sends through pg's query API only (issue 45): nothing in
 * src/store/postgres writes protocol messages on pg's connection or corks its stream, so a pg
 * release that changes its insides changes nothing here.
 */
const PG_PROTOCOL: readonly CodeRule[] = [
  { pattern: /\bconnection\??\.(parse|bind|execute|describe|sync|flush)\(/, why: "writing the wire protocol's messages on pg's connection" },
  { pattern: /\.(cork|uncork)\(/, why: 'corking a stream to batch its writes' },
  { pattern: /\bimplements\s+pg\.Submittable\b|\bSubmittable\b/, why: "a pg submittable: a query that handles the protocol's messages itself" },
];

describe('the PostgreSQL store through pg\'s query API only', () => {
  const storeModules = modules.filter((path) => path.startsWith('store/postgres/'));

  it('reads every module of src/store/postgres', () => {
    expect(storeModules).toContain('store/postgres/session.ts');
    expect(storeModules).toContain('store/postgres/unit.ts');
  });

  it('no module writes protocol messages, corks a stream or submits a query of its own', () => {
    const found = storeModules.flatMap((path) => offendingLines(path, readFileSync(`${SRC}${path}`, 'utf8'), PG_PROTOCOL).map((what) => `src/${path}: ${what}`));
    expect(found).toEqual([]);
  });

  it('each pattern catches what it forbids, and not what a comment says', () => {
    const probe = fileURLToPath(new URL('./fixtures/pg-protocol-probe.ts.txt', import.meta.url));
    const found = offendingLines(probe, readFileSync(probe, 'utf8'), PG_PROTOCOL);
    for (const { why } of PG_PROTOCOL) expect(found.some((f) => f.startsWith(`${why}:`)), why).toBe(true);
    expect(found.filter((f) => f.includes('comment'))).toEqual([]);
    expect(found.some((f) => f.includes('client.query'))).toBe(false);
  });
});
