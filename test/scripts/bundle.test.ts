import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compiledWithTheirChunk, ENTRY_POINTS, EXTERNAL } from '../../scripts/bundle.mjs';
import { ROOT } from '../helpers/process.js';
import { scriptUrl } from '../../src/package-paths.js';

/** What the build made of the entry points (test/global-setup.ts builds dist/ before the run). */
describe('scripts/bundle.mjs, as built', () => {
  const chunks = join(ROOT, 'dist', 'chunks');
  const chunkText = readdirSync(chunks).filter((f) => f.endsWith('.js')).map((f) => readFileSync(join(chunks, f), 'utf8')).join('\n');

  it('each entry point in dist/ is the bundle (its shared code in dist/chunks/), not the file tsc emitted there', () => {
    for (const entry of ENTRY_POINTS) {
      const built = join(ROOT, entry.replace(/^src\//, 'dist/').replace(/\.ts$/, '.js'));
      const text = readFileSync(built, 'utf8');
      expect(text, built).toMatch(/(from |import )"(\.\/|\.\.\/)chunks\//);
      // tsc's output imports the package's own modules one by one ('./cli.js', '../server.js').
      expect(text, built).not.toMatch(/from '\.{1,2}\/[\w/-]+\.js'/);
    }
  });

  it('what is left out is imported by name from node_modules, never carried inside', () => {
    for (const name of ['pg', 'undici', '@apidevtools/swagger-parser', 'typescript']) {
      expect(EXTERNAL.some((pattern) => pattern === name || (pattern.endsWith('*') && name.startsWith(pattern.slice(0, -1)))), name).toBe(true);
      expect(chunkText, name).not.toContain(`node_modules/${name}/`);
    }
    expect(chunkText).toMatch(/import\("pg"\)|from "pg"/);
  });

  it('dist/chunks holds only chunks the entry points reach: none left from an earlier build', () => {
    const files = readdirSync(chunks).filter((f) => f.endsWith('.js'));
    const texts = [...ENTRY_POINTS.map((e) => join(ROOT, e.replace(/^src\//, 'dist/').replace(/\.ts$/, '.js'))), ...files.map((f) => join(chunks, f))].map((f) => readFileSync(f, 'utf8'));
    const referenced = new Set(texts.flatMap((text) => [...text.matchAll(/["'](?:\.{1,2}\/)+(?:chunks\/)?([\w-]+\.js)["']/g)].map((m) => m[1])));
    expect(files.filter((f) => !referenced.has(f))).toEqual([]);
  });

  it("a start's modules (the server's chunk and what it imports statically) carry none of what loads on first use", () => {
    const server = readdirSync(chunks).find((f) => /^server-[\w]+\.js$/.test(f));
    expect(server, 'the server chunk (src/server.ts, imported by startSandbox)').toBeDefined();
    const seen = new Set<string>();
    const pending = [join(chunks, server ?? '')];
    while (pending.length > 0) {
      const file = pending.pop() ?? '';
      if (seen.has(file)) continue;
      seen.add(file);
      for (const m of readFileSync(file, 'utf8').matchAll(/^import\s(?:[^;]*?from\s+)?"(\.\/[\w-]+\.js)"/gm)) pending.push(join(chunks, m[1] ?? ''));
    }
    const packages = new Set([...seen].flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/^\/\/ node_modules\/((?:@[^/]+\/)?[^/]+)\//gm)].map((m) => m[1])));
    expect(packages.has('openapi-backend'), 'the check sees what a start does load').toBe(true);
    // Mock mode's generator, an image's type sniffer, the pages' framework: loaded by --mock, the first image, the first page.
    for (const lazy of ['json-schema-faker', 'file-type', 'express']) expect(packages.has(lazy), lazy).toBe(false);
  });

  it("the modules esbuild wraps are parenthesized function expressions, compiled with their chunk (so Node's compile cache holds them)", () => {
    expect(chunkText).not.toMatch(/= __(?:commonJS|esm)\(\{\n {2}"[^"\n]+"\(/);
    expect(chunkText.match(/= __commonJS\(\{\n {2}"node_modules\/[^"\n]+": \(function\(/g)?.length ?? 0).toBeGreaterThan(100);
  });

  it('the workers and forked scripts the bundle starts are where src/package-paths.ts looks for them', () => {
    for (const script of ['store/compact-worker.js', 'pages/qr-worker.js', 'contract/verify-worker.js']) expect(existsSync(scriptUrl(script)), script).toBe(true);
  });
});

describe('compiledWithTheirChunk', () => {
  const printed = ['var require_a = __commonJS({', '  "node_modules/a/index.js"(exports, module) {', '    module.exports = () => 1;', '  }', '});', 'var init_b = __esm({', '  "src/b.ts"() {', '    "use strict";', '  }', '});', 'export { require_a };', ''].join('\n');

  it('makes each wrapper a function expression in parentheses, lines kept, and the code runs as before', () => {
    const out = compiledWithTheirChunk(printed);
    expect(out).toContain('  "node_modules/a/index.js": (function(exports, module) {\n    module.exports = () => 1;\n  })\n});');
    expect(out).toContain('  "src/b.ts": (function() {\n');
    expect(out.split('\n')).toHaveLength(printed.split('\n').length);
    const __commonJS = (cb: Record<string, (exports: object, module: { exports: unknown }) => void>) => () => {
      const module = { exports: {} };
      Object.values(cb)[0]?.(module.exports, module);
      return module.exports;
    };
    const __esm = (cb: Record<string, () => void>) => () => Object.values(cb)[0]?.();
    const run = (code: string): unknown => new Function('__commonJS', '__esm', `${code.replace('export { require_a };', '')}\nreturn require_a()();`)(__commonJS, __esm);
    expect(run(out)).toBe(run(printed));
  });

  it('fails the build on a wrapper printed another way, rather than leave it to compile at its first call', () => {
    expect(() => compiledWithTheirChunk(printed.replace('  }\n});\nvar init_b', '}\n);\nvar init_b'))).toThrow(/no end where esbuild puts it|inside another|module wrappers/);
    expect(() => compiledWithTheirChunk('var require_c = __commonJS({\n  "c.js": function(exports) {\n  }\n});\n')).toThrow(/1 module wrappers, 0 of them in the form expected/);
  });
});
