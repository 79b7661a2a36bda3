import { readFileSync } from 'node:fs';
import { packagePath } from './package-paths.js';

// Read once from package.json so the health endpoint and the CLI never disagree.
const pkg = JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string };
export const VERSION: string = pkg.version;
