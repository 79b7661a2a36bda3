import { execFile } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const KIT = new URL('../../dist/testing/index.js', import.meta.url).href;
const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * A start loads what it uses (issue 46): these packages are loaded by the first thing that
 * needs them (a webhook sent, a PostgreSQL store, a stale build, a non-ASCII account
 * name, a terminal's log format), not by every start of the test kit. Each was 20-120 ms of one.
 */
const LOADED_ON_FIRST_USE = ['pg', 'undici', '@apidevtools/swagger-parser', 'transliteration', 'pino-pretty', 'accepts'];

/** The packages (of those) a fresh process has loaded after `script` ran with the kit imported as `kit`. */
async function loadedAfter(script: string): Promise<string[]> {
  const program = `
    import { createRequire } from 'node:module';
    const kit = await import(${JSON.stringify(KIT)});
    ${script}
    const loaded = Object.keys(createRequire(import.meta.url).cache);
    const names = ${JSON.stringify(LOADED_ON_FIRST_USE)};
    // And Node's bundled undici, which a process's first fetch, or an ESM import of node:http (its namespace's
    // lazy WebSocket), loads and compiles (~35-250 ms): the kit calls with node:http, required (src/node-http.ts).
    const bundled = process.moduleLoadList.some((name) => name.includes('internal/deps/undici/undici')) ? ["node's bundled undici"] : [];
    console.log(JSON.stringify([...names.filter((name) => loaded.some((file) => file.includes('/node_modules/' + name + '/'))), ...bundled]));
    process.exit(0);
  `;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', program], { cwd: root, timeout: 60_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '[]') as string[];
}

describe('what a start of the test kit loads', () => {
  it('a sandbox started, an account bound and a product made load none of the packages kept for first use', async () => {
    const loaded = await loadedAfter(`
      const sandbox = await kit.startSandbox();
      const account = await sandbox.account();
      // node:http by require, not fetch nor an ESM import (whose namespace loads Node's bundled undici): the check is that nothing loaded it.
      const http = createRequire(import.meta.url)('node:http');
      const status = await new Promise((resolve, reject) => {
        const req = http.request(new URL('/v2/products', account.url), { method: 'POST', headers: { authorization: account.authorization, 'content-type': 'application/json' } }, (res) => { res.resume(); resolve(res.statusCode); });
        req.on('error', reject);
        req.end(JSON.stringify({ name: 'Lazy' }));
      });
      if (status !== 201) throw new Error('product: ' + status);
      await sandbox.stop();
    `);
    expect(loaded).toEqual([]);
  }, 90_000);

  it("nor does the CLI: `payments-sandbox start` answering its health (a command's module is loaded when it runs)", async () => {
    const bin = fileURLToPath(new URL('../../dist/bin.js', import.meta.url));
    const loaded = await loadedAfter(`
      const { mkdtempSync, readFileSync } = await import('node:fs');
      const { tmpdir } = await import('node:os');
      const { join } = await import('node:path');
      const urlFile = join(mkdtempSync(join(tmpdir(), 'lazy-cli-')), 'url');
      process.env.SANDBOX_URL_FILE = urlFile;
      process.argv = [process.execPath, ${JSON.stringify(bin)}, 'start', '--in-memory', '--port', '0', '--log-level', 'warn'];
      await import(${JSON.stringify(pathToFileURL(bin).href)});
      let url = '';
      for (let i = 0; i < 1_000 && !url; i++) {
        try { url = readFileSync(urlFile, 'utf8').trim(); } catch {}
        if (!url) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      if (!url) throw new Error('no URL in ' + urlFile + ' after 50 s');
      const http = createRequire(import.meta.url)('node:http');
      const status = await new Promise((resolve, reject) => http.get(url + '/_sandbox/health', (res) => { res.resume(); resolve(res.statusCode); }).on('error', reject));
      if (status !== 200) throw new Error('health: ' + status);
    `);
    expect(loaded).toEqual([]);
  }, 90_000);

  it('the check sees a package once something uses it: a webhook post loads undici', async () => {
    const loaded = await loadedAfter(`
      const { Dispatcher } = await import(${JSON.stringify(new URL('../../dist/webhooks/dispatcher.js', import.meta.url).href)});
      const http = createRequire(import.meta.url)('node:http');
      const receiver = await new Promise((resolve) => {
        const server = http.createServer((req, res) => { req.resume(); res.end('ok'); });
        server.listen(0, '127.0.0.1', () => resolve(server));
      });
      const dispatcher = new Dispatcher(5_000);
      const outcome = await dispatcher.post('http://127.0.0.1:' + receiver.address().port + '/hook', '{}', {});
      if (!outcome.ok) throw new Error('post: ' + JSON.stringify(outcome));
      await dispatcher.close();
      receiver.close();
    `);
    expect(loaded).toContain('undici');
  }, 90_000);
});
