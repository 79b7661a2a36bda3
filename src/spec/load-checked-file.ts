import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { LineCounter, parseDocument } from 'yaml';
import type { OpenApiDocument } from './openapi.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export interface CheckedFileOptions {
  /** A file holding only the list is read as `{[listKey]: list}` (e.g. `rules`). */
  listKey?: string;
  /** What a message calls the whole file when the error is at its top. */
  label?: string;
}

/**
 * Reads a YAML or JSON file and checks it against one of openapi.yaml's schemas, the one the
 * matching control-API call validates with, so a file and a request accept the same thing.
 * Errors name the file, line and column of the offending value.
 */
export function loadCheckedFile(file: string, document: OpenApiDocument, schemaName: string, options: CheckedFileOptions = {}): unknown {
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
  const bare = options.listKey !== undefined && Array.isArray(parsed);
  const value: unknown = bare ? { [options.listKey as string]: parsed } : parsed;
  const schema = document.components?.schemas?.[schemaName];
  if (schema === undefined) throw new Error(`openapi.yaml has no schema ${schemaName}`);
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  addFormats(ajv);
  const validate = ajv.compile(schema as object);
  if (!validate(value)) {
    const error = validate.errors?.[0];
    const path = (error?.instancePath ?? '').split('/').filter(Boolean);
    const inFile = bare ? path.slice(1) : path;
    const node = inFile.length ? doc.getIn(inFile.map((p) => (/^\d+$/.test(p) ? Number(p) : p)), true) : doc.contents;
    const range = (node as { range?: [number, number, number] } | null)?.range;
    throw new Error(`${at(range?.[0])}: ${path.join('.') || options.label || 'file'} ${error?.message ?? 'is invalid'}`);
  }
  return value;
}
