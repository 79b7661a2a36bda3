import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import config, { FAST_FILES, UNIT_FILES } from '../../vitest.config.ts';
import { classify, needsMore, NOT_UNIT, testFiles, UNIT_PROJECT, valueImports } from '../unit-tier.ts';

/**
 * The rule that picks the unit tier (test/unit-tier.ts) on fixtures, and the project
 * vitest.config.ts builds with it. What src/ opens at run time is the guard's
 * (test/unit-guard.ts, test/architecture/unit-guard.test.ts).
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The rule over the fixture repository of test/architecture/fixtures/unit-tier (each file there with .txt appended). */
const FIXTURES = join(ROOT, 'test/architecture/fixtures/unit-tier');
const readFixture = (path: string): string | undefined => (existsSync(join(FIXTURES, `${path}.txt`)) ? readFileSync(join(FIXTURES, `${path}.txt`), 'utf8') : undefined);
const rule = (file: string): string | undefined => needsMore(ROOT, file, readFixture);

describe('the unit tier rule', () => {
  it('takes a file whose imports through test/ need nothing more (src/ is not followed: the guard sees what it opens)', () => {
    expect(rule('test/x/pure.test.ts')).toBeUndefined();
  });

  it('leaves out a file that reaches a server, a process, PostgreSQL or Pact through its helpers, and says through which', () => {
    expect(rule('test/x/sandbox.test.ts')).toBe('test/x/sandbox.test.ts → test/helpers/sandbox.ts imports node:http (sockets)');
    expect(rule('test/x/process.test.ts')).toBe('test/x/process.test.ts → test/helpers/process.ts imports node:child_process (a child process)');
    expect(rule('test/x/postgres.test.ts')).toBe('test/x/postgres.test.ts imports pg (PostgreSQL)');
    expect(rule('test/x/pact.test.ts')).toBe('test/x/pact.test.ts → test/helpers/pact.ts imports @pact-foundation/pact (Pact)');
  });

  it('leaves out property runs, module mocks and the built package', () => {
    expect(rule('test/x/property.test.ts')).toBe('test/x/property.test.ts imports fast-check (a property run)');
    expect(rule('test/x/mocks.test.ts')).toBe('test/x/mocks.test.ts mocks a module (vi.mock: a module graph of its own)');
    expect(rule('test/x/package.test.ts')).toBe('test/x/package.test.ts imports payments-sandbox/testing (the built package (dist/))');
  });

  it('counts no import the compiler erases, does not follow the store switch, and ends on a cycle', () => {
    expect(rule('test/x/types.test.ts')).toBeUndefined();
    // test/helpers/test-store.ts opens PostgreSQL only under SANDBOX_TEST_STORE=postgres; the unit project runs embedded.
    expect(rule('test/x/domain.test.ts')).toBeUndefined();
    expect(rule('test/x/cycle.test.ts')).toBe('test/x/cycle.test.ts → test/helpers/a.ts → test/helpers/b.ts imports node:net (sockets)');
  });

  it('reads the imports of a file as TypeScript leaves them', () => {
    expect(valueImports(readFixture('imports.ts') ?? '')).toEqual(['a', 'b', 'd', 'e', 'g', 'h']);
  });

  it('sorts candidates into the tier and the rest, with the reason for each of the rest', () => {
    const { unit, notUnit } = classify(ROOT, ['test/x/sandbox.test.ts', 'test/x/pure.test.ts', 'test/x/domain.test.ts', 'test/x/via-c.test.ts', 'test/x/via-d.test.ts'], (path) => readFixture(path) ?? '');
    expect(unit).toEqual(['test/x/domain.test.ts', 'test/x/pure.test.ts']);
    expect([...notUnit.keys()]).toEqual(['test/x/sandbox.test.ts', 'test/x/via-c.test.ts', 'test/x/via-d.test.ts']);
    // d reaches node:net only back through c, which was still being read when d was first met from c.
    expect(notUnit.get('test/x/via-d.test.ts')).toBe('test/x/via-d.test.ts → test/helpers/d.ts → test/helpers/c.ts imports node:net (sockets)');
  });
});

describe('the unit project', () => {
  it('is the rule applied to the files of fast, and holds domain tests on the in-memory store', () => {
    const projects = (config.test?.projects ?? []).map((p) => (typeof p === 'object' && 'test' in p ? p.test : undefined));
    const unit = projects.find((p) => p?.name === UNIT_PROJECT);
    expect(unit?.include).toEqual(classify(ROOT, testFiles(ROOT, FAST_FILES.include, FAST_FILES.exclude)).unit);
    expect(unit?.setupFiles).toEqual(['test/unit-guard.ts']);
    expect(projects.find((p) => p?.name === 'fast')).toMatchObject(FAST_FILES);
    expect(UNIT_FILES.length).toBeGreaterThan(20);
    // test/helpers/domain.ts composes the domain on the store of SANDBOX_TEST_STORE, embedded in the unit project.
    expect(UNIT_FILES.filter((file) => readFileSync(join(ROOT, file), 'utf8').includes("from '../helpers/domain.js'")).length).toBeGreaterThan(0);
  });

  it('lists in NOT_UNIT only files that exist and that the import rule alone would take', () => {
    const listed = Object.keys(NOT_UNIT);
    expect(listed.filter((file) => !existsSync(join(ROOT, file)))).toEqual([]);
    // An entry the rule already leaves out is stale: remove it.
    expect(listed.filter((file) => needsMore(ROOT, file, (path) => readFileSync(join(ROOT, path), 'utf8')) !== undefined)).toEqual([]);
    for (const file of listed) expect(UNIT_FILES).not.toContain(file);
  });
});
