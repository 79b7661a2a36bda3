import type { Response, Router } from 'express';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { OPENAPI_PATH } from '../spec/openapi.js';
import { VERSION } from '../version.js';
import { DOCS_INIT, renderDocsPage } from './docs-page.js';
import { renderConsoleShell } from './shell.js';
import { CONSOLE_CSS } from './styles.js';
import { codePath, packagePath } from '../package-paths.js';

const CLIENT_DIR = codePath('console/client/');
/** The renderer's two files the docs page loads; nothing else of the package is served. */
const DOCS_ASSETS: Readonly<Record<string, string>> = {
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
};
/**
 * The renderer's files, copied from swagger-ui-dist (a devDependency) into dist/ by the build
 * (scripts/copy-assets.mjs), so an installed package needs no renderer package. The same folder
 * whether this runs built (dist/console/) or from the sources (src/console/, tests and
 * development, after the build their setup runs).
 */
const DOCS_ASSETS_DIR = packagePath('dist/console/docs-assets/');

/** The console's own scripts and styles only; data comes from this origin (fetch and the event WebSocket). */
const CONSOLE_CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self' ws: wss:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

const clientCache = new Map<string, string>();

/**
 * A client module by name. Built, it sits beside this file as .js; run from the sources (tests,
 * development) it is the .ts, transpiled once here with the TypeScript that is then installed.
 */
async function clientModule(name: string): Promise<string | undefined> {
  const cached = clientCache.get(name);
  if (cached !== undefined) return cached;
  const built = join(CLIENT_DIR, `${name}.js`);
  const source = join(CLIENT_DIR, `${name}.ts`);
  let code: string;
  if (existsSync(built)) code = await readFile(built, 'utf8');
  else if (existsSync(source)) {
    const { default: ts } = await import('typescript');
    code = ts.transpileModule(await readFile(source, 'utf8'), {
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ES2022 },
    }).outputText;
  } else return undefined;
  clientCache.set(name, code);
  return code;
}

const send = (res: Response, type: string, body: string | Buffer, cache = 'no-cache'): void => {
  res.status(200).set({ 'content-type': type, 'cache-control': cache, 'x-content-type-options': 'nosniff' }).send(body);
};

/**
 * Whether a GET of this path may be one of the routes below (express matches them without
 * regard to case or a trailing slash); a path that is not falls through to the API router.
 */
export function consoleMayOwn(path: string): boolean {
  const p = path.toLowerCase();
  return p === '/_sandbox' || p === '/_sandbox/' || p.startsWith('/_sandbox/console') || p.startsWith('/_sandbox/openapi.yaml') || p.startsWith('/_sandbox/docs');
}

/**
 * The routes for people rather than integrations: the console, the spec and its rendered reference.
 * They sit outside openapi.yaml's routing (they are not part of the emulated API) and go before it.
 * Made at the first request for one (src/http/transport.ts).
 */
export async function createConsoleRoutes(): Promise<Router> {
  // express is loaded with the first page for people: a sandbox that only serves the API never loads it (~25 ms of a start).
  // Its default export (module.exports): a CommonJS module's named exports are Node's guess, which the bundle does not make.
  const { default: express } = await import('express');
  const router = express.Router();
  router.get(['/_sandbox', '/_sandbox/'], (_req, res) => {
    res.set('content-security-policy', CONSOLE_CSP);
    send(res, 'text/html; charset=utf-8', renderConsoleShell(VERSION));
  });
  router.get('/_sandbox/console/console.css', (_req, res) => send(res, 'text/css; charset=utf-8', CONSOLE_CSS));
  router.get('/_sandbox/console/:file', async (req, res, next) => {
    const match = /^([a-z][a-z-]*)\.js$/.exec(req.params.file);
    const code = match?.[1] ? await clientModule(match[1]) : undefined;
    if (code === undefined) return next();
    send(res, 'text/javascript; charset=utf-8', code);
  });
  router.get('/_sandbox/openapi.yaml', async (_req, res) => {
    send(res, 'application/yaml; charset=utf-8', await readFile(OPENAPI_PATH));
  });
  router.get(['/_sandbox/docs', '/_sandbox/docs/'], (_req, res) => send(res, 'text/html; charset=utf-8', renderDocsPage()));
  router.get('/_sandbox/docs/docs.js', (_req, res) => send(res, 'text/javascript; charset=utf-8', DOCS_INIT));
  router.get('/_sandbox/docs/assets/:file', async (req, res, next) => {
    const type = DOCS_ASSETS[req.params.file];
    if (!type) return next();
    send(res, type, await readFile(join(DOCS_ASSETS_DIR, req.params.file)), 'public, max-age=3600');
  });
  return router;
}
