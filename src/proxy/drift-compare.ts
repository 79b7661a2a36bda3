import { isValidBrCode } from '../rails/pix.js';
import { isValidEndToEndId } from '../rails/pix-e2e.js';
import { isValidClabe } from '../rails/clabe.js';
import { isValidBarcode, isValidDigitableLine } from '../rails/boleto.js';

/**
 * How a recorded answer and the sandbox's answer to the same request are held to each other
 * (contract v5, "Proxy, recording and drift"): presence, JSON type, format and enum membership
 * for every field present in either; exact values only where the client chose them or the spec
 * fixes them. Two readings of one rule: `compareAnswers` (drift: a difference per field) and
 * `expectationOf` (from-har: the scenario matcher the sandbox's answer must pass); both go
 * through `leafRule`, so that the scenario fails where drift reports.
 */

/** A part of openapi.yaml's (dereferenced) JSON Schema, read without trusting its shape. */
type Schema = Record<string, unknown>;

export interface Difference {
  /** A JSON pointer into the answer's body; '' with rule `status` for the status code. */
  pointer: string;
  rule: 'status' | 'presence' | 'type' | 'value' | 'enum' | 'format' | 'state';
  /** The recorded value (undefined: absent). */
  real: unknown;
  /** The sandbox's value (undefined: absent). */
  sandbox: unknown;
  /** What the rule found, when the two values do not say it themselves. */
  note?: string;
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
const schemaList = (value: unknown): Schema[] => (Array.isArray(value) ? value.filter(isObject) : []);

export type JsonType = 'null' | 'boolean' | 'number' | 'string' | 'array' | 'object';
export function jsonType(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  const type = typeof value;
  return type === 'boolean' || type === 'number' || type === 'string' ? type : 'object';
}

const typesOf = (schema: Schema): string[] | undefined => (typeof schema.type === 'string' ? [schema.type] : Array.isArray(schema.type) ? schema.type.filter((t): t is string => typeof t === 'string') : undefined);

function typeFits(schema: Schema, value: unknown): boolean {
  const types = typesOf(schema);
  if (!types) return true;
  const type = jsonType(value);
  return types.some((t) => t === type || (t === 'integer' && typeof value === 'number' && Number.isInteger(value)));
}

const constFits = (schema: Schema, value: unknown): boolean =>
  (!('const' in schema) || schema.const === value) && (!Array.isArray(schema.enum) || schema.enum.includes(value));

/**
 * The schemas that hold for `value` under `schema`: itself, its allOf parts, and of a oneOf or
 * anyOf the first branch that fits the value (its type, consts and enums, on the value and on
 * its own properties: the Transaction variant a `currency` chooses); all of them when none fits.
 */
export function applicable(schema: unknown, value: unknown): Schema[] {
  if (!isObject(schema)) return [];
  const out: Schema[] = [schema];
  for (const part of schemaList(schema.allOf)) out.push(...applicable(part, value));
  for (const key of ['oneOf', 'anyOf'] as const) {
    const branches = schemaList(schema[key]);
    if (branches.length === 0) continue;
    const chosen = branches.find((branch) => fits(branch, value));
    for (const branch of chosen ? [chosen] : branches) out.push(...applicable(branch, value));
  }
  return out;
}

function fits(branch: Schema, value: unknown): boolean {
  const flat = [branch, ...schemaList(branch.allOf).flatMap((part) => applicable(part, value))];
  for (const schema of flat) {
    if (!typeFits(schema, value) || !constFits(schema, value)) return false;
    if (isObject(value) && isObject(schema.properties)) {
      for (const [name, property] of Object.entries(schema.properties)) {
        if (!(name in value) || !isObject(property)) continue;
        if (!typeFits(property, value[name]) || !constFits(property, value[name])) return false;
      }
    }
  }
  return true;
}

/** The schemas of property `name` of an object under `schemas`. */
function propertySchemas(schemas: readonly Schema[], name: string, value: unknown): Schema[] {
  return schemas.flatMap((schema) => (isObject(schema.properties) && isObject(schema.properties[name]) ? applicable(schema.properties[name], value) : []));
}

/** The property names the schemas declare (what the spec says an answer may hold). */
function declaredNames(schemas: readonly Schema[]): string[] {
  return [...new Set(schemas.flatMap((schema) => (isObject(schema.properties) ? Object.keys(schema.properties) : [])))];
}

/** The values the schemas allow, when one of them is an enum or a const; undefined when the field is free. */
export function enumOf(schemas: readonly Schema[]): unknown[] | undefined {
  let allowed: unknown[] | undefined;
  for (const schema of schemas) {
    const values = 'const' in schema ? [schema.const] : Array.isArray(schema.enum) ? schema.enum : undefined;
    if (values) allowed = allowed === undefined ? [...values] : allowed.filter((v) => values.includes(v));
  }
  return allowed;
}

/** A format a string can have: a regular expression a scenario can say, and the check drift makes (stricter where a check digit or CRC exists). */
interface Format {
  name: string;
  regex: string;
  test(value: string): boolean;
}

const regexFormat = (name: string, regex: string): Format => ({ name, regex, test: (value) => new RegExp(regex).test(value) });
const TIMESTAMP = regexFormat('timestamp', '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?(Z|[+-]\\d{2}:\\d{2})$');
const DATE = regexFormat('date', '^\\d{4}-\\d{2}-\\d{2}$');
const UUID = regexFormat('uuid', '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$');
const URL_FORMAT: Format = { name: 'url', regex: '^https?://\\S+$', test: (value) => /^https?:\/\/\S+$/.test(value) && URL.canParse(value) };
const BR_CODE: Format = { name: 'BR Code', regex: '^000201', test: (value) => isValidBrCode(value) };

/** Formats a field's name brings whatever the schema says: the rails' own check digits. */
const BY_NAME: Record<string, Format> = {
  pixCode: BR_CODE,
  endToEndId: { name: 'Pix end-to-end id', regex: '^E[0-9]{8}[0-9]{12}[A-Za-z0-9]{11}$', test: isValidEndToEndId },
  clabe: { name: 'CLABE', regex: '^[0-9]{18}$', test: isValidClabe },
  boletoBarcode: { name: 'boleto barcode', regex: '^[0-9]{44}$', test: isValidBarcode },
  boletoDigitableLine: { name: 'boleto digitable line', regex: '^[0-9]{47}$', test: isValidDigitableLine },
};

/** The formats that apply to a string field: those the schema states (format, pattern), its name's, and those the recorded value shows. */
function formatsFor(name: string, schemas: readonly Schema[], real: string): Format[] {
  const out = new Map<string, Format>();
  for (const schema of schemas) {
    if (schema.format === 'date-time') out.set(TIMESTAMP.name, TIMESTAMP);
    if (schema.format === 'uri') out.set(URL_FORMAT.name, URL_FORMAT);
    if (schema.format === 'date') out.set(DATE.name, DATE);
    if (typeof schema.pattern === 'string') out.set(`pattern ${schema.pattern}`, regexFormat(`pattern ${schema.pattern}`, schema.pattern));
  }
  const named = BY_NAME[name];
  if (named) out.set(named.name, named);
  for (const seen of [TIMESTAMP, DATE, UUID, URL_FORMAT, BR_CODE]) if (seen.test(real)) out.set(seen.name, seen);
  return [...out.values()];
}

/** Fields whose values the spec fixes for a given request, compared exactly wherever they are (a webhook's `event` and `external_id` too). */
const EXACT_NAMES: ReadonlySet<string> = new Set(['amount', 'currency', 'method', 'externalId', 'status', 'statusReason', 'event', 'external_id']);
/** Error strings integrations match on, compared exactly in an error answer's top level. */
const ERROR_NAMES: ReadonlySet<string> = new Set(['message', 'error']);

/** What a comparison knows besides the two bodies. */
export interface CompareContext {
  /** The recorded status: an error answer's `message` and `error` are compared exactly. */
  status: number;
  /** The request body's top-level fields the client chose (not carried from an answer): echoed, they must be equal. */
  sent: Record<string, unknown>;
}

/** The rule for one leaf: exact, or by type, enum and formats. */
type LeafRule =
  | { kind: 'exact'; value: unknown }
  | { kind: 'shape'; type: JsonType; enum?: unknown[]; formats: Format[]; /** Formats the recorded value itself fails: then only its own value is like it. */ failed: Format[] };

function leafRule(name: string, depth: number, real: unknown, schemas: readonly Schema[], context: CompareContext): LeafRule {
  const topLevel = depth === 1;
  if (EXACT_NAMES.has(name) && jsonType(real) !== 'object' && jsonType(real) !== 'array') return { kind: 'exact', value: real };
  if (topLevel && context.status >= 400 && ERROR_NAMES.has(name) && typeof real === 'string') return { kind: 'exact', value: real };
  if (topLevel && name in context.sent && context.sent[name] === real) return { kind: 'exact', value: real };
  const allowed = enumOf(schemas);
  if (typeof real !== 'string') return { kind: 'shape', type: jsonType(real), ...(allowed && { enum: allowed }), formats: [], failed: [] };
  const formats = formatsFor(name, schemas, real);
  return { kind: 'shape', type: 'string', ...(allowed && { enum: allowed }), formats: formats.filter((f) => f.test(real)), failed: formats.filter((f) => !f.test(real)) };
}

const nameOf = (pointer: string): string => decodeURIComponent(pointer.slice(pointer.lastIndexOf('/') + 1)).replace(/~1/g, '/').replace(/~0/g, '~');
const child = (pointer: string, key: string): string => `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;

/**
 * Every difference between the recorded answer and the sandbox's, by the contract's rules.
 * `schema` is the operation's response schema for the recorded status (undefined: none).
 */
export function compareAnswers(real: unknown, sandbox: unknown, schema: unknown, context: CompareContext): Difference[] {
  const out: Difference[] = [];
  walk(real, sandbox, applicable(schema, real), '', 0, context, out);
  return out;
}

function walk(real: unknown, sandbox: unknown, schemas: Schema[], pointer: string, depth: number, context: CompareContext, out: Difference[]): void {
  if (real === undefined && sandbox === undefined) return;
  if (real === undefined || sandbox === undefined) {
    out.push({ pointer, rule: 'presence', real, sandbox });
    return;
  }
  const realType = jsonType(real);
  if (realType !== jsonType(sandbox)) {
    out.push({ pointer, rule: 'type', real, sandbox, note: `${realType} · ${jsonType(sandbox)}` });
    return;
  }
  // Lists hold whatever records the account has: compared by type only (the real account has a history the fresh one lacks).
  if (realType === 'array') return;
  if (isObject(real) && isObject(sandbox)) {
    for (const key of new Set([...Object.keys(real), ...Object.keys(sandbox)])) {
      const realValue = real[key];
      walk(realValue, sandbox[key], propertySchemas(schemas, key, realValue ?? sandbox[key]), child(pointer, key), depth + 1, context, out);
    }
    return;
  }
  const rule = leafRule(nameOf(pointer), depth, real, schemas, context);
  if (rule.kind === 'exact') {
    if (real !== sandbox) out.push({ pointer, rule: 'value', real, sandbox });
    return;
  }
  // A recorded value outside the enum is the real side's drift from the spec: the sandbox is held to it only where it says otherwise.
  if (rule.enum && (!rule.enum.includes(sandbox) || (!rule.enum.includes(real) && real !== sandbox))) {
    out.push({ pointer, rule: 'enum', real, sandbox, note: `openapi.yaml allows ${rule.enum.map((v) => JSON.stringify(v)).join(', ')}` });
    return;
  }
  if (typeof sandbox !== 'string') return;
  const broken = rule.formats.filter((f) => !f.test(sandbox));
  if (broken.length > 0) {
    out.push({ pointer, rule: 'format', real, sandbox, note: `sandbox's is no ${broken.map((f) => f.name).join(', no ')}` });
    return;
  }
  const unlike = rule.failed.filter((f) => f.test(sandbox));
  if (unlike.length > 0) out.push({ pointer, rule: 'format', real, sandbox, note: `real's is no ${unlike.map((f) => f.name).join(', no ')}` });
}

