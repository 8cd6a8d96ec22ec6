import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'clients/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Each file opens its own database (PGlite in memory, or a fresh database on the server).
    fileParallelism: true,
    reporters: ['default'],
  },
});
