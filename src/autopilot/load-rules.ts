import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { LineCounter, parseDocument } from 'yaml';
import type { OpenApiDocument } from '../spec/openapi.js';
import type { AutopilotRules } from '../spec/types.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/** The shipped, documented rules: `--autopilot default`. */
export const DEFAULT_RULES_FILE = fileURLToPath(new URL('../../scenarios/autopilot/default.yaml', import.meta.url));

/**
 * Reads a rules file (YAML or JSON) and checks it against openapi.yaml's AutopilotRules,
 * the schema the control API validates with, so a file and a PUT accept the same rules.
 * Errors name the file, line and column.
 */
export function loadRulesFile(path: string, document: OpenApiDocument): AutopilotRules {
  const file = path === 'default' ? DEFAULT_RULES_FILE : path;
  const text = readFileSync(file, 'utf8');
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines });
  const at = (offset: number | undefined): string => {
    const pos = lines.linePos(offset ?? 0);
    return `${file}:${pos.line}:${pos.col}`;
  };
  const [syntax] = doc.errors;
  if (syntax) throw new Error(`${at(syntax.pos[0])}: ${syntax.message.split('\n')[0]}`);
  const rules: unknown = doc.toJS();
  const schema = document.components?.schemas?.AutopilotRules;
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  addFormats(ajv);
  const validate = ajv.compile(schema as object);
  if (!validate(rules)) {
    const error = validate.errors?.[0];
    const path = (error?.instancePath ?? '').split('/').filter(Boolean);
    const node = path.length ? doc.getIn(path.map((p) => (/^\d+$/.test(p) ? Number(p) : p)), true) : doc.contents;
    const range = (node as { range?: [number, number, number] } | null)?.range;
    throw new Error(`${at(range?.[0])}: ${path.join('.') || 'rules'} ${error?.message ?? 'is invalid'}`);
  }
  return rules as AutopilotRules;
}
