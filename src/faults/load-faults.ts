import type { OpenApiDocument } from '../spec/openapi.js';
import { loadCheckedFile } from '../spec/load-checked-file.js';
import type { FaultRules } from './faults.js';

/**
 * Reads a fault rules file (`--faults`, YAML or JSON: `{rules: [...]}` or the bare list)
 * and checks it against openapi.yaml's FaultRules, the schema PUT /_sandbox/faults
 * validates with. Errors name the file, line and column.
 */
export function loadFaultsFile(file: string, document: OpenApiDocument): FaultRules {
  return loadCheckedFile(file, document, 'FaultRules', { listKey: 'rules', label: 'rules' }) as FaultRules;
}
