import fc from 'fast-check';
import { gzipSync } from 'node:zlib';
import type { OpenApiDocument } from '../../src/spec/openapi.js';
import { notEmulatedEndpoints } from '../../src/http/request-checks.js';

/**
 * fast-check arbitraries of HTTP requests over the operations of openapi.yaml: bodies drawn
 * from each operation's schema (or from valid bodies the caller gives, so requests also get
 * past validation into the handlers), then mutated the way a careless or hostile client
 * would: lone surrogates, NUL, RTL marks, huge and negative numbers, deep nesting, wrong
 * types, prototype names, odd content types, encodings and methods, junk ids and queries.
 */

type Schema = Record<string, unknown>;

export interface FuzzOperation {
  operationId: string;
  method: string;
  /** The path template, e.g. /transactions/{id}. */
  path: string;
  pathParams: string[];
  query: Array<{ name: string; schema: Schema }>;
  /** The request body's media types and JSON schema, if it takes one. */
  body?: { types: string[]; schema: Schema | undefined };
}

export interface FuzzRequest {
  operationId: string;
  method: string;
  /** Path and query, percent-encoded as sent. */
  url: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
  /** Sent with Transfer-Encoding: chunked instead of a Content-Length. */
  chunked: boolean;
  /** What the body was before it was encoded, for the report. */
  describe: string;
}

export interface FuzzContext {
  /** Ids the sandbox knows (products, offers, transactions, deliveries...): junk ids are mixed in. */
  ids: () => string[];
  /** Valid bodies per operationId, to mutate from. */
  validBodies: Partial<Record<string, () => unknown[]>>;
  /** Authorization header values, by weight: the fuzzed account's first. */
  authorizations: Array<{ weight: number; value: string | undefined }>;
  /** Where every URL in a body is pointed (a loopback receiver): the sandbox posts webhooks to what it is given. */
  safeUrl: string;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

export function operationsOf(document: OpenApiDocument): FuzzOperation[] {
  const out: FuzzOperation[] = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      const op = (item as Record<string, unknown> | undefined)?.[method] as Schema | undefined;
      if (!op || typeof op.operationId !== 'string') continue;
      const parameters = [...((item as Schema).parameters as Schema[] | undefined ?? []), ...((op.parameters as Schema[] | undefined) ?? [])];
      const requestBody = op.requestBody as { content?: Record<string, { schema?: Schema }> } | undefined;
      out.push({
        operationId: op.operationId,
        method: method.toUpperCase(),
        path,
        pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string),
        query: parameters.filter((p) => p.in === 'query').map((p) => ({ name: String(p.name), schema: (p.schema as Schema | undefined) ?? {} })),
        body: requestBody?.content
          ? { types: Object.keys(requestBody.content), schema: requestBody.content['application/json']?.schema }
          : undefined,
      });
    }
  }
  return out;
}

// --- hostile values ---------------------------------------------------------------------------

const HOSTILE_TEXTS = [
  '\ud800', '\udfff', 'a\ud83d', '\ude00b', '😀', '\u0000', 'x\u0000y', '\u202e\u200fevil', '\u2066rtl\u2069', '\ufeff',
  '%', '%zz', '%00', '../../etc/passwd', '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf',
  '', ' ', '\t\n\r', 'null', 'undefined', 'NaN', 'Infinity', '1e999', '-0', '<script>alert(1)</script>', "' OR 1=1 --",
  '${7*7}', '{{7*7}}', 'a'.repeat(256), 'é'.repeat(300), '\u0301\u0301\u0301', 'İ', 'ß', '\u00a0',
];

const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_TEXTS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.tuple(fc.string({ maxLength: 10 }), fc.constantFrom('\ud800', '\udbff', '\udc00', '\u0000', '\u202e')).map(([s, c]) => `${s}${c}${s}`) },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 200_000 }).map((n) => 'x'.repeat(n)) },
);

const HOSTILE_NUMBERS = [
  -1, 0, -0, 1.5, 0.1, 1e-320, 1e21, 1e308, -1e308, 2 ** 31, -(2 ** 31) - 1, 2 ** 32, 2 ** 53, 2 ** 53 + 2, -(2 ** 53) - 2,
  Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 9_999_999_999, 10_000_000_000, 99_999_999_999_999_999_999,
];
const hostileNumber: fc.Arbitrary<number> = fc.oneof(fc.constantFrom(...HOSTILE_NUMBERS), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer());

