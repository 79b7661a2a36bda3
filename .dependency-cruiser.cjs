/**
 * Architecture rules (issue 23), checked in `npm test` by test/architecture/dependencies.test.ts
 * (`npx depcruise src --config .dependency-cruiser.cjs` lists the same violations by hand,
 * the known exceptions below among them):
 * - the domain knows nothing of HTTP: no domain folder imports src/http or express;
 * - no import cycles;
 * - src/store imports nothing above it.
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
const DOMAIN = '^src/(accounts|autopilot|catalog|events|faults|ledger|mock|rails|sandbox|scheduler|transactions|webhooks|withdrawals)/';

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
      // src/worker-url.ts is a leaf (node:url only) that finds a worker's compiled file, src/ or dist/.
      to: { path: '^src/', pathNot: ['^src/store/', '^src/worker-url\\.ts$'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
