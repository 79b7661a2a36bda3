import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { packagePath } from '../package-paths.js';

// ajv-formats is CommonJS with a default export that NodeNext sees as the module object.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/** scenarios/ sits at the package root, two levels above both src/scenarios and dist/scenarios. */
export const SCHEMA_PATH = packagePath('scenarios/scenario.schema.json');

let compiled: ValidateFunction | undefined;

/** The JSON Schema shipped in scenarios/ (the one editors use), compiled once. */
export function scenarioValidator(): ValidateFunction {
  if (compiled) return compiled;
  const schema = JSON.parse(readFileSync(SCHEMA_PATH, 'utf8')) as Record<string, unknown>;
  const ajv = new Ajv2020({ allErrors: true, verbose: true, strict: true, strictRequired: false, allowUnionTypes: true });
  addFormats(ajv);
  // The schema's own annotation: the error message of a pattern or type rule.
  ajv.addKeyword({ keyword: 'x-message', schemaType: 'string' });
  compiled = ajv.compile(schema);
  return compiled;
}
