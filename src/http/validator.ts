import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, Options } from 'ajv';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS with a default export that NodeNext sees as the module object.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/**
 * openapi-backend's own Ajv speaks draft-07 and validates no formats; 3.1 documents need
 * the 2020-12 dialect, and without formats bad e-mails and dates would pass silently.
 * `verbose` keeps the failing schema so its `x-message` can phrase the error.
 */
export function createAjv(options: Options): Ajv2020 {
  // Every error only where asked (the second look at a request already refused, src/http/validate.ts).
  // validateSchema off: checking a schema against the 2020-12 meta-schema first compiles the
  // meta-schema (~0.4 s, once per Ajv, at each family's first request); the schemas come only
  // from openapi.yaml, which test/spec/schemas-meta.test.ts checks against it instead.
  const ajv = new Ajv2020({ ...options, strict: false, verbose: true, allErrors: options.allErrors === true, validateSchema: false });
  addFormats(ajv);
  // Multipart file fields are checked by the upload handler, not by JSON Schema.
  ajv.addFormat('binary', true);
  return ajv;
}

/** The request part a validation path points into, as openapi-backend builds it. */
const PART = /^\/(requestBody|query|path|header|cookie)(\/|$)/;

function fieldOf(instancePath: string): string {
  const inner = instancePath.replace(PART, '');
  return inner
    .split('/')
    .filter(Boolean)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s, i) => (/^\d+$/.test(s) ? `[${s}]` : i === 0 ? s : `.${s}`))
    .join('');
}

function xMessage(err: ErrorObject): string | undefined {
  const schema = err.parentSchema as { 'x-message'?: unknown } | undefined;
  return typeof schema?.['x-message'] === 'string' ? schema['x-message'] : undefined;
}

/** A key as an error shows it: quoted, a long one cut (the refused key may be as long as a body). */
const shownKey = (key: string): string => JSON.stringify(key.length > 48 ? `${key.slice(0, 48)}…` : key);

function join(field: string, text: string): string {
  return field ? `${field} ${text}` : text;
}

/**
 * One readable sentence naming the field and the rule. Ajv lists the errors of every
 * oneOf branch before the oneOf itself: the schema's own `x-message`, where the spec
 * gives one, says it better than any single branch.
 */
export function describeValidationErrors(errors: ErrorObject[]): string {
  const first = errors[0];
  if (!first) return 'request is invalid';
  if (first.keyword === 'parse') return `request body is not valid JSON: ${first.message ?? ''}`.trim();
  // A key refused by the object's `propertyNames` (metadata's 40 characters): the key named, with its rule.
  if (first.propertyName !== undefined) return `${fieldOf(first.instancePath) || 'body'} key ${shownKey(first.propertyName)} ${xMessage(first) ?? first.message ?? 'is not allowed'}`;
  const sameField = errors.filter((e) => e.instancePath === first.instancePath);
  const phrased = [...sameField].reverse().find((e) => xMessage(e) !== undefined) ?? first;
  const field = fieldOf(phrased.instancePath);
  const params = phrased.params as Record<string, unknown>;

  if (phrased.keyword === 'required') {
    const missing = String(params.missingProperty);
    if (missing === 'requestBody' && phrased.instancePath === '') return 'request body is required';
    // Rules that depend on currency or method say where they apply ("phone is required in COP").
    const context = (phrased.parentSchema as { 'x-context'?: unknown } | undefined)?.['x-context'];
    const where = typeof context === 'string' ? ` ${context}` : '';
    return `${field ? `${field}.` : ''}${missing} is required${where}`;
  }
  if (phrased.keyword === 'additionalProperties' || phrased.keyword === 'unevaluatedProperties') {
    const extra = String(params.additionalProperty ?? params.unevaluatedProperty);
    // A name of nothing (`?=1`, `{"": 1}`) shown as such, or the message would begin with a blank.
    // A name with spaces or quotes quoted as JSON, so that where it ends can be read.
    const shown = extra === '' || /[\s"\\]/.test(extra) ? JSON.stringify(extra) : extra;
    const name = field ? `${field}.${shown}` : shown;
    return `${name} ${xMessage(phrased) ?? 'is not an allowed field'}`;
  }
  if (phrased.keyword === 'minProperties') {
    const fields = settableFields(phrased.parentSchema);
    return `${field || 'body'} must contain at least one field${fields.length > 0 ? `: ${orList(fields)}` : ''}`;
  }
  if (phrased.keyword === 'type' && params.type === 'object') return `${field || 'body'} must be a JSON object`;
  const wrongType = wrongTypeOf(sameField, xMessage(phrased));
  if (wrongType) return join(field || 'body', wrongType);
  const custom = xMessage(phrased);
  if (custom) return join(field || 'body', custom);
  return join(field || 'body', phrased.message ?? 'is invalid');
}

/** The fields an object schema lets one set, in its order: not those it forbids (`not: {}`, imageUrl). */
function settableFields(schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, { not?: unknown }> } | undefined)?.properties ?? {};
  return Object.entries(properties)
    .filter(([, sub]) => sub?.not === undefined)
    .map(([name]) => name);
}

