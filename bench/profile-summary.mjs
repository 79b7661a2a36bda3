// @ts-check
/**
 * Summarises a .cpuprofile written by `BENCH_CPU_PROF=dir node bench/run.mjs` (or by the
 * transactions suite's profiled sandbox): where the server's CPU time went, flame-graph style,
 * by group (express, openapi-backend/ajv, store/journal, JSON, node:http …), by package / source
 * file and by function, as self time (the frame on top of the stack) and inclusive time (the
 * frame anywhere on the stack).
 *
 *   node bench/profile-summary.mjs <file.cpuprofile> [--last SECONDS] [--from-us T --to-us T] [--requests N] [--top N]
 *
 * Run it from the project root: compiled frames are mapped to src/ through the source maps
 * of ./dist (the run's own copy of dist/ is deleted at its end).
 * --last keeps only the final SECONDS of the profile (the measured window; the profile also
 * covers start-up and warm-up); --from-us/--to-us keep a window in the profile's own clock
 * (CLOCK_MONOTONIC µs, as the bench records its measurement windows); --requests adds CPU µs
 * per request.
 */
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * @typedef {{ id: number, callFrame: { functionName: string, url: string, lineNumber: number, columnNumber?: number }, children?: number[] }} ProfileNode
 * @typedef {{ nodes: ProfileNode[], samples: number[], timeDeltas: number[], startTime: number, endTime: number }} CpuProfile
 * @typedef {[key: string, us: number][]} Ranking
 * @typedef {object} ProfileSummary
 * @property {number} cpuUs CPU time sampled in the window (idle excluded)
 * @property {number} windowUs
 * @property {Ranking} selfByGroup
 * @property {Ranking} inclusiveByGroup
 * @property {Ranking} selfByPlace by package / source file
 * @property {Ranking} selfByFn
 * @property {Ranking} inclusiveBySrc src/ files on the stack
 * @property {Ranking} inclusiveByFn
 */

/** Packages that come with express 5 (its router, body parsing, response helpers). */
const EXPRESS = new Set([
  'express', 'router', 'body-parser', 'raw-body', 'iconv-lite', 'safer-buffer', 'bytes', 'content-type', 'type-is', 'media-typer', 'mime-types', 'mime-db',
  'on-finished', 'ee-first', 'finalhandler', 'send', 'serve-static', 'qs', 'side-channel', 'side-channel-list', 'side-channel-map', 'side-channel-weakmap',
  'path-to-regexp', 'parseurl', 'encodeurl', 'escape-html', 'etag', 'fresh', 'range-parser', 'accepts', 'negotiator', 'vary', 'cookie', 'cookie-signature',
  'content-disposition', 'depd', 'debug', 'ms', 'http-errors', 'statuses', 'setprototypeof', 'inherits', 'toidentifier', 'proxy-addr', 'forwarded', 'ipaddr.js',
  'merge-descriptors', 'utils-merge', 'methods', 'unpipe', 'is-promise', 'once', 'wrappy', 'call-bound', 'call-bind-apply-helpers', 'get-intrinsic', 'es-errors',
  'function-bind', 'hasown', 'gopd', 'dunder-proto', 'es-object-atoms', 'math-intrinsics', 'has-symbols', 'object-inspect', 'get-proto',
]);
/** openapi-backend and what it validates and routes with. */
const OPENAPI = new Set(['openapi-backend', 'ajv', 'ajv-formats', 'fast-uri', 'fast-deep-equal', 'json-schema-traverse', 'require-from-string', 'bath-es5', 'openapi-schema-validator', 'mock-json-schema', 'lodash', '@apidevtools/json-schema-ref-parser']);
const LOGGING = new Set(['pino', 'sonic-boom', 'thread-stream', 'pino-std-serializers', 'fast-redact', 'quick-format-unescaped', 'atomic-sleep', 'on-exit-leak-free', 'safe-stable-stringify', 'real-require']);
/** V8 builtins of JSON that show as frames of their own */
const JSON_BUILTINS = new Set(['parse', 'stringify', 'JSONParse', 'JSONStringify', 'JsonParse', 'JsonStringify']);

