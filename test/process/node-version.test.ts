import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeVersionProblem } from '../../src/node-check.js';
import { BIN, ROOT } from '../helpers/process.js';

/**
 * A clone or an installed package on a Node older than the engines' 22.19 is told, in one line,
 * to use Node 22 and how; nothing starts. Run for real on an old Node: the machine's default
 * (v20 here), else Node 20 through npx.
 */

// A user's shell: none of the npm_* variables of the `npm test` running this suite.
const cleanEnv = (path: string): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name))),
  PATH: path,
  NO_COLOR: '1',
});
const userPath = (process.env.PATH ?? '').split(delimiter).filter((entry) => !entry.startsWith(ROOT) && entry !== dirname(process.execPath));

function versionOf(node: string): string | undefined {
  const res = spawnSync(node, ['--version'], { encoding: 'utf8' });
  return res.status === 0 ? res.stdout.trim() : undefined;
}

/** The first node on the user's PATH that is too old, else Node 20 fetched by npx (from the npm registry). */
function findOldNode(): string {
  for (const dir of userPath) {
    const node = join(dir, 'node');
    const version = existsSync(node) ? versionOf(node) : undefined;
    if (version && nodeVersionProblem(version, 'x') !== undefined) return node;
  }
  const res = spawnSync('npx', ['-y', '-p', 'node@20', '-c', 'command -v node'], { encoding: 'utf8', env: cleanEnv([dirname(process.execPath), ...userPath].join(delimiter)), timeout: 240_000 });
  const found = res.stdout.trim().split('\n').at(-1) ?? '';
  if (res.status !== 0 || !existsSync(found)) throw new Error(`no Node older than 22.19 found, and npx -p node@20 failed:\n${res.stdout}${res.stderr}`);
  return found;
}

let oldNode = '';
let oldVersion = '';
const dirs: string[] = [];
beforeAll(() => {
  oldNode = findOldNode();
  oldVersion = versionOf(oldNode) ?? '';
}, 300_000);
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Runs `command` with the old Node (and its npm, when it has one beside it) first on PATH. */
function onOldNode(command: string, args: string[], cwd: string): { code: number | null; stdout: string; stderr: string } {
  const res = spawnSync(command, args, { cwd, env: cleanEnv([dirname(oldNode), ...userPath].join(delimiter)), encoding: 'utf8', timeout: 120_000 });
  return { code: res.status, stdout: res.stdout ?? '', stderr: res.stderr ?? '' };
}

const LINE = /^payments-sandbox needs Node\.js 22\.19 or later, this is v\d+\.\d+\.\d+: install Node 22 \(nvm install 22\) or run through npx: npx -y -p node@22 -c '([^']+)'$/;

describe('the Node version check', () => {
  it('accepts 22.19 and later, refuses anything older', () => {
    for (const ok of ['22.19.0', 'v22.23.3', '23.0.0', '24.11.1', '30.1.0']) expect(nodeVersionProblem(ok, 'npm ci'), ok).toBeUndefined();
    for (const old of ['22.18.9', 'v22.0.0', '20.19.5', '18.20.8', '21.99.0']) expect(nodeVersionProblem(old, 'npm ci'), old).toMatch(/^payments-sandbox needs Node\.js 22\.19 or later/);
  });

  it('says the same in the clone (scripts/check-node.mjs) as in the installed CLI', async () => {
    const checker: string = new URL('../../scripts/check-node.mjs', import.meta.url).href;
    const script = (await import(checker)) as { nodeVersionProblem: (v: string, c: string) => string | undefined };
    for (const version of ['20.20.2', '22.18.0', '22.19.0', '24.1.0']) {
      expect(script.nodeVersionProblem(version, 'npm start')).toBe(nodeVersionProblem(version, 'npm start'));
    }
  });

  it(`on an old Node, the CLI prints one line and exits 1 before anything starts`, () => {
    expect(nodeVersionProblem(oldVersion, 'x'), `${oldNode} is ${oldVersion}`).toBeDefined();
    const res = onOldNode(oldNode, [BIN, 'start', '--port', '0', '--in-memory'], ROOT);
    expect(res.code, res.stdout + res.stderr).toBe(1);
    expect(res.stdout).toBe('');
    const lines = res.stderr.trimEnd().split('\n');
    expect(lines, res.stderr).toHaveLength(1);
    expect(LINE.exec(lines[0] ?? '')?.[1]).toBe('npx payments-sandbox start --port 0 --in-memory');
  });

  it('on an old Node, `npm start` in a clone is refused with the line, naming npm start', () => {
    const res = onOldNode('npm', ['start', '--', '--port', '0', '--in-memory'], ROOT);
    expect(res.code, res.stdout + res.stderr).not.toBe(0);
    const line = `${res.stdout}\n${res.stderr}`.split('\n').find((l) => l.startsWith('payments-sandbox needs'));
    expect(LINE.exec(line ?? '')?.[1], res.stdout + res.stderr).toBe('npm start');
    expect(res.stdout).not.toContain('listening on');
  });

  it("on an old Node, `npm ci` runs the clone's preinstall check and stops with the line, naming npm ci", () => {
    // The lifecycle wiring with the old Node's own npm, in a scratch project that has only the
    // clone's engines, preinstall script and checker (a real npm ci would first fetch every dependency).
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string; engines: unknown; scripts: { preinstall: string } };
    expect(manifest.scripts.preinstall).toBe('node scripts/check-node.mjs');
    const dir = mkdtempSync(join(tmpdir(), 'sandbox-node20-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'scripts'));
    copyFileSync(join(ROOT, 'scripts', 'check-node.mjs'), join(dir, 'scripts', 'check-node.mjs'));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: manifest.name, version: manifest.version, private: true, engines: manifest.engines, scripts: { preinstall: manifest.scripts.preinstall } }, null, 2));
    writeFileSync(join(dir, 'package-lock.json'), JSON.stringify({ name: manifest.name, version: manifest.version, lockfileVersion: 3, requires: true, packages: { '': { name: manifest.name, version: manifest.version, engines: manifest.engines } } }, null, 2));
    const res = onOldNode('npm', ['ci', '--no-audit', '--no-fund'], dir);
    expect(res.code, res.stdout + res.stderr).not.toBe(0);
    const line = `${res.stdout}\n${res.stderr}`.split('\n').find((l) => l.startsWith('payments-sandbox needs'));
    expect(LINE.exec(line ?? '')?.[1], res.stdout + res.stderr).toBe('npm ci');
  });
});
