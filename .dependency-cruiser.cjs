/**
 * The layering rule of ARCHITECTURE.md, enforced in CI (`npm run depcheck`). Imports point down only:
 *   cli → app → api (HTTP) → flows → modules → platform
 * Modules use each other, and the layers above use modules, only through a module's index.ts.
 */
module.exports = {
  forbidden: [
    {
      name: 'platform-imports-no-module',
      comment: 'src/platform is plumbing: it must not know any domain module, flow, route, the app or the CLI.',
      severity: 'error',
      from: { path: '^src/platform/' },
      to: { path: '^src/(modules|flows|api|cli|app\\.ts|app-deps\\.ts)' },
    },
    {
      name: 'modules-do-not-import-layers-above',
      comment: 'A domain module knows nothing of the flows that combine modules, nor of HTTP.',
      severity: 'error',
      from: { path: '^src/modules/' },
      to: { path: '^src/(flows|api|cli)/|^src/app\\.ts' },
    },
    {
      name: 'flows-do-not-import-http',
      comment: 'Flows own transactions across modules; HTTP calls them, never the reverse.',
      severity: 'error',
      from: { path: '^src/flows/' },
      to: { path: '^src/(api|cli)/|^src/app\\.ts' },
    },
    {
      name: 'api-is-not-imported-below-the-app',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(api/|app\\.ts|cli/)' },
      to: { path: '^src/api/' },
    },
    {
      name: 'modules-use-each-other-through-index',
      comment: 'Reach another module only through its index.ts.',
      severity: 'error',
      from: { path: '^src/modules/([^/]+)/' },
      to: { path: '^src/modules/([^/]+)/', pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/index\\.ts$'] },
    },
    {
      name: 'layers-above-use-modules-through-index',
      comment: 'Flows, routes, the app and the CLI see a module only through its index.ts.',
      severity: 'error',
      from: { path: '^src/(flows|api|cli)/' },
      to: { path: '^src/modules/[^/]+/', pathNot: '^src/modules/[^/]+/index\\.ts$' },
    },
    {
      name: 'module-index-exports-no-repository',
      comment:
        "A module's index.ts offers operations and types (issue #27): it re-exports a repository's types only, never its functions. The repository is the module's private access to its own tables.",
      severity: 'error',
      from: { path: '^src/modules/[^/]+/index\\.ts$' },
      to: { path: '\\.repository\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'repositories-call-nothing-above',
      severity: 'error',
      from: { path: '\\.repository\\.ts$' },
      to: { path: '\\.(service|routes)\\.ts$|^src/(flows|api)/' },
    },
    {
      name: 'one-template-sandbox',
      comment: 'Tenant templates compile and render only in src/platform/templates (the sandbox of DESIGN §21).',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/platform/templates/' },
      to: { path: 'node_modules/handlebars/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: { pathNot: '\\.test\\.ts$' },
      to: { circular: true, pathNot: '\\.tables\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.test\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
