import { randomBytes } from 'node:crypto'
import { defineConfig } from 'vitest/config'
import { CapabilityReporter } from './test/helpers/capability-reporter.js'

/*
 * Five projects (README, "Test it"):
 * - unit: everything in-process (the app through inject, SQLite, PostgreSQL, Redis); `npm test` runs two
 *   files at a time (VITEST_MAX_WORKERS=2), `npm run test:full` one (vitest's default on 2 cores). Files
 *   share their worker's module graph (isolate: false): the source, the reference data and the compiled
 *   route schemas load once per worker instead of once per file, which was half the run. So a file must
 *   leave no state behind in modules (each builds its own app and store); files that mock a module run
 *   isolated in unit-mocking;
 * - fuzz: the property runs; `npm test` runs them short (FUZZ_RUNS), `npm run test:full` at full length;
 * - process: the compiled CLI and server as child processes, clusters, crashes, restarts: one file at a
 *   time, so their timeouts and signals do not compete with each other for the two cores;
 * - browser: chromium driving the beacon and the console, one file at a time.
 * `npm test` runs unit, unit-mocking and fuzz; `npm run test:full` (CI) runs all five, process and browser after the rest.
 */
const PROCESS = [
  'test/cli*.test.ts',
  'test/concurrent-start.test.ts',
  'test/server-lifecycle.test.ts',
  'test/secret.test.ts',
  'test/config/start.test.ts',
  'test/tls/server.test.ts',
  'test/redis/limiter.test.ts',
  'test/cluster/**/*.test.ts',
  'test/reliability/**/*.test.ts',
  'test/first-key.test.ts',
  'test/observability/admin-listener.test.ts',
  'test/deploy/container.test.ts',
]
const BROWSER = [
  'test/beacon/identity.test.ts',
  'test/beacon/integrity.test.ts',
  'test/beacon/watch.test.ts',
  'test/console/browser.test.ts',
  'test/console/polish.test.ts',
  'test/tls/beacon-https.test.ts',
]
const FUZZ = ['test/fuzz/**/*.test.ts']
// Files that mock a module (vi.mock): they need a module graph of their own, so they run isolated.
const MOCKING = ['test/security/sign-in-race.test.ts']

// One id per run: the PostgreSQL copies a run creates are named after it and dropped by its teardown
// (test/helpers/pg.ts). Workers get it, and the capability reporter's directory, through `env`.
process.env['VERDICT_PG_RUN'] ??= `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`
const capabilities = new CapabilityReporter()
const env = { VERDICT_PG_RUN: process.env['VERDICT_PG_RUN'], VERDICT_CAPABILITY_DIR: capabilities.dir }

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default', capabilities],
    env,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: [...PROCESS, ...BROWSER, ...FUZZ, ...MOCKING],
          isolate: false,
        },
      },
      { extends: true, test: { name: 'unit-mocking', include: MOCKING } },
      { extends: true, test: { name: 'fuzz', include: FUZZ, isolate: false } },
      {
        extends: true,
        test: { name: 'process', include: PROCESS, fileParallelism: false, sequence: { groupOrder: 1 } },
      },
      {
        extends: true,
        test: { name: 'browser', include: BROWSER, fileParallelism: false, sequence: { groupOrder: 2 } },
      },
    ],
  },
})
