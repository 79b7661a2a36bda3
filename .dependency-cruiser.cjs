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

/** The folders of the domain: what a request means, free of how it arrived. */
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
  },
};