const orList = (names: string[]): string => (names.length <= 1 ? names.join('') : `${names.slice(0, -1).join(', ')} or ${names[names.length - 1] ?? ''}`);

const ARTICLES: Record<string, string> = { string: 'a string', integer: 'an integer', number: 'a number', boolean: 'a boolean', object: 'a JSON object', array: 'an array', null: 'null' };

/** What a JSON value is, as a message names it ("a number", "an array"). */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'number' && Number.isInteger(value)) return 'a number';
  return ARTICLES[typeof value] ?? typeof value;
}

/**
 * "must be a string, not a number" for a value of the wrong JSON type (every error at the
 * field a `type` one, the variants' included): a rule's phrase ("1 to 255 characters long")
 * would send the caller to count characters of a number. Undefined when the field's phrase
 * already names the type ("must be a boolean", "a positive integer number of centavos") or
 * the field takes a list of values, which its phrase names ("must be PIX or BOLETO").
 */
function wrongTypeOf(errors: ErrorObject[], phrase: string | undefined): string | undefined {
  const rules = errors.filter((e) => !['oneOf', 'anyOf', 'allOf', 'if', 'not'].includes(e.keyword));
  if (rules.length === 0 || !rules.every((e) => e.keyword === 'type')) return undefined;
  // A list of the values allowed ("must be PIX or BOLETO") says more than their type.
  const listsValues = (e: ErrorObject): boolean => {
    const schema = e.parentSchema as { enum?: unknown; const?: unknown } | undefined;
    return schema?.enum !== undefined || schema?.const !== undefined;
  };
  if (rules.some(listsValues)) return undefined;
  const expected = [...new Set(rules.flatMap((e) => String((e.params as { type?: unknown }).type ?? '').split(',')).filter((t) => t in ARTICLES))];
  if (expected.length === 0) return undefined;
  const named = (type: string): boolean => new RegExp(`\\b${type === 'object' ? 'object' : type === 'array' ? '(array|list)' : type}\\b`).test(phrase ?? '');
  if (phrase !== undefined && expected.filter((t) => t !== 'null').every(named)) return undefined;
  return `must be ${expected.map((t) => ARTICLES[t]).join(' or ')}, not ${kindOf(rules[0]?.data)}`;
}

/** An error's key among a request's problems: one per field (and per missing or refused name in it). */
function problemKey(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required') return `${error.instancePath}/${String(params.missingProperty)}`;
  if (error.keyword === 'additionalProperties' || error.keyword === 'unevaluatedProperties') return `${error.instancePath}/${String(params.additionalProperty ?? params.unevaluatedProperty)}`;
  if (error.propertyName !== undefined) return `${error.instancePath}#${error.propertyName}`;
  return error.instancePath;
}

