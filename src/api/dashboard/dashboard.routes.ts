import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyReply } from 'fastify';
import type { AppDeps } from '../../app-deps.js';
import { isMailConfigured } from '../../platform/mail/index.js';
import type { KoshApp } from '../../platform/http/server.js';

/**
 * The operators' dashboard: a single-page app built by Vite from dashboard/ into dist/dashboard
 * (`npm install` builds it through `prepare`; `kosh serve` rebuilds it when dashboard/ changed).
 * Its files are served at /dashboard/assets/…; every other /dashboard path is a client route and
 * gets index.html. It talks to the same /v1 API as everyone else.
 */
const BUILD_DIR = fileURLToPath(new URL('../../../dist/dashboard', import.meta.url));

/**
 * The page's own files only: no inline script, no third-party origin; the API is same-origin.
 * Inline styles are allowed for one reason: the e-mail template preview renders the tenant's HTML
 * in an `<iframe sandbox="" srcdoc>`, which inherits this policy, and e-mail HTML is styled inline.
 * The frame's sandbox (no script, opaque origin) is what contains that HTML; scripts stay 'self'.
 */
function dashboardCsp(live: boolean): string {
  const directives = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ];
  if (live) directives.push('upgrade-insecure-requests');
  return directives.join('; ');
}

/** The dashboard's icon (browsers ask for /favicon.ico whatever the page says): a small SVG. */
const FAVICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1f4e79"/>' +
  '<text x="16" y="23" font-family="sans-serif" font-size="20" font-weight="700" fill="#fff" text-anchor="middle">K</text></svg>';

export function registerDashboardRoutes(app: KoshApp, deps: AppDeps): void {
  const csp = dashboardCsp(deps.config.mode === 'live');
  app.get('/favicon.ico', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('image/svg+xml').header('cache-control', 'public, max-age=86400').send(FAVICON),
  );
  void app.register(async (scope) => {
    scope.addHook('onRequest', async (_request, reply) => {
      reply.header('content-security-policy', csp);
    });
    const assets = join(BUILD_DIR, 'assets');
    if (existsSync(assets)) {
      await scope.register(fastifyStatic, {
        root: assets,
        prefix: '/dashboard/assets/',
        // Vite names the files by content hash: they never change under one name.
        immutable: true,
        maxAge: '365d',
        index: false,
        wildcard: true,
      });
    }
    let html: string | null = null;
    const indexHtml = (): string | null => {
      if (html === null && existsSync(join(BUILD_DIR, 'index.html'))) html = readFileSync(join(BUILD_DIR, 'index.html'), 'utf8');
      return html;
    };
    const page = async (_request: unknown, reply: FastifyReply) => {
      const body = indexHtml();
      if (body === null) {
        return reply
          .code(503)
          .type('text/plain; charset=utf-8')
          .send('The dashboard is not built: run `npm run build` (npm install does it), then restart Kosh.\n');
      }
      return reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(body);
    };
    // What the dashboard says about this deployment before anyone signs in: the mode, and whether
    // e-mail can go out at all (with no SMTP it says so instead of failing silently).
    scope.get('/dashboard/config.json', { schema: { hide: true } }, async (_request, reply) =>
      reply.header('cache-control', 'no-store').send({ mode: deps.config.mode, mail_configured: isMailConfigured(deps.config) }),
    );
    scope.get('/dashboard', { schema: { hide: true } }, page);
    scope.get('/dashboard/*', { schema: { hide: true } }, async (request, reply) => {
      // A missing asset is a 404, not the app: only page paths fall back to index.html.
      if (request.url.startsWith('/dashboard/assets/')) return reply.code(404).type('text/plain; charset=utf-8').send('not found\n');
      return page(request, reply);
    });
  });
}
