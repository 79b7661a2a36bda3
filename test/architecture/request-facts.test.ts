import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { offendingLines, serverModules as modules, SRC, type CodeRule } from '../helpers/src-code.js';

/**
 * Each fact about a request is worked out once, at the edge (src/http/request.ts), and the
 * stages read it (issue 45, item 1): the copies each stage kept disagreed (four media-type
 * regexes, three rules for "has a body", two query parsers, a second route table). What an
 * import graph cannot see is looked for in the code of every module (comments left out), and
 * the last test shows each rule catching what it forbids.
 */
/** The edge: where the request's target, Content-Type and framing are read. */
const EDGE = 'http/request.ts';

interface Rule extends CodeRule {
  /** The modules that may (the edge, and each other with its reason). */
  allowed: readonly string[];
  /** The folders the rule holds in (default: every module of src). */
  within?: readonly string[];
}

/** The pipeline's stages and the endpoints they run. */
const STAGES = ['http/', 'pages/'];

const RULES: readonly Rule[] = [
  {
    pattern: /\bfrom\s+['"]content-type['"]|require\(['"]content-type['"]\)/,
    why: 'the content-type package, used by the one module of media types (the edge reads a request\'s with it)',
    allowed: ['http/media-type.ts'],
  },
  // The proxy (src/proxy) is a server of its own, not a stage: its one module of checks reads what it forwards.
  { pattern: /\bparseMediaType\(/, why: "parsing a request's Content-Type: the edge does, once", allowed: [EDGE, 'http/media-type.ts', 'proxy/check.ts'] },
  {
    pattern: /\bimport\s+(?!type\b)[^;]*\bfrom\s+['"](node:)?querystring['"]|\bfrom\s+['"]qs['"]/,
    why: 'a query parser: the edge parses the query once (node:querystring)',
    allowed: [EDGE],
    within: STAGES,
  },
  { pattern: /\bURLSearchParams\b/, why: 'a second query parser (URLSearchParams keeps a #fragment in the last value)', allowed: [], within: STAGES },
  { pattern: /\b(req|request|message|msg|incoming)\.url\b/, why: "reading the request's target: the edge split it into path and query", allowed: [EDGE], within: STAGES },
  {
    pattern: /\bURL\.parse\(|\bnew URL\(/,
    why: 'parsing a URL: the edge reads the target',
    // Origin headers and SANDBOX_PUBLIC_URL are URLs the Host check compares, not the request's target.
    allowed: [EDGE, 'http/shared-use.ts'],
    within: STAGES,
  },
  {
    pattern: /\.(indexOf|split|includes)\(['"][?#]['"]\)/,
    why: "splitting a query or fragment off a path: the edge's path has neither",
    // The raw request line of bytes node's parser refused: no request was made of them, so there are no facts to read.
    allowed: ['http/unparsable.ts'],
    within: STAGES,
  },
  {
    pattern: /(?<!delete\s+)\bheaders\[['"](content-type|content-length|transfer-encoding)['"]\](?!\s*=[^=])/,
    why: "reading the request's Content-Type or framing: the edge's facts carry them (media, declared)",
    allowed: [EDGE],
    within: STAGES,
  },
  // drift (src/proxy/drift-cli.ts) is a client replaying a recording, no server: it names each recorded request's operation once, for its response schema.
  { pattern: /\bnew Routes\(/, why: 'a second route table: the match stage writes the operation on the facts, response validation reads it', allowed: ['http/pipeline.ts', 'proxy/proxy.ts', 'proxy/drift-cli.ts'] },
];

const applies = (rule: Rule, path: string): boolean => !rule.allowed.includes(path) && (rule.within === undefined || rule.within.some((folder) => path.startsWith(folder)));

const offences = (path: string, text: string): string[] => offendingLines(path, text, RULES.filter((rule) => applies(rule, path)));

describe('request facts: worked out once at the edge, read by every stage', () => {
  it('reads every module of src, the edge and the stages among them', () => {
    expect(modules.length).toBeGreaterThan(150);
    for (const path of [EDGE, 'http/media-type.ts', 'http/body.ts', 'http/validate.ts', 'http/shared-use.ts', 'http/request-logging.ts', 'http/response-validation.ts', 'http/match.ts']) expect(modules).toContain(path);
  });

  it('only the edge reads the target, the Content-Type and the framing; only media-type.ts imports content-type; one route table', () => {
    const found = modules.flatMap((path) => offences(path, readFileSync(`${SRC}${path}`, 'utf8')).map((what) => `src/${path}: ${what}`));
    expect(found).toEqual([]);
  });

  it('each rule catches what it forbids, and not what a comment says', () => {
    const caught: Array<[string, string]> = [
      ['http/body.ts', "import { parse } from 'content-type';"],
      ['http/validate.ts', "const media = parseMediaType(req.headers['content-type'] ?? '');"],
      ['http/request-logging.ts', "import { parse } from 'node:querystring';"],
      ['http/request-logging.ts', 'for (const [name, value] of new URLSearchParams(search)) out[name] = value;'],
      ['http/faults.ts', 'const target = req.url ?? "/";'],
      ['pages/handlers.ts', 'const url = new URL(request.url, base);'],
      ['http/match.ts', "const query = normalized.indexOf('?');"],
      ['http/validate.ts', "const listed = Number(req.headers['content-length'] ?? 0) <= 16384;"],
      ['http/shared-use.ts', "const type = req.headers['content-type'];"],
      ['http/response-validation.ts', 'this.routes = new Routes(document);'],
    ];
    for (const [path, line] of caught) expect(offences(path, `${line}\n`), `${path}: ${line}`).not.toEqual([]);
    const allowed: Array<[string, string]> = [
      [EDGE, "const type = headers['content-type'];"],
      ['http/request-logging.ts', "import type { ParsedUrlQuery } from 'node:querystring';"],
      ['http/reply.ts', "headers['content-type'] = JSON_TYPE;"],
      ['http/reply.ts', "delete headers['content-length'];"],
      ['http/body.ts', "// the old rule read headers['content-length'] and new URLSearchParams(url)"],
      ['http/pipeline.ts', 'const routes = new Routes(options.document);'],
      ['scenarios/http.ts', 'const url = new URL(options.path, this.baseUrl);'],
    ];
    for (const [path, line] of allowed) expect(offences(path, `${line}\n`), `${path}: ${line}`).toEqual([]);
  });
});
