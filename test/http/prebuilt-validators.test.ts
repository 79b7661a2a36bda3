import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join } from 'node:path';
import type { Request as RoutedRequest } from 'openapi-backend';
import { afterAll, describe, expect, it } from 'vitest';
import { Routes, type SandboxOperation } from '../../src/http/match.js';
import { loadPrebuiltValidators, warmed, type PrebuiltValidators } from '../../src/http/prebuilt-validators.js';
import { standaloneValidators } from '../../src/http/standalone-validators.js';
import { createSpecValidator } from '../../src/http/validate.js';
import { describeEveryProblem, describeValidationErrors } from '../../src/http/validator.js';
import { declaredFields } from '../../src/http/request-checks.js';
import { digestOf } from '../../src/http/prebuilt-validators.js';
import { loadOpenApi, OPENAPI_PATH, type OpenApiDocument } from '../../src/spec/openapi.js';
import { ROOT } from '../helpers/process.js';

/**
 * The build's compiled validators (scripts/prebuild-validators.mjs) answer every request as the
 * validators compiled at run time do: the same verdict, the same errors, the same sentences.
 * Written here from the sources into a folder of their own (under node_modules, where their
 * `require`s of ajv resolve), so the comparison needs no build.
 */
const document: OpenApiDocument = await loadOpenApi();
const routes = new Routes(document);
const folder = join(ROOT, 'node_modules', '.cache');
mkdirSync(folder, { recursive: true });
const dir = mkdtempSync(join(folder, 'prebuilt-validators-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const { manifest, files } = standaloneValidators(routes, digestOf(OPENAPI_PATH));
for (const [name, code] of files) writeFileSync(join(dir, name), code);
writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
const prebuilt: PrebuiltValidators | undefined = loadPrebuiltValidators(OPENAPI_PATH, dir);

const compiled = { first: createSpecValidator(routes), every: createSpecValidator(routes, { allErrors: true }) };
const fromBuild = prebuilt && { first: createSpecValidator(routes, { prebuilt }), every: createSpecValidator(routes, { allErrors: true, prebuilt }) };

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  enum?: Json[];
  format?: string;
  items?: Schema;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
}

/** Values that break a field's rules in the ways a client gets wrong: the wrong type, empty, negative, huge, a bad format, a value not listed. */
function wrongValuesFor(schema: Schema | undefined): Json[] {
  const values: Json[] = [null, {}, [], '', -1, 1.5, 'x'.repeat(300), 'not-an-email', '2026-13-45', 'NOT_LISTED', true];
  if (schema?.items) values.push([{}], ['']);
  if (schema?.properties) values.push({ unknownField: 1 }, Object.fromEntries(Object.keys(schema.properties).map((key) => [key, {}])));
  return values;
}

function bodySchemaOf(operation: SandboxOperation): Schema | undefined {
  const body = operation.requestBody;
  if (!body || !('content' in body)) return undefined;
  const schema: unknown = body.content['application/json']?.schema;
  return typeof schema === 'object' && schema !== null ? (schema as Schema) : undefined;
}

/** Request cases for one operation: bodies missing everything, each field given each wrong value, junk queries and path values. */
function casesFor(operation: SandboxOperation): RoutedRequest[] {
  const path = operation.path.replace(/\{[^}]+\}/g, 'x%20y');
  const base = { method: operation.method, path, headers: { 'content-type': 'application/json' } };
  const cases: RoutedRequest[] = [{ ...base }, { ...base, query: { limit: '-5', page: 'abc', cursor: '', unknown: 'q', status: 'NOPE' } }, { ...base, query: { limit: ['1', '2'] } }];
  const body = bodySchemaOf(operation);
  if (body) {
    cases.push({ ...base, body: {} }, { ...base, body: [] }, { ...base, body: 'text' }, { ...base, body: null });
    for (const [field, schema] of Object.entries(body.properties ?? {})) {
      for (const value of wrongValuesFor(schema)) cases.push({ ...base, body: { [field]: value } });
    }
    const allWrong = Object.fromEntries(Object.keys(body.properties ?? {}).map((field) => [field, 42]));
    cases.push({ ...base, body: { ...allWrong, extra: 'x' } });
  }
  return cases;
}

