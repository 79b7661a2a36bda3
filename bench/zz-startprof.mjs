// spawn start with --cpu-prof, wait for health, SIGINT
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const d = mkdtempSync(join(tmpdir(), 'sp-'));
const t0 = performance.now();
const c = spawn(process.execPath, ['--cpu-prof', '--cpu-prof-dir=/tmp/prof', '--cpu-prof-interval', '100', 'dist/bin.js', 'start', '--data', join(d, 's.json'), '--port', '4598', '--log-level', 'warn'], { stdio: 'ignore' });
for (;;) { try { const r = await fetch('http://127.0.0.1:4598/_sandbox/health'); if (r.ok) break; } catch {} await new Promise((r) => setTimeout(r, 5)); }
console.log('health after', (performance.now() - t0).toFixed(0), 'ms');
c.kill('SIGINT'); await new Promise((r) => c.on('exit', r));
