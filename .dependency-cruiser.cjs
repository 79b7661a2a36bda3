/**
 * Architecture rules (issue 23), checked in `npm test` by test/architecture/dependencies.test.ts
 * (`npx depcruise src --config .dependency-cruiser.cjs` lists the same violations by hand,
 * the known exceptions below among them):
 * - the domain knows nothing of HTTP: no domain folder imports src/http or express;
 * - express serves the pages for people only: the API pipeline runs on node:http;
 * - libraries through their public entry points only: no body-parser, no express router or
 *   express internals, no file inside openapi-backend;
 * - no import cycles;
 * - src/store imports nothing above it.
 * test/architecture/public-apis.test.ts adds what an import graph cannot see (no assignment
 * into a library's objects, no override of a library's class).
 *
 * @type {import('dependency-cruiser').IConfiguration}
 */

/**
 * The folders of the domain: what a request means, free of how it arrived. The others are
 * edges that speak HTTP or drive the sandbox from outside, and may: src/http (the pipeline
 * and handlers), src/pages (the payer pages' handlers and HTML), src/console (the web
 * console's express routes), src/contract (the Pact verifier), src/scenarios (the runner),
 * and the composition root and entry points at the top of src/. src/store is the bottom layer
 * (its own rule below) and src/spec holds the OpenAPI document's loader and generated types.
 */
const DOMAIN = '^src/(accounts|autopilot|catalog|events|faults|ledger|mock|rails|ratelimit|sandbox|scheduler|transactions|webhooks|withdrawals)/';

module.exports = {
  forbidden: [
    {
      name: 'domain-not-to-http',
      comment: 'Domain folders know nothing of HTTP: they throw DomainErrors (src/errors.ts) and src/http maps them; express is the HTTP layer\'s.',
      severity: 'error',
      from: { path: DOMAIN },
      to: { path: ['^src/http/', '(^|/)node_modules/(express|body-parser|router|@types/express)/', '^express$'] },
    },
    {
      name: 'express-for-people-only',
      comment:
        "express serves the pages for people: src/console's routes, and src/http/transport.ts that hands them their GETs. The API pipeline runs on node:http's request and response, so no upgrade of express can change an API answer.",
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/console/', '^src/http/transport\\.ts$'] },
      to: { path: ['(^|/)node_modules/(express|@types/express|@types/express-serve-static-core)/', '^express$'] },
    },
    {
      name: 'no-framework-internals',
      comment:
        "Libraries through their public entry points only: nothing imports body-parser or express's router (bodies are read with raw-body, as documented), nor a file inside express or openapi-backend.",
      severity: 'error',
      from: { path: '^src/' },
      to: { path: ['(^|/)node_modules/(body-parser|router)/', '(^|/)node_modules/express/(?!index\\.js$)', '(^|/)node_modules/openapi-backend/(?!index\\.(js|d\\.ts)$)'] },
    },
    {
      name: 'no-circular',
      comment: 'An import cycle ties modules that should be layered: break it with an interface or an injected collaborator.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'store-not-above',
      comment: 'src/store is the bottom layer: it knows nothing of the domain, the HTTP layer or the app (it gets `now` injected, not src/clock.ts).',
      severity: 'error',
      from: { path: '^src/store/' },
      // src/package-paths.ts is a leaf (node:fs, node:path, node:url) that finds the package's files: migrations, a worker's compiled script.
      to: { path: '^src/', pathNot: ['^src/store/', '^src/package-paths\\.ts$'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
