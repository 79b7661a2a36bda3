import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * What a sandbox needs lives in its instance: two sandboxes in one process (scenario runs,
 * tests) must not share a queue, a cache or a counter through a module. This reads every
 * module of src/http and lists what it declares at the top level that could change: a
 * `let` or `var`, a collection that is not typed read-only, an instance of any class.
 */
const HTTP = fileURLToPath(new URL('../../src/http/', import.meta.url));

const READONLY_TYPE = /^(readonly |Readonly(Set|Map|Array)<|ReadonlyArray<)/;

function mutableState(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  const found: string[] = [];
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    const constant = (statement.declarationList.flags & ts.NodeFlags.Const) !== 0;
    for (const declaration of statement.declarationList.declarations) {
      const name = declaration.name.getText(source);
      if (!constant) {
        found.push(`${name}: a module-level let/var`);
        continue;
      }
      let init = declaration.initializer;
      const type = declaration.type?.getText(source) ?? '';
      const asConst = init !== undefined && ts.isAsExpression(init) && init.type.getText(source) === 'const';
      while (init && (ts.isAsExpression(init) || ts.isSatisfiesExpression(init) || ts.isParenthesizedExpression(init))) init = init.expression;
      if (!init || READONLY_TYPE.test(type) || asConst) continue;
      if (ts.isNewExpression(init)) found.push(`${name}: new ${init.expression.getText(source)}(…) at module level`);
      else if (ts.isArrayLiteralExpression(init)) found.push(`${name}: an array not typed readonly`);
    }
  }
  return found;
}

describe('src/http keeps no state at module level', () => {
  it('no module declares a let, a writable collection or an object instance at the top level', () => {
    const files = readdirSync(HTTP).filter((name) => name.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(10);
    const found = files.flatMap((name) => mutableState(`${HTTP}${name}`).map((what) => `src/http/${name}: ${what}`));
    expect(found).toEqual([]);
  });

  it('the check sees what it looks for', () => {
    const probe = fileURLToPath(new URL('./fixtures/module-state-probe.ts.txt', import.meta.url));
    expect(mutableState(probe)).toEqual([
      'counter: a module-level let/var',
      'queue: an array not typed readonly',
      'cache: new Map(…) at module level',
      'renderer: new Renderer(…) at module level',
    ]);
  });
});
