import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const N = Number(process.argv[2] ?? 7); const out = [];
for (let i = 0; i < N; i++) {
  const d = mkdtempSync(join(tmpdir(), 'sp-'));
  const port = 4600 + i;
  const c = spawn(process.execPath, ['dist/bin.js', 'start', '--data', join(d, 's.json'), '--port', String(port), '--log-level', 'warn'], { stdio: 'ignore' });
  const t0 = performance.now();
  for (;;) { try { const r = await fetch(`http://127.0.0.1:${port}/_sandbox/health`); if (r.ok) break; } catch {} await new Promise((r) => setTimeout(r, 3)); }
  const ms = performance.now() - t0;
  const f = readFileSync(`/proc/${c.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  const cpu = (Number(f[11]) + Number(f[12])) / 100;
  out.push({ ms, cpu }); c.kill('SIGKILL'); await new Promise((r) => c.on('exit', r));
}
const med = (a) => a.sort((x, y) => x - y)[Math.floor(a.length / 2)];
console.log('median ms', med(out.map((o) => o.ms)).toFixed(0), 'median cpu s', med(out.map((o) => o.cpu)).toFixed(2), JSON.stringify(out.map((o) => o.cpu)));