/** Objects with prototype names as keys, built by JSON.parse so that `__proto__` is an own key. */
const PROTOTYPE_OBJECTS = [
  '{"__proto__":{"admin":true,"polluted":1}}',
  '{"constructor":{"prototype":{"polluted":1}}}',
  '{"prototype":null,"toString":"x","valueOf":1,"hasOwnProperty":false}',
  '{"__proto__":null}',
  '{"__defineGetter__":"x","__lookupSetter__":[]}',
];
const prototypeObject = fc.constantFrom(...PROTOTYPE_OBJECTS).map((text) => JSON.parse(text) as unknown);

function nest(depth: number, leaf: unknown, arrays: boolean): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = arrays ? [value] : { a: value };
  return value;
}
const deepValue = fc.tuple(fc.integer({ min: 30, max: 1_500 }), fc.boolean()).map(([depth, arrays]) => nest(depth, 1, arrays));

/** A value of any type, biased to the hostile ones. */
export const junkValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: hostileString },
  { weight: 3, arbitrary: hostileNumber },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, [], {}) },
  { weight: 1, arbitrary: prototypeObject },
  { weight: 1, arbitrary: deepValue },
  { weight: 1, arbitrary: fc.array(hostileString, { maxLength: 5 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 20_000 }).map((n) => Array.from({ length: n }, (_, i) => i)) },
);

// --- values from schemas ----------------------------------------------------------------------

function enumOf(schema: Schema): unknown[] | undefined {
  if (Array.isArray(schema.enum)) return schema.enum as unknown[];
  if ('const' in schema) return [schema.const];
  return undefined;
}

function stringFrom(schema: Schema, ctx: FuzzContext): fc.Arbitrary<string> {
  const format = schema.format;
  if (format === 'uri') return fc.constant(ctx.safeUrl);
  if (format === 'email') return fc.emailAddress();
  if (format === 'date-time') return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
  if (format === 'date') return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
  if (typeof schema.pattern === 'string') {
    try {
      return fc.stringMatching(new RegExp(schema.pattern), { size: 'small' });
    } catch {
      // A pattern fast-check cannot generate from (lookarounds): plain text, which mostly fits.
    }
  }
  const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const maxLength = Math.max(minLength, Math.min(typeof schema.maxLength === 'number' ? schema.maxLength : 24, 24));
  return fc.string({ minLength, maxLength, unit: 'grapheme' });
}

function numberFrom(schema: Schema, integer: boolean): fc.Arbitrary<number> {
  const min = typeof schema.minimum === 'number' ? schema.minimum : -1_000_000;
  const max = typeof schema.maximum === 'number' ? schema.maximum : 1_000_000_000;
  return integer
    ? fc.integer({ min: Math.max(min, Number.MIN_SAFE_INTEGER), max: Math.min(max, Number.MAX_SAFE_INTEGER) })
    : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
}

/** A value of the schema (approximately: conditional rules and cross-field constraints are not followed). */
export function valueOf(schema: Schema | undefined, ctx: FuzzContext, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return fc.constant(null);
  const choices = enumOf(schema);
  if (choices && choices.length > 0) return fc.constantFrom(...choices);
  for (const key of ['oneOf', 'anyOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches) && branches.length > 0) return fc.oneof(...branches.map((branch) => valueOf({ ...schema, [key]: undefined, ...(branch as Schema) }, ctx, depth + 1)));
  }
  const type = schema.type;
  if (Array.isArray(type)) return fc.oneof(...type.map((t) => valueOf({ ...schema, type: t }, ctx, depth)));
  if (type === 'string') return stringFrom(schema, ctx);
  if (type === 'integer') return numberFrom(schema, true);
  if (type === 'number') return numberFrom(schema, false);
  if (type === 'boolean') return fc.boolean();
  if (type === 'null') return fc.constant(null);
  if (type === 'array') {
    const minLength = typeof schema.minItems === 'number' ? schema.minItems : 0;
    return fc.array(valueOf(schema.items as Schema | undefined, ctx, depth + 1), { minLength, maxLength: Math.max(minLength, Math.min(Number(schema.maxItems ?? 3), 3)) });
  }
  const properties = schema.properties as Record<string, Schema> | undefined;
  if (type === 'object' || properties) {
    const required = new Set((schema.required as string[] | undefined) ?? []);
    const entries = Object.entries(properties ?? {}).filter(([, s]) => s.readOnly !== true);
    const model: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [name, child] of entries) model[name] = valueOf(child, ctx, depth + 1);
    return fc.record(model, { requiredKeys: entries.map(([name]) => name).filter((name) => required.has(name)) });
  }
  return fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null));
}

