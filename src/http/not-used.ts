import type { Operation } from 'openapi-backend';

/**
 * openapi.yaml's `x-not-used` on a JSON request body: the fields a variant of the body accepts
 * and ignores whatever their value (the spec's "N/U" cells), as a list of
 * `{when: {field: value | [values]}, fields: [names]}`; `null` among a condition's values
 * stands for the field being absent. A client that builds one payload for every currency
 * sends them as null, empty or filled for another currency; the service does not use them,
 * so they are dropped before validation instead of being checked against a type that does
 * not apply.
 */
interface NotUsedRule {
  when: [field: string, values: readonly (string | null)[]][];
  fields: readonly string[];
}

/** The body without the fields its variant does not use: the same object when it has none of them. */
export type IgnoreNotUsed = (operation: Operation, body: unknown) => unknown;

/** Reads every operation's `x-not-used` once, at start: a malformed entry fails the start. */
export function notUsedFields(operations: readonly Operation[]): IgnoreNotUsed {
  const byOperation = new Map<Operation, NotUsedRule[]>();
  for (const operation of operations) {
    const schema = jsonBodySchema(operation);
    if (schema === undefined || !('x-not-used' in schema)) continue;
    byOperation.set(operation, parseRules(schema['x-not-used'], operation.operationId ?? operation.path));
  }
  return (operation, body) => {
    const rules = byOperation.get(operation);
    if (rules === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) return body;
    const fields = body as Readonly<Record<string, unknown>>;
    let kept: Record<string, unknown> | undefined;
    for (const rule of rules) {
      if (!rule.when.every(([field, values]) => values.includes(Object.hasOwn(fields, field) ? (stringOrUndefined(fields[field]) ?? '\0') : null))) continue;
      for (const field of rule.fields) {
        if (!Object.hasOwn(fields, field)) continue;
        kept ??= { ...fields };
        delete kept[field];
      }
    }
    return kept ?? body;
  };
}

// A condition compares strings; any other value (a number, an object) matches no listed value.
const stringOrUndefined = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

function jsonBodySchema(operation: Operation): object | undefined {
  const requestBody: unknown = operation.requestBody;
  if (requestBody === null || typeof requestBody !== 'object' || !('content' in requestBody)) return undefined;
  const content: unknown = requestBody.content;
  if (content === null || typeof content !== 'object' || !('application/json' in content)) return undefined;
  const media: unknown = content['application/json'];
  if (media === null || typeof media !== 'object' || !('schema' in media)) return undefined;
  const schema: unknown = media.schema;
  return schema !== null && typeof schema === 'object' ? schema : undefined;
}

function parseRules(listed: unknown, where: string): NotUsedRule[] {
  const fail = (what: string): never => {
    throw new Error(`openapi.yaml: x-not-used of ${where}: ${what}`);
  };
  if (!Array.isArray(listed)) return fail('must be a list');
  return listed.map((entry: unknown, i): NotUsedRule => {
    if (entry === null || typeof entry !== 'object') return fail(`[${i}] must be an object`);
    const when: unknown = 'when' in entry ? entry.when : undefined;
    const fields: unknown = 'fields' in entry ? entry.fields : undefined;
    if (when === null || typeof when !== 'object' || Array.isArray(when) || Object.keys(when).length === 0) return fail(`[${i}].when must name at least one field`);
    if (!Array.isArray(fields) || fields.length === 0 || !fields.every((f): f is string => typeof f === 'string' && f !== '')) return fail(`[${i}].fields must be a list of field names`);
    const conditions = Object.entries(when).map(([field, value]: [string, unknown]): [string, (string | null)[]] => {
      const values: unknown[] = Array.isArray(value) ? value : [value];
      if (values.length === 0 || !values.every((v): v is string | null => v === null || typeof v === 'string')) return fail(`[${i}].when.${field} must be a string, null, or a list of them`);
      return [field, values];
    });
    const overlap = fields.find((f) => conditions.some(([field]) => field === f));
    if (overlap !== undefined) return fail(`[${i}] ignores ${overlap}, a field its own condition reads`);
    return { when: conditions, fields };
  });
}
