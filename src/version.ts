import { readFileSync } from 'node:fs';

// Read once from package.json so the health endpoint and the CLI never disagree.
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
export const VERSION: string = pkg.version;