/** Where an error is, as a JSON pointer: a missing, refused or badly named member appended to the object's path. */
function pathOf(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  const escape = (name: unknown): string => `/${String(name).replace(/~/g, '~0').replace(/\//g, '~1')}`;
  if (error.keyword === 'required') return error.instancePath + escape(params.missingProperty);
  if (error.keyword === 'additionalProperties' || error.keyword === 'unevaluatedProperties') return error.instancePath + escape(params.additionalProperty ?? params.unevaluatedProperty);
  if (error.propertyName !== undefined) return error.instancePath + escape(error.propertyName);
  return error.instancePath;
}

/** The top-level field a problem key is about ("" for the body itself). */
// What /#.*$/ cut (from the first `#` after the last line break: `.` takes none), found by
// index: the regex retried from every `#` before a line break, quadratic in such a key.
const topField = (key: string): string => {
  const lineEnd = Math.max(key.lastIndexOf('\n'), key.lastIndexOf('\r'), key.lastIndexOf('\u2028'), key.lastIndexOf('\u2029'));
  const mark = key.indexOf('#', lineEnd + 1);
  return fieldOf(mark < 0 ? key : key.slice(0, mark)).split(/[.[]/)[0] ?? '';
};

/**
 * Every problem of a request, each phrased as describeValidationErrors phrases one, in
 * `order` (the body's documented field order; fields it does not declare last, as sent):
 * from a validator that collected every error (Ajv's allErrors), so a body missing seven
 * fields learns all seven in one answer.
 */
export function describeEveryProblem(errors: ErrorObject[], order: readonly string[]): string[] {
  return [...new Set(everyProblem(errors, order).map((problem) => problem.message))];
}

/** One problem of a request: the errors of one field, phrased once, with where it is and the rule it breaks. */
export interface RequestProblem {
  /** Ajv's instance path into the request as openapi-backend builds it (`/requestBody/amount`, `/query/limit`), the missing or refused name appended. */
  path: string;
  /** The JSON Schema keyword of the error phrased (`required`, `minimum`, `format` …). */
  keyword: string;
  message: string;
}

/** describeEveryProblem's problems with where each is and its rule: the proxy reports them as findings (src/proxy). */
export function everyProblem(errors: ErrorObject[], order: readonly string[]): RequestProblem[] {
  // A variant's own `required` or refused names say nothing once the variant is not the one
  // chosen; the `if` that picked a currency's rules repeats what its `then` said.
  const relevant = errors.filter((e) => e.keyword !== 'if' && !(/\/(oneOf|anyOf)\//.test(e.schemaPath) && ['required', 'additionalProperties', 'unevaluatedProperties'].includes(e.keyword)));
  const groups = new Map<string, ErrorObject[]>();
  for (const error of relevant) {
    const key = problemKey(error);
    const group = groups.get(key);
    if (group) group.push(error);
    else groups.set(key, [error]);
  }
  // Each key ranked once, and the texts kept first-seen through a Set: ranked in the comparator
  // and deduplicated by indexOf, 600 unknown fields of a 10 KiB body cost 16 ms of CPU a request.
  const position = new Map<string, number>();
  order.forEach((field, i) => position.has(field) || position.set(field, i));
  const ranked = [...groups.entries()].map(([key, group]) => ({ rank: position.get(topField(key)) ?? order.length, group }));
  // Array.prototype.sort is stable: within a field (and among undeclared ones) Ajv's order stays.
  ranked.sort((a, b) => a.rank - b.rank);
  return ranked.map(({ group }) => {
    const sameField = group.filter((e) => e.instancePath === group[0]?.instancePath);
    const phrased = [...sameField].reverse().find((e) => xMessage(e) !== undefined) ?? group[0];
    return { path: phrased ? pathOf(phrased) : '', keyword: phrased?.keyword ?? 'schema', message: describeValidationErrors(group) };
  });
}