// --- mutations ----------------------------------------------------------------------------------

type Mutation = { kind: 'none' } | { kind: 'replace' | 'delete' | 'add'; at: number[]; value: unknown; key: string };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: 'none' as const }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constantFrom('replace' as const, 'delete' as const, 'add' as const),
      at: fc.array(fc.nat(), { maxLength: 4 }),
      value: junkValue,
      key: fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'unknownField', '', '\u0000', '\ud800', '😀'), fc.string({ maxLength: 8 })),
    }),
  },
);

const isContainer = (v: unknown): v is Record<string, unknown> | unknown[] => v !== null && typeof v === 'object';

/** Sets an own data property, even `__proto__`. */
function put(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** A copy of `value` with the mutation applied where `at` leads (each step picks a child modulo their count). */
function mutate(value: unknown, m: Mutation, depth = 0): unknown {
  if (m.kind === 'none') return value;
  const [step, ...rest] = m.at.slice(depth);
  if (isContainer(value)) {
    const keys = Array.isArray(value) ? value.map((_, i) => String(i)) : Object.keys(value);
    if (step !== undefined && keys.length > 0) {
      const key = keys[step % keys.length] as string;
      const copy = Array.isArray(value) ? [...value] : copyObject(value);
      const child = (value as Record<string, unknown>)[key];
      if (rest.length === 0 || !isContainer(child)) {
        if (m.kind === 'delete') {
          if (Array.isArray(copy)) copy.splice(Number(key), 1);
          else delete (copy as Record<string, unknown>)[key];
        } else if (m.kind === 'replace') {
          if (Array.isArray(copy)) copy[Number(key)] = m.value;
          else put(copy as Record<string, unknown>, key, m.value);
        } else if (Array.isArray(copy)) copy.push(m.value);
        else put(copy as Record<string, unknown>, m.key, m.value);
        return copy;
      }
      const inner = mutate(child, m, depth + 1);
      if (Array.isArray(copy)) copy[Number(key)] = inner;
      else put(copy as Record<string, unknown>, key, inner);
      return copy;
    }
    if (m.kind === 'add' && !Array.isArray(value)) {
      const copy = copyObject(value);
      put(copy, m.key, m.value);
      return copy;
    }
  }
  return m.kind === 'replace' ? m.value : value;
}

function copyObject(value: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) put(copy, key, value[key]);
  return copy;
}

/**
 * Every string in a body that names an http(s) host other than loopback becomes the safe URL.
 * Deeply nested junk (below 100 levels) holds only numbers, and is left as it is.
 */
export function pointUrlsAtLoopback(value: unknown, safeUrl: string, depth = 0): unknown {
  if (typeof value === 'string') return leavesLoopback(value) ? safeUrl : value;
  if (!isContainer(value) || depth > 100) return value;
  if (Array.isArray(value)) return value.map((v) => pointUrlsAtLoopback(v, safeUrl, depth + 1));
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) put(copy, key, pointUrlsAtLoopback(value[key], safeUrl, depth + 1));
  return copy;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);
function leavesLoopback(text: string): boolean {
  for (const candidate of [text, text.trim()]) {
    let url: URL;
    try {
      url = new URL(candidate);
    } catch {
      continue;
    }
    if ((url.protocol === 'http:' || url.protocol === 'https:') && !LOOPBACK.has(url.hostname)) return true;
  }
  return /https?:/i.test(text) && !/^https?:\/\/(127\.0\.0\.1|localhost|\[::1\])[:/]/i.test(text.trim());
}

// --- encodings ---------------------------------------------------------------------------------

type Encoding = 'json' | 'truncated' | 'bom' | 'prototype-text' | 'huge-number' | 'invalid-utf8' | 'nul' | 'empty' | 'scalar' | 'duplicate-keys';

const encoding: fc.Arbitrary<Encoding> = fc.oneof(
  { weight: 12, arbitrary: fc.constant('json' as const) },
  { weight: 1, arbitrary: fc.constantFrom<Encoding>('truncated', 'bom', 'prototype-text', 'huge-number', 'invalid-utf8', 'nul', 'empty', 'scalar', 'duplicate-keys') },
);

