import type { ErrorObject } from 'ajv';
import type { Operation } from 'openapi-backend';
import type { OpenApiDocument } from '../spec/openapi.js';
import { withoutTrailingSlashes } from './match.js';

/** An endpoint of the real service the sandbox does not emulate, with what to use instead. */
export interface NotEmulatedEndpoint {
  method: string;
  path: string;
  instead: string;
}

/**
 * The endpoints of the real service (v1 and neighbours) that integrations call and the sandbox
 * does not emulate: openapi.yaml's `x-not-emulated`, so the document stays the one list the
 * router, the docs and the tests read. A malformed entry, or one the document also routes,
 * fails the start rather than answering 501 for the wrong request.
 */
export function notEmulatedEndpoints(document: OpenApiDocument): NotEmulatedEndpoint[] {
  const listed: unknown = 'x-not-emulated' in document ? document['x-not-emulated'] : [];
  if (!Array.isArray(listed)) throw new Error('openapi.yaml: x-not-emulated must be a list');
  return listed.map((entry: unknown, i) => {
    const field = (name: string): string => {
      const value: unknown = entry !== null && typeof entry === 'object' && name in entry ? Reflect.get(entry, name) : undefined;
      if (typeof value !== 'string' || value === '') throw new Error(`openapi.yaml: x-not-emulated[${i}].${name} must be a non-empty string`);
      return value;
    };
    const endpoint = { method: field('method').toUpperCase(), path: field('path'), instead: field('instead') };
    const item: unknown = document.paths?.[endpoint.path];
    if (item !== null && typeof item === 'object' && endpoint.method.toLowerCase() in item) {
      throw new Error(`openapi.yaml: ${endpoint.method} ${endpoint.path} is both an operation and listed in x-not-emulated`);
    }
    return endpoint;
  });
}

/**
 * The 501 message for a request to an endpoint the sandbox does not emulate, naming the method
 * and path; undefined for any other request.
 */
export function notEmulatedCheck(document: OpenApiDocument): (method: string, path: string) => string | undefined {
  const endpoints = notEmulatedEndpoints(document);
  return (method, path) => {
    const trimmed = withoutTrailingSlashes(path);
    const known = endpoints.find((e) => e.method === method && e.path === trimmed);
    return known && `${method} ${path} is not emulated by the sandbox (${known.instead})`;
  };
}

/** Exact texts some validation failures must carry (`x-exact-message: {keyword: text}` in openapi.yaml). */
export function exactValidationMessage(errors: ErrorObject[]): string | undefined {
  const first = errors[0];
  const exact = (first?.parentSchema as { 'x-exact-message'?: Record<string, unknown> } | undefined)?.['x-exact-message'];
  const text = first && exact?.[first.keyword];
  return typeof text === 'string' ? text : undefined;
}

type Schema = {
  $ref?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: unknown;
  unevaluatedProperties?: unknown;
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
  then?: Schema;
  else?: Schema;
  'x-message'?: string;
};

/** Names every plain object has through its prototype: JSON Schema validators may take them as declared. */
const PROTOTYPE_NAMES: ReadonlySet<string> = new Set([...Object.getOwnPropertyNames(Object.prototype), '__proto__']);

/**
 * A body field named like a member of Object.prototype (`constructor`, `toString`,
 * `__proto__` …) where the schema declares no such field and refuses unknown ones: the
 * message every other unknown field gets. Ajv's property checks see those names as
 * present on any object, so they would otherwise pass.
 */
export function unknownPrototypeField(operation: Operation, body: unknown): string | undefined {
  const requestBody = operation.requestBody as { content?: Record<string, { schema?: Schema }> } | undefined;
  const schema = requestBody?.content?.['application/json']?.schema;
  // Nearly every body has no such name anywhere: found first, the schema walk (which gathers
  // each level's variants) runs only for the few that do.
  return schema && hasPrototypeName(body) ? walk(schema, body, '') : undefined;
}

/** The top-level fields of an operation's JSON body in the order openapi.yaml declares them (every variant's). */
export function declaredFields(operation: Operation): string[] {
  const requestBody = operation.requestBody as { content?: Record<string, { schema?: Schema }> } | undefined;
  const schema = requestBody?.content?.['application/json']?.schema;
  return schema ? [...new Set(variants(schema).flatMap((s) => Object.keys(s.properties ?? {})))] : [];
}

function hasPrototypeName(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(hasPrototypeName);
  for (const key of Object.keys(value)) {
    if (PROTOTYPE_NAMES.has(key) || hasPrototypeName((value as Record<string, unknown>)[key])) return true;
  }
  return false;
}

function variants(schema: Schema): Schema[] {
  const out: Schema[] = [schema];
  for (const sub of [...(schema.allOf ?? []), ...(schema.oneOf ?? []), ...(schema.anyOf ?? []), schema.then, schema.else]) {
    if (sub) out.push(...variants(sub));
  }
  return out;
}

function walk(schema: Schema, value: unknown, path: string): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const all = variants(schema);
  const declared = new Map<string, Schema>();
  for (const s of all) for (const [name, sub] of Object.entries(s.properties ?? {})) if (!declared.has(name)) declared.set(name, sub);
  const closed = all.some((s) => s.additionalProperties === false || s.unevaluatedProperties === false);
  const phrase = all.map((s) => s['x-message']).find((m) => m !== undefined) ?? 'is not an allowed field';
  for (const key of Object.keys(value)) {
    const name = path ? `${path}.${key}` : key;
    const sub = declared.get(key);
    if (!sub) {
      if (closed && PROTOTYPE_NAMES.has(key)) return `${name} ${phrase}`;
      continue;
    }
    const nested = walk(sub, (value as Record<string, unknown>)[key], name);
    if (nested) return nested;
  }
  return undefined;
}

/**
 * The first field holding a number JSON cannot represent (1e999 parses as Infinity):
 * stored, it would silently become null.
 */
export function nonFiniteNumberField(body: unknown, path = ''): string | undefined {
  if (typeof body === 'number') return Number.isFinite(body) ? undefined : path || 'body';
  if (body === null || typeof body !== 'object') return undefined;
  for (const [key, value] of Object.entries(body)) {
    const name = Array.isArray(body) ? `${path}[${key}]` : path ? `${path}.${key}` : key;
    const found = nonFiniteNumberField(value, name);
    if (found) return found;
  }
  return undefined;
}
