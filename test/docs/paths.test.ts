import { existsSync, globSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The README and docs/*.md name only what exists. Read from disk, no sandbox, no network:
 *
 * - a path under src/, test/, bench/ or scripts/ is a file or folder of the repository (a glob,
 *   `test/store/{a,b}.test.ts` or `test/http/*.test.ts`, matches at least one); `:12-30` after
 *   it is a line range and not part of it; a placeholder is written in angle brackets
 *   (`src/<file>.ts`), where the path stops;
 * - a bare file name in backticks (`transport.ts`) is the name of some file of the repository;
 * - a relative link goes to a file that exists, and its `#anchor` to a heading of that file.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const DOCUMENTS = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

const PATH = /(?<![\w/.$~-])((?:src|test|bench|scripts)\/[\w./*{},-]*)/g;
const BARE_NAME = /`([\w.-]+\.(?:ts|mjs|cjs))(?::[\d,-]+)?`/g;
const LINK = /\]\((?!https?:|mailto:)([^)\s]*)\)/g;

interface Named {
  where: string;
  name: string;
}

/** What a document names, each with its file and line. */
function named(file: string, text: string, pattern: RegExp): Named[] {
  return text.split('\n').flatMap((line, i) => [...line.matchAll(pattern)].map((m) => ({ where: `${file}:${i + 1}`, name: (m[1] ?? '').replace(/[.,]+$/, '') })));
}

const pathExists = (path: string): boolean => (/[*{]/.test(path) ? globSync(path, { cwd: ROOT }).length > 0 : existsSync(join(ROOT, path)));

function repositoryFileNames(dir: string, names = new Set<string>()): Set<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (['node_modules', 'dist', '.git', 'reports'].includes(entry.name)) continue;
    if (entry.isDirectory()) repositoryFileNames(join(dir, entry.name), names);
    else names.add(entry.name);
  }
  return names;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6} (.+)$/.exec(line);
    if (!heading) continue;
    const slug = (heading[1] ?? '').trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    out.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return out;
}

const texts = new Map(DOCUMENTS.map((file) => [file, readFileSync(join(ROOT, file), 'utf8')]));

describe('the README and docs/*.md name only what exists', () => {
  it('every path under src/, test/, bench/ or scripts/', () => {
    const all = DOCUMENTS.flatMap((file) => named(file, texts.get(file) ?? '', PATH));
    expect(all.length).toBeGreaterThan(50);
    expect(all.filter(({ name }) => !pathExists(name)).map(({ where, name }) => `${where}: ${name}`)).toEqual([]);
  });

  it('every bare .ts, .mjs or .cjs file name in backticks', () => {
    const files = repositoryFileNames(ROOT);
    const all = DOCUMENTS.flatMap((file) => named(file, texts.get(file) ?? '', BARE_NAME));
    expect(all.length).toBeGreaterThan(10);
    expect(all.filter(({ name }) => !files.has(name)).map(({ where, name }) => `${where}: ${name}`)).toEqual([]);
  });

  it('every relative link, and its #anchor', () => {
    const broken: string[] = [];
    for (const file of DOCUMENTS) {
      for (const { where, name: link } of named(file, texts.get(file) ?? '', LINK)) {
        const [target = '', anchor] = link.split('#');
        const path = target === '' ? file : relative(ROOT, join(ROOT, dirname(file), target));
        if (!existsSync(join(ROOT, path))) broken.push(`${where}: ${link} (no ${path})`);
        else if (anchor !== undefined && path.endsWith('.md') && !anchors(readFileSync(join(ROOT, path), 'utf8')).has(anchor)) broken.push(`${where}: ${link} (no heading #${anchor} in ${path})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('the checks see what they look for', () => {
    const sample = 'See `src/http/pipeline.ts:12-30`, test/http/*.test.ts, src/<file>.ts and bench/run.mjs.\n(`transport.ts`) [x](docs/store.md#journal)';
    expect(named('sample', sample, PATH).map((n) => n.name)).toEqual(['src/http/pipeline.ts', 'test/http/*.test.ts', 'src/', 'bench/run.mjs']);
    expect(named('sample', sample, BARE_NAME).map((n) => n.name)).toEqual(['transport.ts']);
    expect(named('sample', sample, LINK).map((n) => n.name)).toEqual(['docs/store.md#journal']);
    expect(pathExists('src/http/no-such-stage.ts')).toBe(false);
    expect([...anchors('# Shared store (PostgreSQL)\n## Walkthrough: from an account to a webhook\n```\n# not a heading\n```\n## Walkthrough: from an account to a webhook')]).toEqual([
      'shared-store-postgresql',
      'walkthrough-from-an-account-to-a-webhook',
      'walkthrough-from-an-account-to-a-webhook-1',
    ]);
  });
});