function encode(value: unknown, how: Encoding, cut: number): Buffer {
  const text = JSON.stringify(value) ?? 'null';
  switch (how) {
    case 'json':
      return Buffer.from(text);
    case 'truncated':
      return Buffer.from(text.slice(0, cut % Math.max(1, text.length)));
    case 'bom':
      return Buffer.from(`\ufeff${text}`);
    case 'prototype-text':
      return Buffer.from(text.startsWith('{') ? `{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}${text === '{}' ? '' : ','}${text.slice(1)}` : text);
    case 'huge-number':
      return Buffer.from(/\d/.test(text) ? text.replace(/-?\d+(\.\d+)?(e[+-]?\d+)?/i, ['1e999', '-1e999', '123456789012345678901234567890', '1e-999', '-0'][cut % 5] as string) : `{"amount":1e999}`);
    case 'invalid-utf8':
      return Buffer.concat([Buffer.from(text.slice(0, -1)), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(text.slice(-1))]);
    case 'nul':
      return Buffer.from(`${text}\u0000`);
    case 'empty':
      return Buffer.alloc(0);
    case 'scalar':
      return Buffer.from(['null', '42', '"x"', '[]', 'true', '[{}]'][cut % 6] as string);
    case 'duplicate-keys':
      return Buffer.from(text.startsWith('{') && text.length > 2 ? `{"name":1,"name":"x",${text.slice(1)}` : text);
  }
}

/** Lone surrogates as U+FFFD: what a URL can carry (encodeURIComponent throws on them). */
const wellFormed = (text: string): string => text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');

// --- the request ---------------------------------------------------------------------------------

const ODD_TYPES = [
  'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=fuzz', 'application/json; charset=latin1',
  'application/json; charset=utf-16le', 'application/vnd.api+json', 'application/xml', 'application/json;;;', 'image/png',
  'APPLICATION/JSON', 'application/json; charset="utf-8"', '*/*', 'application/octet-stream',
];
const ODD_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'PROPFIND', 'PURGE', 'SEARCH'];

/** A path segment a client might send: a known id, or junk percent-encoded (or raw, badly). */
function segment(ctx: FuzzContext): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant(null).map(() => ctx.ids()).chain((ids) => (ids.length > 0 ? fc.constantFrom(...ids) : fc.constant('1'))).map(encodeURIComponent) },
    { weight: 3, arbitrary: hostileString.map((s) => encodeURIComponent(wellFormed(s)).slice(0, 6_000)) },
    { weight: 2, arbitrary: fc.constantFrom('%', '%zz', '%ED%A0%80', '%F0%9F%98', '%F0%9F%98%80', '%00', '%FF%FE', '..', '.', '%2F', '%2e%2e', '', '99999999999999999999', '-1', '0', '1e3', 'null', '%E2%80%AE') },
  );
}

