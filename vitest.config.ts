import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Sandbox and CLI tests each listen on their own free loopback port, so files can run in parallel.
    pool: 'forks',
  },
});
