import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * What a sandbox needs lives in its instance: two sandboxes in one process (scenario runs,
 * tests) must not share a queue, a cache or a counter through a module. This reads every
 * module of src and lists what it declares at the top level that could change: a `let` or
 * `var`, a collection that is not typed read-only, an instance of any class, an empty object.
 * What may stay at module level is named below, each with why: the one place where the
 * process-wide caches and pools are listed.
 */
const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** Folders not read, with why. */
const NOT_READ: ReadonlyMap<string, string> = new Map([
  ['console/client/', "the console's browser code: a module instance per open page, never loaded by a sandbox"],
]);

/** `file: name` → why it may be module-level state. */
const ALLOWED: ReadonlyMap<string, string> = new Map([
  // Caches and pools: the same for every sandbox of the process, or holding nothing of one.
  ['console/routes.ts: clientCache', "the console's client modules, transpiled once: the same text for every sandbox"],
  ['pages/pix-qr.ts: layouts', 'QR module layouts by symbol size, derived from the size alone (at most 40)'],
  ['pages/pix-qr.ts: scratch', 'one reused buffer for the raw QR image: nothing in it outlives one drawing'],
  ['rails/merchant.ts: transliteration', 'the transliteration module, loaded by the first name outside printable ASCII: the same for every sandbox'],
  ['rails/merchant.ts: merchantNames', "account names transliterated for Pix codes: a pure function's answers, cleared at KEPT_MERCHANT_NAMES"],
  ['rails/random.ts: cryptoWords', 'a pool of random words for generated test data: only fresh randomness, each word used once'],
  ['rails/random.ts: nextWord', 'the position in that pool of words'],
  ['random.ts: pool', 'a pool of random bytes for ids and tokens: only fresh randomness, each byte handed out once'],
  ['random.ts: offset', 'the position in that pool'],
  ['scenarios/schema.ts: compiled', 'the shipped scenario JSON Schema, compiled once: the same for every run'],
  ['store/postgres/sql.ts: names', 'prepared statement names by their text: a name only ever stands for its one text, whichever sandbox sends it (bounded)'],
  ['store/postgres/session.ts: preparedOn', 'the names each connection has prepared, held weakly by the connection: a connection belongs to one sandbox'],
  ['store/lock.ts: heldHere', "the data files this process holds: a lock is the process's, so every sandbox in it must see it"],
  // Constants filled once as the module loads and never written, not typed read-only.
  ['contract/cli.ts: USAGE_ERRORS', 'a constant set of error names'],
  ['contract/states.ts: KNOWN', 'a constant set: the provider states'],
  ['log.ts: SECRET_PATHS', 'a constant list: the redacted log fields'],
  ['log.ts: CONTAINERS', 'a constant list: where the redacted fields are looked for'],
  ['log.ts: REQUEST_FIELDS', 'a constant list: the fields of a request line'],
  ['mock/coherent.ts: TRANSACTION_VERBS', 'a constant list of control calls'],
  ['mock/coherent.ts: WITHDRAWAL_VERBS', 'a constant list of control calls'],
  ['store/postgres/schema.ts: RESERVED_TABLES', "a constant set: the store's own table names"],
  ['webhooks/targets.ts: LINK_LOCAL', 'constant address ranges, filled as the module loads'],
  ['webhooks/targets.ts: METADATA', 'constant address ranges, filled as the module loads'],
  ['webhooks/targets.ts: METADATA_NAMES', 'a constant set of cloud metadata host names'],
]);

const READONLY_TYPE = /^(readonly |Readonly(Set|Map|Array)<|ReadonlyArray<)/;

function mutableState(file: string): { name: string; what: string }[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  const found: { name: string; what: string }[] = [];
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    const constant = (statement.declarationList.flags & ts.NodeFlags.Const) !== 0;
    for (const declaration of statement.declarationList.declarations) {
      const name = declaration.name.getText(source);
      if (!constant) {
        found.push({ name, what: 'a module-level let/var' });
        continue;
      }
      let init = declaration.initializer;
      const type = declaration.type?.getText(source) ?? '';
      const asConst = init !== undefined && ts.isAsExpression(init) && init.type.getText(source) === 'const';
      while (init && (ts.isAsExpression(init) || ts.isSatisfiesExpression(init) || ts.isParenthesizedExpression(init))) init = init.expression;
      if (!init || READONLY_TYPE.test(type) || asConst) continue;
      if (ts.isNewExpression(init)) found.push({ name, what: `new ${init.expression.getText(source)}(…) at module level` });
      else if (ts.isArrayLiteralExpression(init)) found.push({ name, what: 'an array not typed readonly' });
      else if (ts.isObjectLiteralExpression(init) && init.properties.length === 0) found.push({ name, what: 'an empty object at module level' });
    }
  }
  return found;
}

const modules = readdirSync(SRC, { recursive: true, encoding: 'utf8' })
  .map((path) => path.split('\\').join('/'))
  .filter((path) => path.endsWith('.ts') && ![...NOT_READ.keys()].some((folder) => path.startsWith(folder)))
  .sort();

const found = modules.flatMap((path) => mutableState(`${SRC}${path}`).map(({ name, what }) => ({ key: `${path}: ${name}`, what })));

describe('src keeps no state at module level but the caches and pools it names', () => {
  it('reads every module of src', () => {
    expect(modules.length).toBeGreaterThan(150);
    expect(modules).toContain('http/pipeline.ts');
    expect(modules).toContain('store/embedded/repository.ts');
  });

  it('no module declares a let, a writable collection, an object instance or an empty object at the top level, but those allowed', () => {
    expect(found.filter(({ key }) => !ALLOWED.has(key)).map(({ key, what }) => `src/${key}: ${what}`)).toEqual([]);
  });

  it('every allowed entry is still there, and says why', () => {
    const keys = new Set(found.map(({ key }) => key));
    expect([...ALLOWED.keys()].filter((key) => !keys.has(key))).toEqual([]);
    for (const [key, why] of [...ALLOWED, ...NOT_READ]) expect(why.length, key).toBeGreaterThan(10);
  });

  it('nothing in src/http is allowed: its state belongs to one sandbox', () => {
    expect([...ALLOWED.keys()].filter((key) => key.startsWith('http/'))).toEqual([]);
  });

  it('the check sees what it looks for', () => {
    const probe = fileURLToPath(new URL('./fixtures/module-state-probe.ts.txt', import.meta.url));
    expect(mutableState(probe).map(({ name, what }) => `${name}: ${what}`)).toEqual([
      'counter: a module-level let/var',
      'queue: an array not typed readonly',
      'cache: new Map(…) at module level',
      'renderer: new Renderer(…) at module level',
      'registry: an empty object at module level',
    ]);
  });
});