function queryString(op: FuzzOperation, ctx: FuzzContext): fc.Arbitrary<string> {
  const valid = op.query.map((q) =>
    fc.option(valueOf(q.schema, ctx).map((v) => `${encodeURIComponent(q.name)}=${encodeURIComponent(wellFormed(String(v)))}`), { nil: undefined }),
  );
  const junkParam = fc.oneof(
    fc.tuple(fc.constantFrom(...op.query.map((q) => q.name), '__proto__', 'constructor', 'key', 'token', 'limit', 'a[b]', 'x'), hostileString).map(
      ([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(wellFormed(value)).slice(0, 4_000)}`,
    ),
    fc.constantFrom('limit=-1', 'limit=1e999', 'limit=abc', 'limit=0', 'limit=99999999999999999999', 'limit=1&limit=2', 'active=maybe', 'searchBy=%F0', '%=%', 'a=%zz', '=', '&&', 'startingAfter=%ED%A0%80', 'status=5xx', 'status=999'),
  );
  return fc.tuple(fc.tuple(...valid), fc.array(junkParam, { maxLength: 3 })).map(([parts, junk]) => [...parts.filter((p): p is string => p !== undefined), ...junk].join('&'));
}

function multipartBody(): fc.Arbitrary<{ body: Buffer; type: string }> {
  return fc
    .record({
      field: fc.constantFrom('image', 'file', '', '__proto__'),
      filename: fc.constantFrom('a.png', 'x.gif', '../../etc/passwd', '', 'a"b.png', 'é.png'),
      bytes: fc.oneof(
        fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
        fc.constant(Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex')),
        fc.constant(Buffer.from('GIF89a')),
      ),
      close: fc.boolean(),
    })
    .map(({ field, filename, bytes, close }) => ({
      type: 'multipart/form-data; boundary=fuzzboundary',
      body: Buffer.concat([
        Buffer.from(`--fuzzboundary\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\nContent-Type: image/png\r\n\r\n`),
        bytes,
        Buffer.from(close ? '\r\n--fuzzboundary--\r\n' : '\r\n--fuzz'),
      ]),
    }));
}

export function requestOf(op: FuzzOperation, ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  const valid = ctx.validBodies[op.operationId];
  const base: fc.Arbitrary<unknown> = op.body?.schema
    ? fc.oneof(
        { weight: valid ? 1 : 3, arbitrary: valueOf(op.body.schema, ctx) },
        { weight: valid ? 3 : 0, arbitrary: fc.constant(null).chain(() => (valid ? fc.constantFrom(...valid()) : fc.constant({}))) },
        { weight: 1, arbitrary: junkValue },
      )
    : fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: junkValue });
  const declaredTypes = op.body?.types ?? ['application/json'];
  return fc
    .record({
      method: fc.oneof({ weight: 12, arbitrary: fc.constant(op.method) }, { weight: 1, arbitrary: fc.constantFrom(...ODD_METHODS) }),
      segments: fc.tuple(...op.pathParams.map(() => segment(ctx))),
      query: fc.oneof({ weight: 2, arbitrary: fc.constant('') }, { weight: 1, arbitrary: queryString(op, ctx) }),
      body: base,
      mutation,
      encoding,
      cut: fc.nat(),
      type: fc.oneof(
        { weight: 10, arbitrary: fc.constantFrom(...declaredTypes.map((t) => (t === 'multipart/form-data' ? 'multipart' : t))) },
        { weight: 2, arbitrary: fc.constantFrom(...ODD_TYPES) },
        { weight: 1, arbitrary: fc.constant(undefined) },
      ),
      multipart: multipartBody(),
      contentEncoding: fc.oneof({ weight: 12, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom('gzip', 'gzip-garbage', 'br', 'identity', 'x-unknown') }),
      chunked: fc.oneof({ weight: 8, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
      auth: fc.oneof(...ctx.authorizations.map(({ weight, value }) => ({ weight, arbitrary: fc.constant(value) }))),
      extraHeaders: fc.array(
        fc.tuple(fc.constantFrom('x-trace-id', 'cookie', 'x-api-key', 'origin', 'accept', 'x-forwarded-for', 'prefer', 'if-none-match'), fc.string({ unit: 'grapheme-ascii', maxLength: 40 })),
        { maxLength: 2 },
      ),
    })
    .map((r) => {
      let i = 0;
      const path = op.path.replace(/\{[^}]+\}/g, () => r.segments[i++] ?? '');
      const headers: Record<string, string> = {};
      for (const [name, value] of r.extraHeaders) headers[name] = value;
      if (r.auth !== undefined) headers.authorization = r.auth;
      let body: Buffer | undefined;
      let describe = 'no body';
      if (r.type === 'multipart') {
        body = r.multipart.body;
        headers['content-type'] = r.multipart.type;
        describe = 'multipart';
      } else if (r.body !== undefined || r.type !== undefined) {
        const value = pointUrlsAtLoopback(mutate(r.body, r.mutation), ctx.safeUrl);
        body = encode(value, r.encoding, r.cut);
        if (r.type !== undefined) headers['content-type'] = r.type;
        describe = `${r.encoding} of ${describeValue(value)}`;
      }
      if (body && r.contentEncoding) {
        headers['content-encoding'] = r.contentEncoding === 'gzip-garbage' ? 'gzip' : r.contentEncoding;
        if (r.contentEncoding === 'gzip') body = gzipSync(body);
      }
      return {
        operationId: op.operationId,
        method: r.method,
        url: r.query ? `${path}?${r.query}` : path,
        headers,
        body,
        chunked: r.chunked && body !== undefined,
        describe,
      };
    });
}

function describeValue(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch (error) {
    text = `(unserializable: ${(error as Error).message})`;
  }
  return text.length > 300 ? `${text.slice(0, 300)}… (${text.length} chars)` : text;
}

/** Paths outside openapi.yaml: the v1 endpoints integrations call (501), junk, and the console. */
export const UNROUTED_PATHS = [
  '/transactions/purchase', '/transactions/credit-card', '/transactions/billet', '/transactions/refund/1', '/users/balance', '/withdraws/cash-out',
  '/', '/v2', '/v2/', '/v2/nothing', '/transactions', '/_sandbox', '/_sandbox/', '/_sandbox/docs', '/_sandbox/openapi.yaml', '/_sandbox/nothing',
  '/%F0%9F%98%80', '/%ED%A0%80', '/v2/products/%', '//v2//products', '/v2/products/../offers', '/_sandbox/%2e%2e/health', `/${'a'.repeat(5_000)}`,
];

/**
 * Whether a path still names its operation's template: an empty segment (`/_sandbox/webhooks/`), `.`, `..` or an
 * encoded slash turns it into another path, which the router answers as that other operation (a list, say).
 */
export function stillAimsAt(template: string, path: string): boolean {
  const pattern = template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')).join('(?!\\.{1,2}(?:/|$))[^/]+');
  return new RegExp(`^${pattern}$`).test(path) && !/%2f|(^|\/)(%2e|\.){1,2}(\/|$)/i.test(path);
}

/** The endpoints openapi.yaml lists as not emulated (`x-not-emulated`), each answered 501. */
export function notEmulatedOf(document: OpenApiDocument): { method: string; path: string }[] {
  return notEmulatedEndpoints(document).map(({ method, path }) => ({ method, path }));
}

/**
 * Whether openapi.yaml documents a 501 for this request: an endpoint it lists as not emulated,
 * or an operation whose responses include 501. Any other 501 is a server error like the rest.
 */
export function documents501(document: OpenApiDocument, method: string, url: string): boolean {
  const raw = url.split('?')[0] ?? '/';
  const path = raw.length > 1 ? raw.replace(/\/+$/, '') : raw;
  const upper = method.toUpperCase();
  if (notEmulatedOf(document).some((e) => e.method === upper && e.path === path)) return true;
  return Object.entries(document.paths ?? {}).some(([template, item]) => {
    const operation = (item as Record<string, { responses?: Record<string, unknown> } | undefined>)[method.toLowerCase()];
    if (!operation?.responses?.['501']) return false;
    const pattern = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`);
    return pattern.test(path);
  });
}

