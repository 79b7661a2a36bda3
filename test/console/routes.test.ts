import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENAPI_PATH } from '../../src/spec/openapi.js';
import { ROOT } from '../helpers/process.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';

/** The routes for people, over real HTTP: served by the sandbox itself, nothing from elsewhere. */
let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.stop();
});

const get = (path: string) => fetch(new URL(path, sandbox.url));

describe('console routes', () => {
  it('serve the console shell with a same-origin content policy, at /_sandbox and /_sandbox/', async () => {
    for (const path of ['/_sandbox/', '/_sandbox']) {
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
      const page = await res.text();
      expect(page).toContain('<label for="secret-key">Secret key</label>');
      expect(page).toContain('<script type="module" src="/_sandbox/console/console.js"></script>');
      // Offline: every asset is a path on this sandbox.
      expect(page).not.toMatch(/(src|href)="(https?:)?\/\//);
    }
  });

  it('serve the client modules as JavaScript, and nothing else from the client folder', async () => {
    for (const name of ['console', 'api', 'dom', 'state', 'transactions', 'webhooks', 'requests', 'catalog', 'settings', 'context', 'listening']) {
      const res = await get(`/_sandbox/console/${name}.js`);
      expect(res.status, name).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/javascript/);
      const code = await res.text();
      // Transpiled: no type annotations left for the browser to choke on.
      expect(code, name).not.toMatch(/^import type /m);
    }
    expect((await get('/_sandbox/console/console.css')).headers.get('content-type')).toMatch(/^text\/css/);
    for (const path of ['/_sandbox/console/console.ts', '/_sandbox/console/..%2Froutes.js', '/_sandbox/console/nope.js']) {
      expect((await get(path)).status, path).toBe(404);
    }
  });

  it('serve openapi.yaml as it is on disk', async () => {
    const res = await get('/_sandbox/openapi.yaml');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/yaml/);
    expect(await res.text()).toBe(readFileSync(OPENAPI_PATH, 'utf8'));
  });

  it("serve the API reference page and every asset it loads from the package's own dist/, with no other file", async () => {
    const page = await (await get('/_sandbox/docs')).text();
    expect(page).toContain('/_sandbox/docs/assets/swagger-ui-bundle.js');
    expect(page).not.toMatch(/(src|href)="(https?:)?\/\//);
    const assets = [...page.matchAll(/(?:src|href)="(\/_sandbox\/docs\/[^"]+)"/g)].map((m) => m[1] ?? '');
    expect(assets.length).toBeGreaterThanOrEqual(3);
    for (const asset of assets) {
      const res = await get(asset);
      expect(res.status, asset).toBe(200);
      expect((await res.arrayBuffer()).byteLength, asset).toBeGreaterThan(100);
    }
    // Copied at build time: the sandbox needs no renderer package at run time (a devDependency).
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    expect(manifest.dependencies['swagger-ui-dist']).toBeUndefined();
    expect(manifest.devDependencies['swagger-ui-dist']).toBeDefined();
    expect(readFileSync(join(ROOT, 'dist', 'console', 'docs-assets', 'swagger-ui-bundle.js'), 'utf8')).toBe(readFileSync(join(ROOT, 'node_modules', 'swagger-ui-dist', 'swagger-ui-bundle.js'), 'utf8'));
    const bundle = await get('/_sandbox/docs/assets/swagger-ui-bundle.js');
    expect(bundle.status).toBe(200);
    expect(Number(bundle.headers.get('content-length'))).toBeGreaterThan(100_000);
    expect((await get('/_sandbox/docs/assets/swagger-ui.css')).status).toBe(200);
    expect((await get('/_sandbox/docs/assets/package.json')).status).toBe(404);
    expect(await (await get('/_sandbox/docs/docs.js')).text()).toContain("url: '/_sandbox/openapi.yaml'");
  });

  it('leave the API routing as it was: other /_sandbox paths are still the JSON 404', async () => {
    const res = await sandbox.clientFor(undefined).get('/_sandbox/console');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ statusCode: 404 });
  });
});
