import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { OPENAPI_PATH } from '../../src/spec/openapi.js';

/**
 * The sandbox's Ajv does not check schemas against the 2020-12 meta-schema at run time (it
 * would compile the meta-schema at each family's first request, src/http/validator.ts): every
 * schema openapi.yaml holds is checked here instead, so a schema Ajv would have refused is
 * still refused before it ships.
 */
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Every schema object of the document with where it sits: components' schemas and each `schema` under paths and webhooks. */
function schemasOf(document: { [key: string]: Json }): Array<[string, Json]> {
  const found: Array<[string, Json]> = [];
  const components = document.components;
  if (components && typeof components === 'object' && !Array.isArray(components)) {
    const schemas = components.schemas;
    if (schemas && typeof schemas === 'object' && !Array.isArray(schemas)) {
      for (const [name, schema] of Object.entries(schemas)) found.push([`#/components/schemas/${name}`, schema]);
    }
  }
  const walk = (node: Json, pointer: string): void => {
    if (node === null || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      const at = `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      if (key === 'schema' && !Array.isArray(node)) found.push([at, value]);
      else walk(value, at);
    }
  };
  walk(document.paths ?? null, '#/paths');
  walk(document.webhooks ?? null, '#/webhooks');
  for (const section of ['parameters', 'responses', 'requestBodies', 'headers'] as const) {
    if (components && typeof components === 'object' && !Array.isArray(components)) walk(components[section] ?? null, `#/components/${section}`);
  }
  return found;
}

function metaProblems(schemas: Array<[string, Json]>): string[] {
  const ajv = new Ajv2020({ strict: false });
  return schemas.flatMap(([at, schema]) => (ajv.validateSchema(schema as object | boolean) ? [] : [`${at}: ${ajv.errorsText(ajv.errors)}`]));
}

describe("openapi.yaml's schemas against the JSON Schema 2020-12 meta-schema", () => {
  const document = parse(readFileSync(OPENAPI_PATH, 'utf8')) as { [key: string]: Json };
  const schemas = schemasOf(document);

  it('finds the schemas of components and of every operation', () => {
    expect(schemas.filter(([at]) => at.startsWith('#/components/schemas/')).length).toBeGreaterThan(50);
    expect(schemas.filter(([at]) => at.startsWith('#/paths/')).length).toBeGreaterThan(100);
    // One body schema per event of the webhooks section.
    expect(schemas.filter(([at]) => /^#\/webhooks\/[^/]+\/post\/requestBody\//.test(at)).length).toBe(8);
  });

  it('every one is a valid schema', () => {
    expect(metaProblems(schemas)).toEqual([]);
  });

  it('the check refuses a schema the meta-schema refuses', () => {
    const problems = metaProblems([
      ['#/bad/type', { type: 'strng' }],
      ['#/bad/minLength', { type: 'string', minLength: -1 }],
      ['#/bad/required', { type: 'object', required: 'name' }],
    ]);
    expect(problems.map((p) => p.split(':')[0])).toEqual(['#/bad/type', '#/bad/minLength', '#/bad/required']);
  });
});
