import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { loadScenario, parseScenario, ScenarioLoadError } from '../../src/scenarios/load.js';
import { SCHEMA_PATH } from '../../src/scenarios/schema.js';
import { ROOT } from '../helpers/process.js';
import { exampleFiles, FIXTURES } from './helpers.js';

/** The error a text fails with. */
function loadError(text: string, file = 'inline.yaml'): ScenarioLoadError {
  try {
    parseScenario(text, file);
  } catch (error) {
    if (error instanceof ScenarioLoadError) return error;
    throw error;
  }
  throw new Error('expected the scenario to be refused');
}

describe('scenario files: load errors name file, line and column', () => {
  it('broken YAML', async () => {
    const file = join(FIXTURES, 'broken-yaml.yaml');
    const error = await loadScenario(file).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ScenarioLoadError);
    const e = error as ScenarioLoadError;
    expect([e.file, e.line, e.column]).toEqual([file, 5, 6]); // the under-indented "body:"
    expect(e.message).toBe(`${file}:5:6: YAML: All mapping items must start at the same column`);
  });

  it('a schema violation deep inside a step points at the value', async () => {
    const file = join(FIXTURES, 'deep-violation.yaml');
    const error = (await loadScenario(file).catch((e: unknown) => e)) as ScenarioLoadError;
    expect(error).toBeInstanceOf(ScenarioLoadError);
    expect(error.message).toBe(`${file}:9:15: step 2 › expectError.pay.rail must be one of "PIX", "BOLETO" (got "TED")`);
  });

  it('an unknown field points at the key and suggests the right one', () => {
    const e = loadError('name: x\nsteps:\n  - purchase:\n      paymentMetod: PIX\n');
    expect([e.line, e.column]).toEqual([4, 7]);
    expect(e.reason).toMatch(/unknown field "paymentMetod" in step 1 › purchase \(did you mean "paymentMethod"\?\)/);
  });

  it('a misspelt step kind, a step with two kinds, a step with none', () => {
    expect(loadError('name: x\nsteps:\n  - payy: {}\n').message).toMatch(/^inline\.yaml:3:5: unknown field "payy" in step 1 \(did you mean "pay"\?\)/);
    expect(loadError('name: x\nsteps:\n  - purchase: {}\n    pay: {}\n').message).toMatch(/^inline\.yaml:3:5: step 1 has 2 kinds \(purchase, pay\)/);
    expect(loadError('name: x\nsteps:\n  - name: nothing to do\n').message).toMatch(/^inline\.yaml:3:5: step 1: a step needs one kind: account, request/);
  });

  it('expect at the step level says where it goes', () => {
    expect(loadError('name: x\nsteps:\n  - purchase: {}\n    expect: { status: 201 }\n').message).toBe('inline.yaml:4:5: "expect" goes inside "purchase:" (indent it under the step\'s kind)');
  });

  it('a missing required field, a bad duration, an empty file', () => {
    expect(loadError('name: x\nsteps:\n  - advanceClock: {}\n').message).toBe('inline.yaml:3:19: step 1 › advanceClock needs "ms"');
    expect(loadError('name: x\nsteps:\n  - advanceClock: { ms: 4 days }\n').reason).toMatch(/advanceClock\.ms must be a number of milliseconds or a duration/);
    expect(loadError('').message).toBe('inline.yaml:1:1: the file is empty: a scenario needs "name" and "steps"');
    expect(loadError('name: x\n').reason).toBe('the scenario needs "steps"');
  });

  it('a template naming a step that has not run yet, or a broken template', () => {
    const e = loadError('name: x\nsteps:\n  - id: buy\n    purchase: {}\n  - pay: { transaction: "{{ steps.bye.response.id }}" }\n');
    expect([e.line, e.column]).toEqual([5, 25]);
    expect(e.reason).toBe('{{ steps.bye… }}: no earlier step has id "bye" (did you mean "buy"?) (ids so far: buy)');
    const later = loadError('name: x\nsteps:\n  - pay: { transaction: "{{ steps.buy.response.id }}" }\n  - id: buy\n    purchase: {}\n');
    expect(later.reason).toMatch(/no earlier step has id "buy"/);
    expect(loadError('name: x\nsteps:\n  - pay: { transaction: "{{ steps..id }}" }\n').reason).toMatch(/is not a path/);
  });

  it('duplicate ids, duplicate keys, a bad regular expression', () => {
    expect(loadError('name: x\nsteps:\n  - id: a\n    purchase: {}\n  - id: a\n    purchase: {}\n').message).toBe('inline.yaml:5:9: step id "a" is already used by step 1');
    expect(loadError('name: x\nsteps:\n  - purchase: {}\n    purchase: {}\n').reason).toMatch(/YAML: Map keys must be unique/);
    const e = loadError('name: x\nsteps:\n  - expectTransaction: { fields: { pixCode: { matches: "([" } } }\n');
    expect(e.reason).toMatch(/^matches: Invalid regular expression/);
    expect(e.line).toBe(3);
  });

  it('account.key does not take the fields of a new account', () => {
    expect(loadError('name: x\naccount: { key: sk_test_sandbox, permissions: [] }\nsteps:\n  - purchase: {}\n').reason).toBe(
      'account.permissions applies to a new account; it cannot be used with account.key',
    );
  });
});

describe('scenario files: what loads', () => {
  it('steps keep their kind, id, name, parameters and position', () => {
    const scenario = parseScenario('name: Demo\nsteps:\n  - id: buy\n    name: buy it\n    purchase: { currency: ARS }\n  - pay: {}\n', 'demo.yaml');
    expect(scenario.name).toBe('Demo');
    expect(scenario.steps).toEqual([
      { index: 0, id: 'buy', name: 'buy it', kind: 'purchase', params: { currency: 'ARS' }, line: 3, column: 5 },
      { index: 1, id: undefined, name: undefined, kind: 'pay', params: {}, line: 6, column: 5 },
    ]);
  });

  it('every example loads', async () => {
    for (const file of exampleFiles()) await expect(loadScenario(join(ROOT, file))).resolves.toMatchObject({ file: join(ROOT, file) });
  });

  it('validates with the JSON Schema shipped in scenarios/, a valid draft 2020-12 schema with descriptions', () => {
    expect(SCHEMA_PATH).toBe(join(ROOT, 'scenarios', 'scenario.schema.json'));
    const schema = JSON.parse(readFileSync(SCHEMA_PATH, 'utf8')) as { $schema: string; $defs: Record<string, { description?: string }> };
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    const ajv = new Ajv2020({ strict: false });
    expect(ajv.validateSchema(schema), JSON.stringify(ajv.errors)).toBe(true);
    for (const [name, def] of Object.entries(schema.$defs)) {
      if (name.endsWith('Step')) expect(def.description, name).toBeTruthy();
    }
  });

  it('every example file points editors at the schema', () => {
    for (const file of exampleFiles()) {
      expect(readFileSync(join(ROOT, file), 'utf8').split('\n')[0], file).toBe('# yaml-language-server: $schema=./scenario.schema.json');
    }
  });
});
