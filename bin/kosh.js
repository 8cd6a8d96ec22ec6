#!/usr/bin/env node
// Runs the compiled CLI (dist/, built by `npm run build`, which `npm install`/`npm ci` run through
// `prepare`). When a source file is newer than the build — a checkout, an edit — it runs src/
// directly through tsx instead: a command never waits for a compile, and always runs what src/
// says. `npm run build` refreshes dist/. The dashboard (dashboard/ → dist/dashboard, a Vite
// build), which Kosh serves at /dashboard, is built by `kosh serve` when its sources changed.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const stamp = join(root, 'dist', '.built');

function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

function newestMigration() {
  const dir = join(root, 'migrations');
  return Math.max(0, ...readdirSync(dir).map((f) => statSync(join(dir, f)).mtimeMs));
}

function stale() {
  if (!existsSync(stamp)) return true;
  const built = statSync(stamp).mtimeMs;
  const config = Math.max(...['tsconfig.json', 'tsconfig.build.json'].map((f) => statSync(join(root, f)).mtimeMs));
  return config > built || newestSource(join(root, 'src')) > built || newestMigration() > built;
}

function build() {
  const require = createRequire(import.meta.url);
  const tsc = require.resolve('typescript/bin/tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });
  if (result.status !== 0) process.exit(result.status ?? 1);
  // The embedded database's template: a data directory with every migration applied, which a
  // fresh data directory copies instead of running initdb and the migrations (decision 0037).
  const template = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `await (await import(${JSON.stringify(pathToFileURL(join(root, 'dist', 'platform', 'db', 'build-template.js')).href)})).buildPgliteTemplate()`,
    ],
    { stdio: 'inherit', cwd: root },
  );
  if (template.status !== 0) process.stderr.write('kosh: could not build the embedded database template; a first start will run the migrations\n');
  // The stamp's modification time is the build time (a rewrite sets it).
  writeFileSync(stamp, 'built by bin/kosh.js; src/ files newer than this file trigger a rebuild\n');
  const now = Date.now() / 1000;
  utimesSync(stamp, now, now);
}

const dashboardStamp = join(root, 'dist', 'dashboard', '.built');

function newestFile(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestFile(path));
    else newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

function dashboardStale() {
  if (!existsSync(join(root, 'dashboard'))) return false;
  if (!existsSync(dashboardStamp)) return true;
  const sources = Math.max(newestFile(join(root, 'dashboard')), newestFile(join(root, 'clients', 'typescript', 'src')));
  return sources > statSync(dashboardStamp).mtimeMs;
}

/** The Vite build of the dashboard; skipped, saying so, where Vite is not installed (npm install --omit=dev). */
function buildDashboard() {
  const require = createRequire(import.meta.url);
  let vite;
  try {
    vite = join(dirname(require.resolve('vite/package.json')), 'bin', 'vite.js');
  } catch {
    process.stderr.write('kosh: vite is not installed, the dashboard is not built (npm install without --omit=dev builds it)\n');
    return;
  }
  // NODE_ENV=production whatever the caller's (vitest sets `test`, which would bundle React's development build).
  const result = spawnSync(process.execPath, [vite, 'build', '--mode', 'production', '--config', join(root, 'dashboard', 'vite.config.ts')], {
    stdio: 'inherit',
    cwd: root,
    env: { ...process.env, NODE_ENV: 'production' },
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
  writeFileSync(dashboardStamp, 'built by bin/kosh.js; dashboard/ files newer than this file trigger a rebuild\n');
  const now = Date.now() / 1000;
  utimesSync(dashboardStamp, now, now);
}

if (process.argv[2] === '--build') {
  build();
  if (dashboardStale()) buildDashboard();
} else if (process.argv[2] === '--build-dashboard') {
  if (dashboardStale()) buildDashboard();
} else {
  if (process.argv[2] === 'serve' && dashboardStale()) {
    process.stderr.write('kosh: building the dashboard (once per change)…\n');
    buildDashboard();
  }
  if (stale()) {
    const { register } = await import('tsx/esm/api');
    register();
    await import(pathToFileURL(join(root, 'src', 'cli', 'main.ts')).href);
  } else {
    await import(pathToFileURL(join(root, 'dist', 'cli', 'main.js')).href);
  }
}
