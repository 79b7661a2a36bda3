// @ts-check
/**
 * Summarises a .cpuprofile written by `BENCH_CPU_PROF=dir node bench/run.mjs`:
 * where the server's CPU time went, by package / source file and by function.
 *
 *   node bench/profile-summary.mjs <file.cpuprofile> [--last SECONDS] [--top N]
 *
 * Run it from the project root: compiled frames are mapped to src/ through
 * the source maps of ./dist (the run's own copy of dist/ is deleted at its end).
 * --last keeps only the final SECONDS of the profile (the measured window;
 * the profile also covers start-up and warm-up).
 */
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// `| head` closing the pipe early is not an error
process.stdout.on('error', (err) => (/** @type {NodeJS.ErrnoException} */ (err).code === 'EPIPE' ? process.exit(0) : Promise.reject(err)));

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith('--') && !/^\d+(\.\d+)?$/.test(a));
/** @param {string} name @param {number} fallback */
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
if (!file) {
  process.stderr.write('usage: node bench/profile-summary.mjs <file.cpuprofile> [--last SECONDS] [--top N]\n');
  process.exit(2);
}
const last = option('--last', Infinity);
const top = option('--top', 25);

/**
 * @typedef {{ id: number, callFrame: { functionName: string, url: string, lineNumber: number }, children?: number[] }} ProfileNode
 * @type {{ nodes: ProfileNode[], samples: number[], timeDeltas: number[], startTime: number, endTime: number }}
 */
const profile = JSON.parse(readFileSync(file, 'utf8'));

/** @type {Map<number, ProfileNode>} */
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
/** @type {Map<number, number>} */
const parent = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

/** @param {string} url */
function where(url) {
  if (url === '') return '(native/VM)';
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return pkg[1] ?? url;
  const own = /\/dist\/(.+)$/.exec(url);
  if (own) return `src/${own[1]?.replace(/\.js$/, '.ts')}`;
  return url.replace(/^file:\/\//, '');
}
/** @type {Map<string, SourceMap | null>} */
const sourceMaps = new Map();
/** @param {string} url dist/ file URL @returns {SourceMap | null} */
function sourceMapOf(url) {
  let map = sourceMaps.get(url);
  if (map === undefined) {
    // The run's pinned copy of dist/ is gone once the bench ends: fall back to ./dist, the same build unless rebuilt since.
    const pinned = `${fileURLToPath(url)}.map`;
    const local = path.join(process.cwd(), 'dist', `${url.replace(/^.*\/dist\//, '')}.map`);
    const file = existsSync(pinned) ? pinned : existsSync(local) ? local : undefined;
    map = file ? new SourceMap(JSON.parse(readFileSync(file, 'utf8'))) : null;
    sourceMaps.set(url, map);
  }
  return map;
}

/**
 * Function name and position; compiled sandbox code is mapped back to src/
 * through dist's source maps, dependencies are shown as package/file.
 * @param {ProfileNode} node
 */
function label(node) {
  const { functionName, url, lineNumber } = node.callFrame;
  const name = functionName || '(anonymous)';
  const line = lineNumber + 1;
  if (/\/dist\/.+\.js$/.test(url) && url.startsWith('file:') && !url.includes('/node_modules/')) {
    const entry = sourceMapOf(url)?.findEntry(lineNumber, /** @type {any} */ (node.callFrame).columnNumber ?? 0);
    if (entry && 'originalLine' in entry && entry.originalSource) {
      return `${name} src/${entry.originalSource.replace(/^.*\/src\//, '')}:${entry.originalLine + 1}`;
    }
  }
  const dep = /node_modules\/(.+)$/.exec(url);
  if (dep) return `${name} ${dep[1]}:${line}`;
  return `${name} ${where(url)}:${line}`;
}

// sample times, so that --last can cut the start-up away
const times = [];
let t = profile.startTime;
for (const delta of profile.timeDeltas) times.push((t += delta));
const from = Number.isFinite(last) ? profile.endTime - last * 1e6 : -Infinity;

/** @type {Map<string, number>} */ const selfByPlace = new Map();
/** @type {Map<string, number>} */ const selfByFn = new Map();
/** @type {Map<string, number>} */ const totalByFn = new Map();
/** @type {Map<string, number>} */ const totalBySrc = new Map();
let total = 0;
const add = (/** @type {Map<string, number>} */ map, /** @type {string} */ key, /** @type {number} */ us) => map.set(key, (map.get(key) ?? 0) + us);

for (let i = 0; i < profile.samples.length; i++) {
  const time = times[i] ?? 0;
  if (time < from) continue;
  const us = profile.timeDeltas[i + 1] ?? profile.timeDeltas[i] ?? 0;
  const leaf = byId.get(profile.samples[i] ?? -1);
  if (!leaf) continue;
  const name = leaf.callFrame.functionName;
  if (name === '(idle)') continue;
  total += us;
  add(selfByPlace, name === '(garbage collector)' || name === '(program)' ? name : where(leaf.callFrame.url), us);
  add(selfByFn, label(leaf), us);
  /** @type {Set<string>} */ const seenFn = new Set();
  /** @type {Set<string>} */ const seenSrc = new Set();
  /** @type {ProfileNode | undefined} */
  let node = leaf;
  for (; node !== undefined; node = byId.get(parent.get(node.id) ?? -1)) {
    const fn = label(node);
    if (!seenFn.has(fn)) add(totalByFn, fn, us), seenFn.add(fn);
    const place = where(node.callFrame.url);
    if (place.startsWith('src/') && !seenSrc.has(place)) add(totalBySrc, place, us), seenSrc.add(place);
  }
}

/** @param {string} title @param {Map<string, number>} map */
function print(title, map) {
  process.stdout.write(`\n${title}\n`);
  for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    process.stdout.write(`${((100 * us) / total).toFixed(1).padStart(6)} %  ${(us / 1000).toFixed(0).padStart(7)} ms  ${key}\n`);
  }
}

process.stdout.write(`${file}: ${(total / 1e6).toFixed(2)} s of CPU (idle excluded)${Number.isFinite(last) ? `, last ${last} s` : ''}\n`);
print('self time by package / file', selfByPlace);
print('self time by function', selfByFn);
print('inclusive time by src/ file (on the stack)', totalBySrc);
print('inclusive time by function', totalByFn);