/** @param {string} url @returns {string} package name, node:module, src/file.ts or the url */
export function where(url) {
  if (url === '') return '(native/VM)';
  if (url.startsWith('node:internal/')) return url;
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return pkg[1] ?? url;
  const own = /\/dist\/(.+)$/.exec(url);
  if (own) return `src/${own[1]?.replace(/\.js$/, '.ts')}`;
  return url.replace(/^file:\/\//, '');
}

/** @param {string} url a node: url @returns {string} */
function nodeGroup(url) {
  const rest = url.slice(5).replace(/^internal\//, '');
  if (/^(_http_|https?\b|http\/)/.test(rest)) return 'node:http';
  if (/^(net|stream_base_commons|dns)\b/.test(rest)) return 'node:net';
  if (/^(stream|streams\/|webstreams)/.test(rest)) return 'node:streams';
  if (/^fs\b/.test(rest)) return 'node:fs';
  if (/^(events|event_target)\b/.test(rest)) return 'node:events';
  if (/^(timers|process\/task_queues|async_hooks|async_local_storage|process\/promises)\b/.test(rest)) return 'node:timers/tasks';
  const module = /^(buffer|util|url|querystring|crypto|zlib)\b/.exec(rest)?.[1];
  return module ? `node:${module}` : 'node:other';
}

/**
 * The group a frame's time goes to. Builtins without a url other than JSON's (a RegExp, an
 * Array method) go to their caller's group: the flame graph's "who asked for it".
 * @param {ProfileNode} node
 * @returns {string | null} null: take the caller's group
 */
function groupOf(node) {
  const { functionName: name, url } = node.callFrame;
  if (name === '(garbage collector)') return 'GC';
  if (name === '(program)') return 'V8 (program)';
  if (url === '') return JSON_BUILTINS.has(name) ? 'JSON' : null;
  if (url.startsWith('node:')) return nodeGroup(url);
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1];
  if (pkg) {
    if (EXPRESS.has(pkg)) return 'express';
    if (OPENAPI.has(pkg)) return 'openapi-backend/ajv';
    if (LOGGING.has(pkg)) return 'pino (logging)';
    return pkg;
  }
  const own = /\/dist\/(.+)\.js$/.exec(url)?.[1];
  if (own) {
    if (/^store\//.test(own)) return 'store/journal (src/store)';
    const dir = own.includes('/') ? own.split('/')[0] : own;
    return `src/${dir}`;
  }
  return where(url);
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
    const entry = sourceMapOf(url)?.findEntry(lineNumber, node.callFrame.columnNumber ?? 0);
    if (entry && 'originalLine' in entry && entry.originalSource) {
      return `${name} src/${entry.originalSource.replace(/^.*\/src\//, '')}:${entry.originalLine + 1}`;
    }
  }
  const dep = /node_modules\/(.+)$/.exec(url);
  if (dep) return `${name} ${dep[1]}:${line}`;
  if (url === '') return `${name} (native)`;
  return `${name} ${where(url)}:${line}`;
}

/**
 * @param {CpuProfile} profile
 * @param {{ fromUs?: number, toUs?: number }} [window] in the profile's clock; default all of it
 * @returns {ProfileSummary}
 */
export function summarizeProfile(profile, window = {}) {
  /** @type {Map<number, ProfileNode>} */
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  /** @type {Map<number, number>} */
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const from = window.fromUs ?? -Infinity;
  const to = window.toUs ?? Infinity;

  /** @type {Map<number, string[]>} the stack's labels, groups, places, leaf-first, per leaf node */
  const stacks = new Map();
  /** @param {ProfileNode} leaf */
  const stackOf = (leaf) => {
    let cached = stacks.get(leaf.id);
    if (cached) return cached;
    /** @type {ProfileNode[]} */
    const frames = [];
    for (let node = /** @type {ProfileNode | undefined} */ (leaf); node !== undefined; node = byId.get(parent.get(node.id) ?? -1)) {
      if (node.callFrame.functionName !== '(root)') frames.push(node);
    }
    cached = frames.map(label);
    stacks.set(leaf.id, cached);
    return cached;
  };
  /** @type {Map<number, string[]>} groups, leaf-first; a null group takes the next known one below it */
  const groupStacks = new Map();
  /** @param {ProfileNode} leaf */
  const groupsOf = (leaf) => {
    let cached = groupStacks.get(leaf.id);
    if (cached) return cached;
    /** @type {(string | null)[]} */
    const raw = [];
    for (let node = /** @type {ProfileNode | undefined} */ (leaf); node !== undefined; node = byId.get(parent.get(node.id) ?? -1)) {
      if (node.callFrame.functionName !== '(root)') raw.push(groupOf(node));
    }
    // a builtin inherits its caller's group (the next frame towards the root)
    /** @type {string[]} */
    const resolved = new Array(raw.length);
    let below = 'V8 (native)';
    for (let i = raw.length - 1; i >= 0; i--) {
      below = raw[i] ?? below;
      resolved[i] = below;
    }
    cached = resolved;
    groupStacks.set(leaf.id, cached);
    return cached;
  };

  /** @type {Map<string, number>} */ const selfByGroup = new Map();
  /** @type {Map<string, number>} */ const inclusiveByGroup = new Map();
  /** @type {Map<string, number>} */ const selfByPlace = new Map();
  /** @type {Map<string, number>} */ const selfByFn = new Map();
  /** @type {Map<string, number>} */ const inclusiveByFn = new Map();
  /** @type {Map<string, number>} */ const inclusiveBySrc = new Map();
  let cpuUs = 0;
  const add = (/** @type {Map<string, number>} */ map, /** @type {string} */ key, /** @type {number} */ us) => map.set(key, (map.get(key) ?? 0) + us);

  let time = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    time += profile.timeDeltas[i] ?? 0;
    if (time < from || time > to) continue;
    const us = profile.timeDeltas[i + 1] ?? profile.timeDeltas[i] ?? 0;
    const leaf = byId.get(profile.samples[i] ?? -1);
    if (!leaf) continue;
    const name = leaf.callFrame.functionName;
    if (name === '(idle)') continue;
    cpuUs += us;
    add(selfByPlace, name === '(garbage collector)' || name === '(program)' ? name : where(leaf.callFrame.url), us);
    const labels = stackOf(leaf);
    const groups = groupsOf(leaf);
    add(selfByFn, labels[0] ?? name, us);
    add(selfByGroup, groups[0] ?? 'V8 (native)', us);
    for (const fn of new Set(labels)) add(inclusiveByFn, fn, us);
    for (const group of new Set(groups)) add(inclusiveByGroup, group, us);
    /** @type {Set<string>} */ const seenSrc = new Set();
    for (let node = /** @type {ProfileNode | undefined} */ (leaf); node !== undefined; node = byId.get(parent.get(node.id) ?? -1)) {
      const place = where(node.callFrame.url);
      if (place.startsWith('src/') && !seenSrc.has(place)) add(inclusiveBySrc, place, us), seenSrc.add(place);
    }
  }
  const rank = (/** @type {Map<string, number>} */ map) => /** @type {Ranking} */ ([...map].sort((a, b) => b[1] - a[1]));
  const first = Number.isFinite(from) ? from : profile.startTime;
  const last = Number.isFinite(to) ? to : profile.endTime;
  return {
    cpuUs,
    windowUs: Math.max(0, Math.min(last, profile.endTime) - Math.max(first, profile.startTime)),
    selfByGroup: rank(selfByGroup),
    inclusiveByGroup: rank(inclusiveByGroup),
    selfByPlace: rank(selfByPlace),
    selfByFn: rank(selfByFn),
    inclusiveBySrc: rank(inclusiveBySrc),
    inclusiveByFn: rank(inclusiveByFn),
  };
}