/**
 * The scenario matcher (scenarios/README.md's language) that the sandbox's answer passes
 * exactly when compareAnswers finds no difference in it; where the language cannot say a rule
 * (a BR Code's CRC, a list's items, a field the spec does not declare), it says less.
 */
export function expectationOf(real: unknown, schema: unknown, context: CompareContext): unknown {
  return expect(real, applicable(schema, real), '', 0, context);
}

const STRING = { length: { gte: 0 } };
const NUMBER = { oneOf: [{ gte: 0 }, { lt: 0 }] };
const BOOLEAN = { oneOf: [true, false] };
const MATCHER_WORDS: ReadonlySet<string> = new Set(['matches', 'exists', 'oneOf', 'gte', 'lte', 'gt', 'lt', 'length', 'equals']);

function expect(real: unknown, schemas: Schema[], pointer: string, depth: number, context: CompareContext): unknown {
  if (Array.isArray(real)) return { length: { gte: 0 } };
  if (isObject(real)) {
    const keys = Object.keys(real);
    // An object of matcher words would be read as a matcher: such a body is held whole.
    if (keys.length > 0 && keys.every((k) => MATCHER_WORDS.has(k))) return { equals: real };
    const out: Record<string, unknown> = {};
    for (const key of keys) out[key] = expect(real[key], propertySchemas(schemas, key, real[key]), child(pointer, key), depth + 1, context);
    for (const name of declaredNames(schemas)) if (!(name in real)) out[name] = { exists: false };
    return out;
  }
  const rule = leafRule(nameOf(pointer), depth, real, schemas, context);
  if (rule.kind === 'exact' || real === null) return real;
  if (rule.enum && !rule.enum.includes(real)) return real;
  if (rule.enum) return { oneOf: rule.enum };
  if (typeof real === 'number') return NUMBER;
  if (typeof real === 'boolean') return BOOLEAN;
  if (rule.failed.length > 0) return real;
  if (rule.formats.length === 0) return { matches: '^', ...STRING };
  // Every format at once: a lookahead each, unanchored ones (openapi.yaml's `Z$`) free to match anywhere.
  return { matches: `^${rule.formats.map((f) => `(?=[\\s\\S]*?(?:${f.regex}))`).join('')}`, ...STRING };
}
