/**
 * The layering rule of ARCHITECTURE.md, enforced in CI (`npm run depcheck`):
 *   routes → flows / services → repositories;  platform imports no module;
 *   modules use each other only through their index.ts.
 */
module.exports = {
  forbidden: [
    {
      name: 'platform-imports-no-module',
      comment: 'src/platform is plumbing: it must not know any domain module, flow, the app or the CLI.',
      severity: 'error',
      from: { path: '^src/platform/' },
      to: { path: '^src/(modules|flows|cli|app\\.ts|app-deps\\.ts)' },
    },
    {
      name: 'modules-use-each-other-through-index',
      comment: 'Reach another module only through its index.ts.',
      severity: 'error',
      from: { path: '^src/modules/([^/]+)/' },
      to: { path: '^src/modules/([^/]+)/', pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/index\\.ts$'] },
    },
    {
      name: 'flows-use-modules-through-index',
      severity: 'error',
      from: { path: '^src/flows/' },
      to: { path: '^src/modules/[^/]+/', pathNot: '^src/modules/[^/]+/index\\.ts$' },
    },
    {
      name: 'modules-do-not-import-cli-or-app',
      severity: 'error',
      from: { path: '^src/(modules|flows)/' },
      to: { path: '^src/(cli/|app\\.ts)' },
    },
    {
      name: 'routes-do-not-touch-repositories',
      comment: 'Routes parse, call one service or flow, and shape the answer; SQL lives in repositories.',
      severity: 'error',
      from: { path: '\\.routes\\.ts$' },
      to: { path: '\\.repository\\.ts$' },
    },
    {
      name: 'repositories-call-nothing-above',
      severity: 'error',
      from: { path: '\\.repository\\.ts$' },
      to: { path: '\\.(service|routes)\\.ts$|^src/flows/' },
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
