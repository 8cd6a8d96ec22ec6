import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The dashboard is built into dist/dashboard (gitignored; `npm install` builds it through
// `prepare`) and served by Kosh at /dashboard.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/dashboard/',
  plugins: [react()],
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../dist/dashboard', import.meta.url)),
    emptyOutDir: true,
    sourcemap: false,
    // No inline scripts or data: modules: the page's CSP allows only its own files.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    // React and the app in one file (~290 kB, ~90 kB gzipped): one request on loopback or a LAN.
    chunkSizeWarningLimit: 400,
  },
});
