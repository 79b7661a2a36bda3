import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * Where a read is made is said by its caller, never left out (src/store/ports.ts `Reads`): a
 * function that took its unit as an optional parameter compiled when a caller inside a unit
 * forgot it, and read committed state there, missing the unit's own writes (issue 45: six reads
 * of src/webhooks/deliveries.ts did). This reads every module of src with the type checker and
 * lists each parameter of a function, method, constructor or function type that may be left
 * out or be undefined (`unit?: Unit`, `reads: Reads = …`, `unit: Unit | undefined`) and whose
 * type is a read handle: anything a `Reads` is made of, a `Unit` or a store's own unit class.
 * The store's own views, which are the committed state when they have no unit, are listed below
 * with why: nothing above src/store can reach them.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SRC = `${ROOT}src/`;

/** `file: function(parameter)` → why it may be a read handle or undefined. */
const ALLOWED: ReadonlyMap<string, string> = new Map([
  ['store/embedded/table.ts: UnitTable(unit)', "the embedded table's view: with no unit it is the table's committed records (EmbeddedTable.committed), built only inside src/store"],
  ['store/embedded/jobs.ts: ClockView(unit)', "the embedded clocks' view: with no unit, the stored offsets; built only inside src/store"],
  ['store/embedded/jobs.ts: JobView(unit)', "the embedded jobs' view: with no unit, the stored queue (EmbeddedJobStore.committed); built only inside src/store"],
]);

interface Finding {
  key: string;
  how: string;
}

/** The name of what declares `parameter`: its function, method or class (a constructor), or `(anonymous)`. */
function owner(parameter: ts.ParameterDeclaration): string {
  const signature = parameter.parent;
  if (ts.isConstructorDeclaration(signature)) return signature.parent.name?.text ?? '(anonymous class)';
  const name = 'name' in signature ? signature.name : undefined;
  if (name !== undefined && (ts.isIdentifier(name) || ts.isPrivateIdentifier(name) || ts.isStringLiteral(name))) return name.text;
  const holder = signature.parent;
  if (ts.isVariableDeclaration(holder) || ts.isPropertyAssignment(holder) || ts.isPropertyDeclaration(holder) || ts.isPropertySignature(holder)) {
    if (ts.isIdentifier(holder.name)) return holder.name.text;
  }
  return '(anonymous)';
}

/** How `parameter` may be absent: `?`, a default, or a type that admits undefined; none: it must be given. */
function absence(parameter: ts.ParameterDeclaration): string | undefined {
  if (parameter.questionToken) return 'optional (?)';
  if (parameter.initializer) return 'with a default';
  const type = parameter.type;
  if (type && ts.isUnionTypeNode(type) && type.types.some((t) => t.kind === ts.SyntaxKind.UndefinedKeyword)) return 'typed … | undefined';
  return undefined;
}

function unitParameters(files: readonly string[], readsFrom: string): Finding[] {
  const program = ts.createProgram(files, { strict: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, allowImportingTsExtensions: true, skipLibCheck: true, noEmit: true });
  const checker = program.getTypeChecker();
  const ports = program.getSourceFile(readsFrom);
  const declaration = ports?.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === 'Reads');
  if (declaration === undefined) throw new Error(`no interface Reads in ${readsFrom}`);
  const reads = checker.getTypeAtLocation(declaration.name);
  const found: Finding[] = [];
  for (const file of files) {
    const source = program.getSourceFile(file);
    if (source === undefined) throw new Error(`${file} is not in the program`);
    const visit = (node: ts.Node): void => {
      if (ts.isParameter(node)) {
        const how = absence(node);
        if (how !== undefined) {
          const type = checker.getNonNullableType(checker.getTypeAtLocation(node));
          const any = (type.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown | ts.TypeFlags.Never)) !== 0;
          if (!any && checker.isTypeAssignableTo(type, reads)) {
            const path = file.startsWith(SRC) ? file.slice(SRC.length) : file;
            found.push({ key: `${path}: ${owner(node)}(${node.name.getText(source)})`, how });
          }
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

const modules = readdirSync(SRC, { recursive: true, encoding: 'utf8' })
  .map((path) => path.split('\\').join('/'))
  // The console's browser code runs in a page, far from any unit.
  .filter((path) => path.endsWith('.ts') && !path.startsWith('console/client/'))
  .sort()
  .map((path) => `${SRC}${path}`);

let found: Finding[] = [];
beforeAll(() => {
  found = unitParameters(modules, `${SRC}store/ports.ts`);
}, 60_000);

describe('no read handle may be left out: Reads and Unit parameters are required', () => {
  it('reads every module of src', () => {
    expect(modules.length).toBeGreaterThan(150);
    expect(modules).toContain(`${SRC}webhooks/deliveries.ts`);
  });

  it('no function, method or constructor in src takes a Reads or a Unit that may be left out, but those allowed', () => {
    expect(found.filter(({ key }) => !ALLOWED.has(key)).map(({ key, how }) => `src/${key}: ${how}`)).toEqual([]);
  });

  it('every allowed entry is still there, and says why', () => {
    const keys = new Set(found.map(({ key }) => key));
    expect([...ALLOWED.keys()].filter((key) => !keys.has(key))).toEqual([]);
    for (const [key, why] of ALLOWED) {
      expect(key.startsWith('store/'), key).toBe(true);
      expect(why.length, key).toBeGreaterThan(10);
    }
  });

  it('the check sees what it looks for', () => {
    const probe = fileURLToPath(new URL('./fixtures/unit-parameters/probe.ts', import.meta.url));
    const probePorts = fileURLToPath(new URL('./fixtures/unit-parameters/ports.ts', import.meta.url));
    const keyOf = (key: string) => key.slice(key.lastIndexOf('/') + 1);
    expect(unitParameters([probePorts, probe], probePorts).map(({ key, how }) => `${keyOf(key)}: ${how}`)).toEqual([
      'probe.ts: get(unit): optional (?)',
      'probe.ts: nowMs(reads): with a default',
      'probe.ts: pending(unit): typed … | undefined',
      'probe.ts: Service(reads): optional (?)',
      'probe.ts: owned(view): optional (?)',
      'probe.ts: onRead(unit): optional (?)',
    ]);
  });
});