/** What a validator answers, as far as anything downstream can see: the verdict, the errors, the message and the hint's problems. */
function answer(validators: typeof compiled, operation: SandboxOperation, request: RoutedRequest): unknown {
  const first = validators.first.validateRequest(structuredClone(request), operation);
  const every = validators.every.validateRequest(structuredClone(request), operation);
  const strip = (errors: typeof first.errors) => (errors ?? []).map(({ instancePath, schemaPath, keyword, params, message, propertyName }) => ({ instancePath, schemaPath, keyword, params, message, propertyName }));
  return {
    valid: first.valid,
    coerced: first.coerced,
    first: strip(first.errors),
    every: strip(every.errors),
    message: first.errors ? describeValidationErrors(first.errors) : null,
    problems: every.errors ? describeEveryProblem(every.errors, declaredFields(operation)) : null,
  };
}

describe('the prebuilt request validators', () => {
  it('are made for every operation of openapi.yaml, both variants, and load', () => {
    expect(prebuilt).toBeDefined();
    const ids = routes.operations.map((operation) => operation.operationId);
    expect(Object.keys(manifest.operations).sort()).toEqual([...ids].sort());
    for (const id of ids) {
      expect(prebuilt?.forOperation('first', id!)?.length, id).toBeGreaterThan(0);
      expect(prebuilt?.forOperation('every', id!)?.length, id).toBe(prebuilt?.forOperation('first', id!)?.length);
    }
  });

  it('answer every case of every operation as the validators compiled at run time do', () => {
    let refused = 0;
    let cases = 0;
    for (const operation of routes.operations) {
      for (const request of casesFor(operation)) {
        const expected = answer(compiled, operation, request);
        expect(answer(fromBuild!, operation, request), `${operation.operationId} ${JSON.stringify(request.body ?? request.query ?? null)}`).toEqual(expected);
        cases++;
        if (!(expected as { valid: boolean }).valid) refused++;
      }
    }
    // The cases reach the errors they are for: most are refused, with every kind of rule.
    expect(cases).toBeGreaterThan(900);
    expect(refused / cases).toBeGreaterThan(0.8);
  });

  it('warmed() loads the named operations\' validators with the sandbox, the variant every request runs, and no others', () => {
    // A folder of their own: the files of the other cases are in the process's require cache already.
    const own = mkdtempSync(join(folder, 'warmed-validators-'));
    try {
      for (const [name, code] of files) writeFileSync(join(own, name), code);
      writeFileSync(join(own, 'manifest.json'), JSON.stringify(manifest));
      const loaded = (): string[] => Object.keys(createRequire(import.meta.url).cache).filter((path) => path.startsWith(own)).map((path) => basename(path)).sort();
      const validators = warmed(loadPrebuiltValidators(OPENAPI_PATH, own), ['createAccount']);
      expect(loaded()).toEqual([...manifest.operations.createAccount!.first].sort());
      expect(validators?.forOperation('first', 'createAccount')).toHaveLength(manifest.operations.createAccount!.first.length);
      expect(warmed(undefined, ['createAccount'])).toBeUndefined();
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });

  it('answer as validators made from the document as a tree, objects copied where the spec shares a $ref (the build\'s JSON copy until 2026-12-03)', () => {
    // What a client can see of an answer: the verdict, the coercion, the 400's message and the hint's problems.
    const visible = (validators: typeof compiled, operation: SandboxOperation, request: RoutedRequest): unknown => {
      const { first, every, ...rest } = answer(validators, operation, request) as { first: unknown; every: unknown };
      return rest;
    };
    const treeRoutes = new Routes(JSON.parse(JSON.stringify(document)) as OpenApiDocument);
    const tree = { first: createSpecValidator(treeRoutes), every: createSpecValidator(treeRoutes, { allErrors: true }) };
    let cases = 0;
    for (const operation of routes.operations) {
      const treeOperation = treeRoutes.operations.find((o) => o.operationId === operation.operationId)!;
      for (const request of casesFor(operation)) {
        expect(visible(fromBuild!, operation, request), `${operation.operationId} ${JSON.stringify(request.body ?? request.query ?? null)}`).toEqual(visible(tree, treeOperation, request));
        cases++;
      }
    }
    expect(cases).toBeGreaterThan(900);
  });

  it('are not used for another spec, another Ajv or a cut manifest', () => {
    const other = join(dir, 'other.yaml');
    writeFileSync(other, 'openapi: 3.1.0\n');
    expect(loadPrebuiltValidators(other, dir)).toBeUndefined();
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ ...manifest, ajv: '0.0.1' }));
    expect(loadPrebuiltValidators(OPENAPI_PATH, dir)).toBeUndefined();
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest).slice(0, 200));
    expect(loadPrebuiltValidators(OPENAPI_PATH, dir)).toBeUndefined();
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
    expect(loadPrebuiltValidators(OPENAPI_PATH, dir)).toBeDefined();
  });
});