// --- what a 400 names ------------------------------------------------------------------------------

/**
 * Every name a request to `op` can hold: the body's fields at any depth (through `$ref`s and
 * variants), its query and path parameters.
 */
export function namesOf(document: OpenApiDocument, op: FuzzOperation): Set<string> {
  const names = new Set<string>([...op.pathParams, ...op.query.map((q) => q.name)]);
  const components = ((document as { components?: { schemas?: Record<string, unknown> } }).components?.schemas ?? {}) as Record<string, unknown>;
  const seen = new Set<unknown>();
  const walk = (schema: unknown): void => {
    if (schema === null || typeof schema !== 'object' || seen.has(schema)) return;
    seen.add(schema);
    const s = schema as Schema;
    if (typeof s.$ref === 'string') walk(components[s.$ref.replace('#/components/schemas/', '')]);
    for (const [name, sub] of Object.entries((s.properties as Record<string, unknown> | undefined) ?? {})) {
      names.add(name);
      walk(sub);
    }
    for (const key of ['items', 'additionalProperties', 'then', 'else', 'if', 'not']) walk(s[key]);
    for (const key of ['allOf', 'oneOf', 'anyOf']) for (const sub of (s[key] as unknown[] | undefined) ?? []) walk(sub);
  };
  // Every media type's schema: a multipart upload's fields are names the request holds too.
  const item = (document.paths?.[op.path] ?? {}) as Record<string, { requestBody?: { content?: Record<string, { schema?: unknown }> } } | undefined>;
  for (const media of Object.values(item[op.method.toLowerCase()]?.requestBody?.content ?? {})) walk(media.schema);
  walk(op.body?.schema);
  return names;
}

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Why a 400's message does not name the field it is about (issue 43: `{}` answered "body must
 * contain at least one field", naming none), or undefined when it does or is about no field: a
 * message that says what a field must be or that it is required leads with a name the request
 * can hold (or the body itself); one that speaks of fields names one, or the one refused.
 */
export function unnamedFieldProblem(names: ReadonlySet<string>, message: string): string | undefined {
  const rule = /^([^\s]+) (?:is required|must |key )/.exec(message);
  if (rule) {
    const top = (rule[1] ?? '').split(/[.[]/)[0] ?? '';
    if (top !== 'body' && top !== 'request' && !names.has(top)) return `"${message}" leads with ${top}, which the request cannot hold`;
  }
  if (/\bfields?\b/.test(message) && !/^(?:"(?:[^"\\]|\\.)*"|\S+) is not\b/.test(message) && ![...names].some((name) => new RegExp(`(^|[^\\w])${escape(name)}([^\\w]|$)`).test(message))) {
    return `"${message}" speaks of a field but names none`;
  }
  return undefined;
}