/**
 * A markdown block: the group table (self and inclusive side by side), then the top functions.
 * @param {ProfileSummary} summary
 * @param {{ requests?: number, top?: number, groups?: number }} [options] requests: to show CPU µs per request
 */
export function summaryMarkdown(summary, options = {}) {
  const top = options.top ?? 15;
  const total = summary.cpuUs || 1;
  const perReq = (/** @type {number} */ us) => (options.requests ? ` | ${(us / options.requests).toFixed(1)}` : '');
  const perReqHead = options.requests ? ' | µs/req' : '';
  const perReqAlign = options.requests ? ' | ---:' : '';
  const inclusive = new Map(summary.inclusiveByGroup);
  const self = new Map(summary.selfByGroup);
  const groups = [...new Set([...summary.selfByGroup.map(([g]) => g), ...summary.inclusiveByGroup.map(([g]) => g)])]
    .sort((a, b) => (self.get(b) ?? 0) - (self.get(a) ?? 0) || (inclusive.get(b) ?? 0) - (inclusive.get(a) ?? 0))
    .slice(0, options.groups ?? 14);
  const pct = (/** @type {number} */ us) => `${((100 * us) / total).toFixed(1)} %`;
  const fnTable = (/** @type {string} */ title, /** @type {Ranking} */ ranking) => [
    `| ${title} | share${perReqHead} |`,
    `| --- | ---:${perReqAlign} |`,
    ...ranking.slice(0, top).map(([fn, us]) => `| \`${fn.replaceAll('|', '\\|')}\` | ${pct(us)}${perReq(us)} |`),
  ];
  return [
    `CPU sampled: ${(summary.cpuUs / 1e6).toFixed(2)} s over ${(summary.windowUs / 1e6).toFixed(1)} s${options.requests ? `, ${options.requests} requests: ${(summary.cpuUs / options.requests).toFixed(0)} µs of CPU per request (profiler overhead included)` : ''}.`,
    '',
    `| group | self${perReqHead ? ' | self µs/req' : ''} | inclusive${perReqHead ? ' | inclusive µs/req' : ''} |`,
    `| --- | ---:${perReqAlign} | ---:${perReqAlign} |`,
    ...groups.map((g) => `| ${g} | ${pct(self.get(g) ?? 0)}${perReq(self.get(g) ?? 0)} | ${pct(inclusive.get(g) ?? 0)}${perReq(inclusive.get(g) ?? 0)} |`),
    '',
    ...fnTable('top self time (function)', summary.selfByFn),
    '',
    ...fnTable('top inclusive frames (function on the stack)', summary.inclusiveByFn),
    '',
    // the generic dispatch frames (events, router, streams) fill the plain inclusive ranking: the sandbox's own are what can change
    ...fnTable('top inclusive frames of the sandbox (src/)', summary.inclusiveByFn.filter(([fn]) => / src\//.test(fn))),
  ].join('\n');
}

/** @param {string} file @returns {CpuProfile} */
export const readProfile = (file) => JSON.parse(readFileSync(file, 'utf8'));

function main() {
  // `| head` closing the pipe early is not an error
  process.stdout.on('error', (err) => (/** @type {NodeJS.ErrnoException} */ (err).code === 'EPIPE' ? process.exit(0) : Promise.reject(err)));
  const args = process.argv.slice(2);
  const optionNames = ['--last', '--top', '--from-us', '--to-us', '--requests'];
  const file = args.find((a, i) => !a.startsWith('--') && !optionNames.includes(args[i - 1] ?? ''));
  /** @param {string} name @param {number} fallback */
  const option = (name, fallback) => {
    const i = args.indexOf(name);
    return i >= 0 ? Number(args[i + 1]) : fallback;
  };
  if (!file) {
    process.stderr.write('usage: node bench/profile-summary.mjs <file.cpuprofile> [--last SECONDS] [--from-us T --to-us T] [--requests N] [--top N]\n');
    process.exit(2);
  }
  const last = option('--last', Infinity);
  const top = option('--top', 25);
  const requests = option('--requests', 0);
  const profile = readProfile(file);
  const summary = summarizeProfile(profile, {
    fromUs: Number.isFinite(last) ? profile.endTime - last * 1e6 : option('--from-us', -Infinity),
    toUs: option('--to-us', Infinity),
  });
  const total = summary.cpuUs || 1;
  /** @param {string} title @param {Ranking} ranking */
  const print = (title, ranking) => {
    process.stdout.write(`\n${title}\n`);
    for (const [key, us] of ranking.slice(0, top)) {
      process.stdout.write(`${((100 * us) / total).toFixed(1).padStart(6)} %  ${(us / 1000).toFixed(0).padStart(7)} ms${requests ? `  ${(us / requests).toFixed(1).padStart(7)} µs/req` : ''}  ${key}\n`);
    }
  };
  process.stdout.write(`${file}: ${(summary.cpuUs / 1e6).toFixed(2)} s of CPU (idle excluded)${Number.isFinite(last) ? `, last ${last} s` : ''}\n`);
  print('self time by group', summary.selfByGroup);
  print('inclusive time by group (on the stack)', summary.inclusiveByGroup);
  print('self time by package / file', summary.selfByPlace);
  print('self time by function', summary.selfByFn);
  print('inclusive time by src/ file (on the stack)', summary.inclusiveBySrc);
  print('inclusive time by function', summary.inclusiveByFn);
  print('inclusive time by src/ function', summary.inclusiveByFn.filter(([fn]) => / src\//.test(fn)));
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) main();
