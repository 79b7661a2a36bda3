import { loadCheckedFile } from '../spec/load-checked-file.js';
import type { OpenApiDocument } from '../spec/openapi.js';
import type { AutopilotRules } from '../spec/types.js';
import { packagePath } from '../package-paths.js';

/** The shipped, documented rules: `--autopilot default`. */
export const DEFAULT_RULES_FILE = packagePath('scenarios/autopilot/default.yaml');

/**
 * Reads a rules file (YAML or JSON) and checks it against openapi.yaml's AutopilotRules,
 * the schema the control API validates with, so a file and a PUT accept the same rules.
 * Errors name the file, line and column.
 */
export function loadRulesFile(path: string, document: OpenApiDocument): AutopilotRules {
  const file = path === 'default' ? DEFAULT_RULES_FILE : path;
  return loadCheckedFile(file, document, 'AutopilotRules', { label: 'rules' }) as AutopilotRules;
}
