import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Files that need a process of their own: they replace modules (`vi.mock`) or check which modules a
 * fresh process loads, so they cannot share a module cache with other files.
 */
const NEEDS_OWN_PROCESS = [
  'test/sandbox/secrets-access.test.ts',
  'test/cli/apply-import-once.test.ts',
  'test/clients/agent-load.test.ts',
  'test/common/switchable-context.test.ts',
  'test/engine/export-files.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Sandbox and CLI tests each listen on their own free loopback port, so files can run in parallel.
    pool: 'forks',
    // A worker per core, at least two. Vitest's default leaves one core free, which on a 2-core CI
    // machine ran every file in one worker (200 s); most files wait on loopback answers and child
    // processes, so two workers took it to under two minutes. Three were faster still, but pushed
    // the tests that bound a wall time (a slot's wait, a rate-limit window) close to their limits.
    maxWorkers: Math.max(2, availableParallelism()),
    projects: [
      {
        extends: true,
        test: {
          name: 'shared',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...NEEDS_OWN_PROCESS],
          // Files run one after another in each worker and share its module cache: each file
          // importing the sources afresh was about 100 s of a 330 s run on 2 cores. A test leaves
          // no global state behind (environment, signal handlers, module state): each file's own
          // afterAll/afterEach restore what it changed.
          isolate: false,
        },
      },
      { extends: true, test: { name: 'own-process', include: NEEDS_OWN_PROCESS, isolate: true } },
    ],
  },
});
