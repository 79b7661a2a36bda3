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
  const ajv = new Ajv2020({ ...options, strict: false, verbose: true, allErrors: false });
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
    const name = field ? `${field}.${extra}` : extra;
    return `${name} ${xMessage(phrased) ?? 'is not an allowed field'}`;
  }
  if (phrased.keyword === 'minProperties') return `${field || 'body'} must contain at least one field`;
  if (phrased.keyword === 'type' && params.type === 'object') return `${field || 'body'} must be a JSON object`;
  const custom = xMessage(phrased);
  if (custom) return join(field || 'body', custom);
  return join(field || 'body', phrased.message ?? 'is invalid');
}
