import { readFile } from 'node:fs/promises';
import type { ErrorObject } from 'ajv';
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import { scenarioValidator } from './schema.js';
import { badTemplates, stepRefs } from './template.js';
import { CALL_KINDS, STEP_KINDS, type ReceiverConfig, type Scenario, type ScenarioAccount, type Step, type StepKind } from './types.js';

/** A scenario file that cannot be run: YAML syntax, a schema rule, or a reference that cannot work. */
export class ScenarioLoadError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly column: number,
    readonly reason: string,
  ) {
    super(`${file}:${line}:${column}: ${reason}`);
    this.name = 'ScenarioLoadError';
  }
}

/** Reads, parses and validates one scenario file (YAML, see scenarios/scenario.schema.json). */
export async function loadScenario(file: string): Promise<Scenario> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ScenarioLoadError(file, 1, 1, `cannot read the file: ${(error as Error).message}`);
  }
  return parseScenario(text, file);
}

type YamlNode = unknown;

interface Located {
  node: YamlNode;
  /** The key of the last mapping entry walked through, when there was one. */
  key: YamlNode;
}

/** The YAML node at a data path (keys and array indexes), as deep as it exists. */
function locate(doc: Document, path: readonly string[]): Located {
  let node: YamlNode = doc.contents;
  let key: YamlNode;
  for (const segment of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === segment);
      if (!pair) break;
      key = pair.key;
      node = pair.value ?? pair.key;
    } else if (isSeq(node)) {
      const item: YamlNode = node.items[Number(segment)];
      if (item === undefined) break;
      key = undefined;
      node = item;
    } else break;
  }
  return { node, key };
}

const rangeStart = (node: YamlNode): number | undefined => {
  const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
  return range?.[0];
};

/** The first scalar under `node` whose string value satisfies `test`. */
function findScalar(node: YamlNode, test: (value: string) => boolean): YamlNode {
  if (isScalar(node)) return typeof node.value === 'string' && test(node.value) ? node : undefined;
  if (isMap(node)) {
    for (const pair of node.items) {
      const found = findScalar(pair.value, test);
      if (found) return found;
    }
  }
  if (isSeq(node)) {
    for (const item of node.items) {
      const found = findScalar(item, test);
      if (found) return found;
    }
  }
  return undefined;
}

const dotted = (path: readonly string[]): string => path.reduce((out, part) => (/^\d+$/.test(part) ? `${out}[${part}]` : out ? `${out}.${part}` : part), '');

/** `['steps', '2', 'pay', 'rail']` → `step 3 › pay.rail` (steps counted from 1, as the runner shows them). */
export function displayPath(path: readonly string[]): string {
  if (path[0] === 'steps' && path[1] !== undefined && /^\d+$/.test(path[1])) {
    const rest = dotted(path.slice(2));
    return `step ${Number(path[1]) + 1}${rest ? ` › ${rest}` : ''}`;
  }
  return dotted(path);
}

const pointer = (instancePath: string): string[] =>
  instancePath === '' ? [] : instancePath.slice(1).split('/').map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j] as number;
      row[j] = Math.min((row[j] as number) + 1, (row[j - 1] as number) + 1, previous + (a[i - 1]?.toLowerCase() === b[j - 1]?.toLowerCase() ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length] as number;
}

/** ` (did you mean "pay"?)` when a known word is close. */
function suggestion(word: string, known: readonly string[]): string {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = distance(word, candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(word.length / 3)) ? ` (did you mean "${best}"?)` : '';
}

const json = (value: unknown): string => (value === undefined ? 'nothing' : JSON.stringify(value));

function valueAt(data: unknown, path: readonly string[]): unknown {
  let value = data;
  for (const part of path) value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined;
  return value;
}

interface Problem {
  path: string[];
  /** Point at the key of `path`'s last entry rather than at its value. */
  atKey: boolean;
  message: string;
}

