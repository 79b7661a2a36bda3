import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { globSync } from 'tinyglobby';

/**
 * Which test files are the `unit` tier (vitest.config.ts): the ones that need no socket, no
 * child process, no worker, no PostgreSQL, no Pact, no browser and no dist/. Decided by a rule,
 * so a new test file is classified without anyone remembering to list it:
 *
 * a file is a unit test unless the value imports it reaches through test/ (its own, its
 * helpers', their helpers'...) include one of NEEDS_MORE. Imports of src/ are not followed: the
 * domain modules import transports they are handed fakes for (the dispatcher imports undici and
 * takes a fake sender); what src/ would open is caught when it happens, by the unit project's
 * guard (test/unit-guard.ts), which fails the test. The few files whose src/ code opens one
 * anyway are NOT_UNIT, each with its reason; the guard names any file that needs adding.
 * Conservative where it cannot tell: an import written in a comment or a string counts.
 *
 * test/helpers/test-store.ts is followed no further: it opens PostgreSQL only under
 * SANDBOX_TEST_STORE=postgres, and the unit project runs with the embedded store.
 */

/** Modules a unit test may not import, directly or through the test helpers: why, for the report. */
export const NEEDS_MORE: ReadonlyArray<readonly [RegExp, string]> = [
  [/^(node:)?(child_process|cluster)$/, 'a child process'],
  [/^(node:)?(net|http|https|http2|tls|dgram)$/, 'sockets'],
  [/^(node:)?worker_threads$/, 'a worker thread'],
  [/^(undici|ws|autocannon|supertest)(\/.*)?$/, 'sockets'],
  [/^(pg|pg-.*)(\/.*)?$/, 'PostgreSQL'],
  [/^@pact-foundation\//, 'Pact'],
  [/^(playwright-core|playwright)(\/.*)?$/, 'a browser'],
  [/^@stoplight\/prism-cli(\/.*)?$/, 'a Prism process'],
  // Property runs: hundreds to thousands of generated cases a file, minutes of CPU on a shared machine.
  [/^fast-check$/, 'a property run'],
  // Checks of the whole repository (the import graph of src/, its modules read by the compiler, types regenerated
  // from openapi.yaml): seconds to tens of seconds each, and no unit's.
  [/^(dependency-cruiser|openapi-typescript|typescript)(\/.*)?$/, 'a whole-repository check'],
  // Repository modules that listen, spawn or need a build, whatever their own imports say.
  [/^src\/(server|bin)\.ts$/, 'a listening server or the CLI'],
  [/^src\/testing\//, 'the test kit (it starts sandboxes)'],
  [/^src\/store\/postgres\//, 'PostgreSQL'],
  [/^(dist|bench|scripts)\//, 'dist/, the bench or a script'],
  [/^payments-sandbox(\/.*)?$/, 'the built package (dist/)'],
];

/** The switch between the stores: embedded (in memory) in the unit project; its PostgreSQL branch is not taken there. */
const STORE_SWITCH = 'test/helpers/test-store.ts';

/**
 * Files the import rule calls unit but whose src/ code opens what a unit test may not (the
 * guard names them), or that cost what a property run costs: each with why. An entry the rule
 * already leaves out fails test/architecture/unit-tier.test.ts.
 */
export const NOT_UNIT: Readonly<Record<string, string>> = {
  'test/pages/qr-renderer.test.ts': 'draws QR codes on a worker thread (src/pages/qr-worker.ts)',
  'test/http/present-transaction.test.ts': "draws the Pix code's QR image on the QR worker thread",
  'test/mock/coherent.test.ts': 'generates every mock answer for ten seeds: a property run without fast-check, 30 s on this shared 2-core machine',
};

/** Candidate test files sorted into the tier and the rest. */
export interface Classified {
  unit: string[];
  /** Every other candidate, with the import chain that takes it out (or the NOT_UNIT reason). */
  notUnit: Map<string, string>;
}

const SPECIFIER =
  /(?:^|[\n;])\s*(import|export)\s+(type\s+)?(?:([\w$*{}\s,]+?)\s+from\s+)?['"]([^'"\n]+)['"]|\bimport\(\s*['"]([^'"\n]+)['"]\s*\)/g;

/** The modules a file imports for their values (type-only imports are erased), as written. */
export function valueImports(source: string): string[] {
  const out: string[] = [];
  for (const m of source.matchAll(SPECIFIER)) {
    const dynamic = m[5];
    if (dynamic !== undefined) {
      out.push(dynamic);
      continue;
    }
    const [, keyword, typeOnly, clause, specifier] = m;
    if (specifier === undefined || typeOnly !== undefined) continue;
    // `export { a } ` without from, or `import x = …`, are not module edges; the regex only matched with a string.
    if (keyword === 'export' && clause === undefined) continue;
    if (clause !== undefined && /^\{[^}]*\}$/.test(clause.trim())) {
      const names = clause.trim().slice(1, -1).split(',').map((n) => n.trim()).filter(Boolean);
      if (names.length > 0 && names.every((n) => n.startsWith('type '))) continue;
    }
    out.push(specifier);
  }
  return out;
}

/** A relative specifier as a repository path (`../../src/app.js` → `src/app.ts`); a package or builtin as written. */
function target(root: string, from: string, specifier: string): string {
  if (!specifier.startsWith('.')) return specifier;
  const path = relative(root, resolve(root, dirname(from), specifier)).split('\\').join('/');
  return path.replace(/\.js$/, '.ts');
}

function reason(module: string): string | undefined {
  return NEEDS_MORE.find(([pattern]) => pattern.test(module))?.[1];
}

/**
 * Why `file` is not a unit test (the shortest chain of imports to what it needs), or undefined
 * if it is. `read` gives a repository file's text (injected so the rule can be tested on
 * fixtures); `parsed` keeps each file's imports between calls.
 */
export function needsMore(root: string, file: string, read: (path: string) => string | undefined, parsed = new Map<string, string[] | string>()): string | undefined {
  // A file's imports as repository paths, or why the file itself is out.
  const edges = (path: string): string[] | string => {
    let known = parsed.get(path);
    if (known === undefined) {
      const source = read(path) ?? '';
      // The unit project shares one module graph between the files of a worker (isolate: false).
      known = /\bvi\.(do)?[mM]ock\(/.test(source) ? 'mocks a module (vi.mock: a module graph of its own)' : valueImports(source).map((specifier) => target(root, path, specifier));
      parsed.set(path, known);
    }
    return known;
  };
  // Breadth first, so the chain reported is a shortest one; each helper once, cycles included.
  const via = new Map<string, string | undefined>([[file, undefined]]);
  const chain = (path: string): string => {
    const steps = [path];
    for (let at = via.get(path); at !== undefined; at = via.get(at)) steps.unshift(at);
    return steps.join(' → ');
  };
  for (const path of via.keys()) {
    const found = edges(path);
    if (typeof found === 'string') return `${chain(path)} ${found}`;
    for (const module of found) {
      const why = reason(module);
      if (why !== undefined) return `${chain(path)} imports ${module} (${why})`;
      if (module.startsWith('test/') && module !== STORE_SWITCH && !via.has(module)) via.set(module, path);
    }
  }
  return undefined;
}

/** Splits `candidates` (repository paths of test files) into the unit tier and the rest. */
export function classify(root: string, candidates: string[], read = (path: string) => readFileSync(join(root, path), 'utf8')): Classified {
  const parsed = new Map<string, string[] | string>();
  const safeRead = (path: string): string | undefined => {
    try {
      return read(path);
    } catch {
      return undefined;
    }
  };
  const unit: string[] = [];
  const notUnit = new Map<string, string>();
  for (const file of [...candidates].sort()) {
    const listed = NOT_UNIT[file];
    const why = listed !== undefined ? `NOT_UNIT: ${listed}` : needsMore(root, file, safeRead, parsed);
    if (why === undefined) unit.push(file);
    else notUnit.set(file, why);
  }
  return { unit, notUnit };
}

/** The test files matching `include` and none of `exclude` (globs relative to root), as repository paths. */
export function testFiles(root: string, include: string[], exclude: string[]): string[] {
  return globSync(include, { cwd: root, ignore: exclude }).sort();
}

/** The name of the unit project in vitest.config.ts. */
export const UNIT_PROJECT = 'unit';

/** Whether this vitest run holds the unit project and no other (`--project unit`), for the global setups. */
export function onlyUnit(project: { vitest: { projects: ReadonlyArray<{ name: string }> } }): boolean {
  const names = project.vitest.projects.map((p) => p.name);
  return names.length > 0 && names.every((name) => name === UNIT_PROJECT);
}
