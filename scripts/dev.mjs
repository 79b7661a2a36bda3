#!/usr/bin/env node
// `npm run dev [-- start options]`: tsc in watch mode, and the sandbox restarted after every
// successful compile. Restarting on tsc's own "0 errors" line, not on file events, means the
// sandbox never loads a half-written dist/.
import './check-node.mjs';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundle } from './bundle.mjs';
import { copyAssets } from './copy-assets.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
const args = process.argv.slice(2);

let server;
let stopping = false;

function stopServer() {
  if (!server || server.exitCode !== null) return Promise.resolve();
  const exited = new Promise((resolve) => server.once('exit', resolve));
  server.kill('SIGTERM');
  return exited;
}

async function restart() {
  await stopServer();
  if (stopping) return;
  // tsc --watch emits only what it compiles; the SQL migrations come along on every restart.
  copyAssets(root);
  // tsc wrote the entry points it recompiled over the bundle's, or left a bundle of the old code: bundled again, from src/.
  await bundle(root);
  server = spawn(process.execPath, [join(root, 'dist', 'bin.js'), 'start', ...args], { cwd: process.cwd(), stdio: 'inherit' });
}

const watcher = spawn(process.execPath, [tsc, '-p', join(root, 'tsconfig.json'), '--watch', '--preserveWatchOutput'], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
let pending = '';
let queue = Promise.resolve();
watcher.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  pending += chunk.toString();
  const lines = pending.split('\n');
  pending = lines.pop() ?? '';
  for (const line of lines) {
    const found = /Found (\d+) errors?\. Watching for file changes/.exec(line);
    if (found && found[1] === '0') queue = queue.then(restart);
    else if (found) process.stderr.write('payments-sandbox dev: not restarted, fix the errors above\n');
  }
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    stopping = true;
    watcher.kill('SIGTERM');
    void stopServer().then(() => process.exit(0));
  });
}
watcher.on('exit', (code) => {
  if (!stopping) void stopServer().then(() => process.exit(code ?? 1));
});
