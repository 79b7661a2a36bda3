const t0 = performance.now();
const m = await import('../dist/testing/index.js');
const t1 = performance.now();
const chunks = [...(await import('node:fs')).readFileSync(new URL('../dist/testing/index.js', import.meta.url), 'utf8').matchAll(/import\("(\.\.\/chunks\/[^"]+)"\)/g)].map((x) => x[1]);
const t2 = performance.now();
for (const c of chunks) { const a = performance.now(); await import(new URL(c, new URL('../dist/testing/', import.meta.url)).href); console.log(c, (performance.now() - a).toFixed(1)); }
const t3 = performance.now();
const s = await m.startSandbox();
const t4 = performance.now();
console.log({ importKit: (t1 - t0).toFixed(1), chunks: (t3 - t2).toFixed(1), startSandboxAfter: (t4 - t3).toFixed(1) });
await s.stop(); process.exit(0);