/** One readable problem out of ajv's errors (the most useful one). */
function describeSchemaErrors(errors: ErrorObject[], data: unknown): Problem {
  // Errors inside the "exactly one kind" branches only repeat that the kind is missing.
  const useful = errors.filter((e) => !(e.keyword === 'required' && /\/oneOf\/\d+\/required$/.test(e.schemaPath)));
  const pick =
    useful.find((e) => e.keyword === 'additionalProperties') ??
    [...useful].sort((a, b) => pointer(b.instancePath).length - pointer(a.instancePath).length)[0] ??
    errors[0];
  if (!pick) return { path: [], atKey: false, message: 'is not a valid scenario' };
  const path = pointer(pick.instancePath);
  const where = displayPath(path) || 'the scenario';
  const parent = (pick.parentSchema ?? {}) as Record<string, unknown>;
  const custom = typeof parent['x-message'] === 'string' ? parent['x-message'] : undefined;
  const value = valueAt(data, path);
  const isStep = path.length === 2 && path[0] === 'steps';
  const isExpectError = path.length === 3 && path[0] === 'steps' && path[2] === 'expectError';
  switch (pick.keyword) {
    case 'additionalProperties': {
      const field = String((pick.params as { additionalProperty: string }).additionalProperty);
      const allowed = Object.keys((parent.properties ?? {}) as object);
      const hint = suggestion(field, allowed);
      const kind = isStep ? STEP_KINDS.find((k) => value !== null && typeof value === 'object' && k in value) : undefined;
      if (isStep && kind && (field === 'expect' || field === 'key')) {
        return { path: [...path, field], atKey: true, message: `"${field}" goes inside "${kind}:" (indent it under the step's kind)` };
      }
      const takes = isStep ? `a step has id, name and one kind: ${STEP_KINDS.join(', ')}` : `${where} takes ${allowed.join(', ')}`;
      return { path: [...path, field], atKey: true, message: `unknown field "${field}" in ${where}${hint}; ${takes}` };
    }
    case 'required': {
      const field = String((pick.params as { missingProperty: string }).missingProperty);
      return { path, atKey: false, message: `${where} needs "${field}"` };
    }
    case 'oneOf': {
      if (isStep || isExpectError) {
        const kinds = isStep ? STEP_KINDS : CALL_KINDS;
        const present = kinds.filter((k) => value !== null && typeof value === 'object' && k in value);
        const what = isStep ? 'a step' : 'expectError';
        if (present.length === 0) {
          const known = isStep ? ['id', 'name', ...kinds] : ['status', 'shape', 'message', ...kinds];
          const unknown = Object.keys((value ?? {}) as object).find((k) => !known.includes(k));
          if (unknown !== undefined) {
            return { path: [...path, unknown], atKey: true, message: `${where}: unknown ${isStep ? 'step kind' : 'call'} "${unknown}"${suggestion(unknown, kinds)}; one of: ${kinds.join(', ')}` };
          }
        }
        return present.length === 0
          ? { path, atKey: false, message: `${where}: ${what} needs one kind: ${kinds.join(', ')}` }
          : { path, atKey: false, message: `${where} has ${present.length} kinds (${present.join(', ')}): ${what} does one thing, split it` };
      }
      return { path, atKey: false, message: `${where} ${custom ?? 'does not match any allowed form'} (got ${json(value)})` };
    }
    case 'enum': {
      const allowed = (pick.params as { allowedValues: unknown[] }).allowedValues;
      const hint = typeof value === 'string' ? suggestion(value, allowed.filter((a): a is string => typeof a === 'string')) : '';
      return { path, atKey: false, message: `${where} must be one of ${allowed.map((a) => JSON.stringify(a)).join(', ')} (got ${json(value)})${hint}` };
    }
    case 'type':
      return { path, atKey: false, message: `${where} ${custom ?? `must be ${String((pick.params as { type: string | string[] }).type).replace(/,/g, ' or ')}`} (got ${json(value)})` };
    case 'minItems':
      return { path, atKey: false, message: `${where} must not be empty` };
    default:
      return { path, atKey: false, message: `${where} ${custom ?? pick.message ?? 'is invalid'} (got ${json(value)})` };
  }
}

