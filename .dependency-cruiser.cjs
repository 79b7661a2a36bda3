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
const DOMAIN = '^src/(accounts|autopilot|catalog|events|faults|ledger|mock|objects|rails|sandbox|scheduler|transactions|webhooks|withdrawals)/';

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
    /**
     * Temporary exceptions: the violations issue 23's domain half removes (branch i23-domain).
     * Each is checked to still occur (test/architecture/dependencies.test.ts): remove an entry
     * once its violation is gone.
     */
    knownViolations: [
      // catalog throws HttpErrors (badRequest/notFound of src/http/errors.ts) instead of DomainErrors.
      { from: 'src/catalog/images.ts', to: 'src/http/errors.ts', rule: { name: 'domain-not-to-http', severity: 'error' } },
      { from: 'src/catalog/paginate.ts', to: 'src/http/errors.ts', rule: { name: 'domain-not-to-http', severity: 'error' } },
      { from: 'src/catalog/products.ts', to: 'src/http/errors.ts', rule: { name: 'domain-not-to-http', severity: 'error' } },
      // faults throws HttpErrors (badRequest) for rules it refuses instead of DomainErrors.
      { from: 'src/faults/faults.ts', to: 'src/http/errors.ts', rule: { name: 'domain-not-to-http', severity: 'error' } },
      // mock answers with the pipeline's reply type, its error shapes and Ajv, and reads an express Request.
      { from: 'src/mock/responder.ts', to: 'node_modules/express/index.js', rule: { name: 'domain-not-to-http', severity: 'error' } },
      { from: 'src/mock/responder.ts', to: 'src/http/call.ts', rule: { name: 'domain-not-to-http', severity: 'error' } },
      { from: 'src/mock/responder.ts', to: 'src/http/errors.ts', rule: { name: 'domain-not-to-http', severity: 'error' } },
      { from: 'src/mock/responder.ts', to: 'src/http/validator.ts', rule: { name: 'domain-not-to-http', severity: 'error' } },
    ],
  },
};
