import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT, codePath, packagePath, scriptUrl } from '../src/package-paths.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

describe('package-paths', () => {
  it('finds the package root from the running module, not from the working directory', () => {
    expect(join(PACKAGE_ROOT, '/')).toBe(join(ROOT, '/'));
    expect(JSON.parse(readFileSync(packagePath('package.json'), 'utf8')).name).toBe('payments-sandbox');
    expect(existsSync(packagePath('openapi.yaml'))).toBe(true);
  });

  it('reads files beside the code from src/ under vitest, and runs scripts from dist/ (a worker has no .ts loader)', () => {
    expect(codePath('console/client/')).toBe(join(ROOT, 'src', 'console', 'client', '/'));
    expect(existsSync(codePath('store/postgres/migrations'))).toBe(true);
    expect(fileURLToPath(scriptUrl('store/compact-worker.js'))).toBe(join(ROOT, 'dist', 'store', 'compact-worker.js'));
  });
});
