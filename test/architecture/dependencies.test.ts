import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseOptions, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * The architecture rules of .dependency-cruiser.cjs (dependency-cruiser over src/): the
 * domain imports neither src/http nor express, express only where it serves the pages for
 * people, no library's insides (body-parser, express's router, openapi-backend's files), no
 * import cycles, src/store imports nothing above it. There are no exceptions: the config
 * lists no knownViolations.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let options: ICruiseOptions;
beforeAll(async () => {
  options = await extractDepcruiseOptions(join(ROOT, '.dependency-cruiser.cjs'));
});

const edge = (v: { rule: { name: string }; from: string; to: string }): string => `${v.rule.name}: ${v.from} → ${v.to}`;

async function violationsIn(directory: string, baseDir: string): Promise<string[]> {
  const result = await cruise([directory], { ...options, knownViolations: [], validate: true, baseDir }, {}, { tsConfig: extractTSConfig(join(ROOT, 'tsconfig.json')) });
  const output = result.output as ICruiseResult;
  return output.summary.violations.map(edge).sort();
}

describe('architecture rules (dependency-cruiser)', () => {
  it('src breaks none of them, and the config lists no exceptions', async () => {
    expect(options.knownViolations ?? []).toEqual([]);
    // A violation: fix it (a domain folder must not import src/http or express; break the cycle; keep src/store at the bottom).
    expect(await violationsIn('src', ROOT)).toEqual([]);
  }, 60_000);

  it('each rule catches what it forbids', async () => {
    const fixture = join(ROOT, 'test/architecture/fixtures/layers');
    const found = await violationsIn('src', fixture);
    // express resolves to the project's node_modules, above the fixture's base directory.
    expect(found.map((v) => v.replace(/→ (\.\.\/)+node_modules\//, '→ node_modules/'))).toEqual([
      'domain-not-to-http: src/catalog/product.ts → node_modules/express/index.js',
      'domain-not-to-http: src/catalog/product.ts → src/http/route.ts',
      'express-for-people-only: src/catalog/product.ts → node_modules/express/index.js',
      'express-for-people-only: src/http/lane.ts → node_modules/express/index.js',
      'no-circular: src/http/route.ts → src/store/table.ts',
      'no-framework-internals: src/http/lane.ts → node_modules/body-parser/index.js',
      'no-framework-internals: src/http/lane.ts → node_modules/openapi-backend/router.js',
      'store-not-above: src/store/table.ts → src/http/route.ts',
    ]);
  }, 60_000);
});