/** Parses a scenario from YAML text; `file` is only used in messages. */
export function parseScenario(text: string, file: string): Scenario {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true, merge: true });
  const fail = (offset: number | undefined, reason: string): never => {
    const { line, col } = offset === undefined ? { line: 1, col: 1 } : lineCounter.linePos(offset);
    throw new ScenarioLoadError(file, line, col, reason);
  };
  const failAt = (path: readonly string[], reason: string, atKey = false): never => {
    const { node, key } = locate(doc, path);
    return fail(rangeStart(atKey && key ? key : node), reason);
  };

  const syntax = doc.errors[0];
  if (syntax) {
    // Point at the offending text rather than at the indentation before it.
    let offset = syntax.pos[0];
    while (offset < text.length && (text[offset] === ' ' || text[offset] === '\t')) offset++;
    fail(offset, `YAML: ${syntax.message.split('\n')[0] ?? syntax.code}`);
  }
  if (doc.contents === null) fail(0, 'the file is empty: a scenario needs "name" and "steps"');
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    fail(0, `YAML: ${(error as Error).message}`);
  }

  const validate = scenarioValidator();
  if (!validate(data)) {
    const problem = describeSchemaErrors(validate.errors ?? [], data);
    failAt(problem.path, problem.message, problem.atKey);
  }

  const raw = data as { name: string; description?: string; account?: ScenarioAccount; receiver?: ReceiverConfig; steps: Record<string, unknown>[] };
  if (raw.account?.key !== undefined) {
    for (const field of ['name', 'permissions'] as const) {
      if (raw.account[field] !== undefined) failAt(['account', field], `account.${field} applies to a new account; it cannot be used with account.key`, true);
    }
  }
  if (raw.account?.webhookSecret !== undefined && raw.account.key === undefined) {
    failAt(['account', 'webhookSecret'], "account.webhookSecret goes with account.key (a new account's secret is known)", true);
  }

  const ids = new Map<string, number>();
  const steps: Step[] = raw.steps.map((entry, index) => {
    const kind = STEP_KINDS.find((k) => k in entry) as StepKind;
    const stepPath = ['steps', String(index)];
    const node = locate(doc, stepPath).node;
    const id = typeof entry.id === 'string' ? entry.id : undefined;
    const params = (entry[kind] ?? {}) as Record<string, unknown>;

    for (const problem of badTemplates(params)) {
      const bad = findScalar(node, (v) => v.includes('{{'));
      fail(rangeStart(bad ?? node), problem);
    }
    for (const ref of stepRefs(params)) {
      if (!ids.has(ref)) {
        const scalar = findScalar(node, (v) => new RegExp(`\\{\\{\\s*steps\\.${ref.replace(/[-]/g, '\\-')}\\b`).test(v));
        const known = [...ids.keys()];
        const reason =
          ref === id
            ? `step "${ref}" refers to itself: {{ steps.${ref}… }} is only known after the step`
            : `{{ steps.${ref}… }}: no earlier step has id "${ref}"${suggestion(ref, known)}${known.length ? ` (ids so far: ${known.join(', ')})` : ''}`;
        fail(rangeStart(scalar ?? node), reason);
      }
    }
    const regexFail = (reason: string, test: (v: string) => boolean): never => fail(rangeStart(findScalar(node, test) ?? node), reason);
    for (const root of matcherRoots(kind, params)) checkRegexes(root, regexFail);
    for (const field of ['message', 'hint'] as const) {
      const text = params[field];
      if (kind !== 'expectError' || typeof text !== 'string' || text.includes('{{')) continue;
      try {
        new RegExp(text);
      } catch (error) {
        regexFail(`${field}: ${(error as Error).message}`, (v) => v === text);
      }
    }
    if (kind === 'expectError') {
      const inner = CALL_KINDS.find((k) => k in params);
      if (inner && (params[inner] as Record<string, unknown> | undefined)?.expect !== undefined) {
        failAt([...stepPath, 'expectError', inner, 'expect'], `expectError checks the answer with its own status, shape and message: remove ${inner}.expect`, true);
      }
    }
    if (id !== undefined) {
      if (ids.has(id)) failAt([...stepPath, 'id'], `step id "${id}" is already used by step ${(ids.get(id) ?? 0) + 1}`);
      ids.set(id, index);
    }
    const { line, col } = lineCounter.linePos(rangeStart(node) ?? 0);
    return { index, id, name: typeof entry.name === 'string' ? entry.name : undefined, kind, params, line, column: col };
  });

  return {
    file,
    name: raw.name,
    ...(raw.description !== undefined && { description: raw.description }),
    ...(raw.account !== undefined && { account: raw.account }),
    ...(raw.receiver !== undefined && { receiver: raw.receiver }),
    steps,
  };
}

/** Where a step's matchers are (a `matches` key elsewhere, e.g. in a request body, is data). */
function matcherRoots(kind: StepKind, params: Record<string, unknown>): unknown[] {
  const expect = params.expect as { body?: unknown; headers?: unknown } | undefined;
  if (kind === 'expectTransaction' || kind === 'expectWithdrawal') return [params.fields];
  if (kind === 'expectBalance') return [params];
  if (kind === 'expectWebhook') return [params.body, params.headers];
  return [expect?.body, expect?.headers];
}

/** Regular expressions written literally in matchers (`matches:`) must compile. */
function checkRegexes(value: unknown, fail: (reason: string, test: (v: string) => boolean) => void, key?: string): void {
  if (typeof value === 'string') {
    if (key === 'matches' && !value.includes('{{')) {
      try {
        new RegExp(value);
      } catch (error) {
        fail(`${key}: ${(error as Error).message}`, (v) => v === value);
      }
    }
  } else if (Array.isArray(value)) {
    for (const item of value) checkRegexes(item, fail);
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) checkRegexes(v, fail, k);
  }
}
