import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { LineCounter, parseDocument } from 'yaml';
import type { OpenApiDocument } from '../spec/openapi.js';
import type { FaultRules } from './faults.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/**
 * Reads a fault rules file (`--faults`, YAML or JSON: `{rules: [...]}` or the bare list)
 * and checks it against openapi.yaml's FaultRules, the schema PUT /_sandbox/faults
 * validates with. Errors name the file, line and column.
 */
export function loadFaultsFile(file: string, document: OpenApiDocument): FaultRules {
  const text = readFileSync(file, 'utf8');
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines });
  const at = (offset: number | undefined): string => {
    const pos = lines.linePos(offset ?? 0);
    return `${file}:${pos.line}:${pos.col}`;
  };
  const [syntax] = doc.errors;
  if (syntax) throw new Error(`${at(syntax.pos[0])}: ${syntax.message.split('\n')[0]}`);
  const parsed: unknown = doc.toJS();
  const bare = Array.isArray(parsed);
  const rules: unknown = bare ? { rules: parsed } : parsed;
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  addFormats(ajv);
  const validate = ajv.compile(document.components?.schemas?.FaultRules as object);
  if (!validate(rules)) {
    const error = validate.errors?.[0];
    const path = (error?.instancePath ?? '').split('/').filter(Boolean);
    const inFile = bare ? path.slice(1) : path;
    const node = inFile.length ? doc.getIn(inFile.map((p) => (/^\d+$/.test(p) ? Number(p) : p)), true) : doc.contents;
    const range = (node as { range?: [number, number, number] } | null)?.range;
    throw new Error(`${at(range?.[0])}: ${path.join('.') || 'rules'} ${error?.message ?? 'is invalid'}`);
  }
  return rules as FaultRules;
}
