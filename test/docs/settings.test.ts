import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Every setting of `payments-sandbox start` (each `new Option` of src/cli.ts, its flag and its
 * environment variable) is documented: named in backticks in the README's configuration table or
 * in docs/configuration.md. Read from disk, no sandbox. Hidden (deprecated) options are left out.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string): string => readFileSync(`${ROOT}/${path}`, 'utf8');

const options = read('src/cli.ts')
  .split('\n')
  .filter((line) => line.includes("new Option('--") && !line.includes('hideHelp'))
  .map((line) => ({ flag: /new Option\('(--[a-z-]+)/.exec(line)?.[1], env: /\.env\('([A-Z0-9_]+)'\)/.exec(line)?.[1] }));

const documented = `${read('README.md')}\n${read('docs/configuration.md')}`;

describe('the settings of payments-sandbox start', () => {
  it('are read from src/cli.ts (the parse finds them)', () => {
    expect(options.length).toBeGreaterThan(30);
    expect(options).toContainEqual({ flag: '--listener-wait', env: 'SANDBOX_LISTENER_WAIT' });
  });

  it.each(options.map((o) => [o.flag ?? '?', o] as const))('%s is documented with its environment variable', (_flag, { flag, env }) => {
    expect(documented, `${flag} in README.md or docs/configuration.md`).toContain(`\`${flag}\``);
    if (env !== undefined) expect(documented, `${env} in README.md or docs/configuration.md`).toContain(`\`${env}`);
  });
});
