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
  return schema ? walk(schema, body, '') : undefined;
}

/** The top-level fields of an operation's JSON body in the order openapi.yaml declares them (every variant's). */
export function declaredFields(operation: Operation): string[] {
  const requestBody = operation.requestBody as { content?: Record<string, { schema?: Schema }> } | undefined;
  const schema = requestBody?.content?.['application/json']?.schema;
  return schema ? [...new Set(variants(schema).flatMap((s) => Object.keys(s.properties ?? {})))] : [];
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
 * Records are serialised with JSON.stringify, whose recursion overflows the stack a few
 * thousand levels down: a body nested that deep would be a 500 in the store.
 */
export const MAX_BODY_DEPTH = 64;

/** What the checks before schema validation need to know of a body, found in one walk of it. */
export interface BodyShape {
  /** The top-level field (or "body", for an array) that nests deeper than MAX_BODY_DEPTH; the walk stops there. */
  tooDeep: string | undefined;
  /** The first field holding a number JSON cannot represent (1e999 parses as Infinity): stored, it would silently become null. */
  nonFinite: string | undefined;
  /**
   * Some object of the body has a key named like a member of Object.prototype: only then is
   * unknownPrototypeField's walk of the schema (which gathers each level's variants) worth it.
   */
  prototypeName: boolean;
}

/** The body's shape, in one walk that never goes deeper than MAX_BODY_DEPTH + 1 levels. */
export function bodyShape(body: unknown): BodyShape {
  const shape: BodyShape = { tooDeep: undefined, nonFinite: undefined, prototypeName: false };
  if (body === null || typeof body !== 'object') return shape;
  const topLevel = Array.isArray(body) ? (): string => 'body' : (key: string): string => key;
  /** False once a level too deep is found: nothing else matters then. */
  const visit = (value: object, depth: number, path: string, top: string): boolean => {
    if (depth > MAX_BODY_DEPTH) {
      shape.tooDeep = top;
      return false;
    }
    const array = Array.isArray(value);
    for (const [key, child] of Object.entries(value)) {
      if (!array && PROTOTYPE_NAMES.has(key)) shape.prototypeName = true;
      const name = array ? `${path}[${key}]` : path ? `${path}.${key}` : key;
      if (typeof child === 'number') {
        if (shape.nonFinite === undefined && !Number.isFinite(child)) shape.nonFinite = name;
      } else if (child !== null && typeof child === 'object' && !visit(child as object, depth + 1, name, depth === 1 ? topLevel(key) : top)) return false;
    }
    return true;
  };
  visit(body, 1, '', 'body');
  return shape;
}
