import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureDebianPackages, onPath } from '../helpers/apt.js';

/**
 * The shell blocks of the README and of docs/*.md as the tests run them. A block's marker is an
 * HTML comment on the line before its fence: `<!-- readme-test: walkthrough -->` (run in order,
 * one after the other), `<!-- readme-test: setup -->` (the variables every other block starts
 * from), `<!-- readme-test: not run: <why> -->`; a block without a marker is an example that
 * must run on its own, in any order.
 */
export interface ShellBlock {
  /** 1-based line of the opening fence. */
  line: number;
  code: string;
  marker: string | undefined;
}

/** A block with the document it is in (README.md, docs/faults.md). */
export interface DocumentBlock extends ShellBlock {
  file: string;
}

/** The documents whose ```sh blocks run: the README, then docs/*.md in name order. */
export function documents(root: string): string[] {
  return ['README.md', ...readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)];
}

export function documentBlocks(root: string): DocumentBlock[] {
  return documents(root).flatMap((file) => shellBlocks(readFileSync(join(root, file), 'utf8'), file).map((block) => ({ ...block, file })));
}

export function shellBlocks(markdown: string, file = 'README.md'): ShellBlock[] {
  const lines = markdown.split('\n');
  const blocks: ShellBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```sh') continue;
    const end = lines.indexOf('```', i + 1);
    if (end < 0) throw new Error(`${file}:${i + 1}: a \`\`\`sh block is not closed`);
    let before = i - 1;
    while (before >= 0 && lines[before]?.trim() === '') before--;
    const marker = /^<!-- readme-test: (.+) -->$/.exec(lines[before] ?? '')?.[1];
    blocks.push({ line: i + 1, code: lines.slice(i + 1, end).join('\n'), marker });
    i = end;
  }
  return blocks;
}

/** The `# → text` lines of a block: what it says it prints. `…` stands for anything. */
export const expectedLines = (code: string): string[] => [...code.matchAll(/^# → (.+)$/gm)].map((m) => m[1] ?? '');

/**
 * Whether some whole line of `output` is `expected`, `…` matching any text: `# → 50000` is
 * not satisfied by a line `150000`.
 */
export function printed(output: string, expected: string): boolean {
  const pattern = new RegExp(`^${expected.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
  return output.split('\n').some((line) => pattern.test(line));
}

/** The tools the blocks use (jq, openssl): installed from Debian when missing and this runs as root (test/helpers/apt.ts), else the reader is told how. */
export const ensureTools = (): Promise<string> =>
  ensureDebianPackages({
    packages: ['jq', 'openssl'],
    neededFor: 'The README tests need jq and openssl (brew install jq openssl elsewhere)',
    find: () => (onPath('jq') && onPath('openssl') ? 'jq, openssl' : undefined),
  });

/** mulberry32, so an order can be replayed from its seed. */
export function seededShuffle<T>(items: readonly T[], seed: number): T[] {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/**
 * The environment of a reader's shell: this process's, without what `npx -p node@N -c …` (how CI
 * runs the suite on each Node version) sets for its own command. With `npm_config_call` set, every
 * `npx` a README block runs takes that call as its own and fails with EUSAGE.
 */
export function readerShellEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const name of ['npm_config_call', 'npm_config_package', 'npm_config_yes']) delete env[name];
  return env;
}
