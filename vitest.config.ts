import { fileURLToPath } from 'node:url';
import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';

const alias = {
  '@quota/domain': fileURLToPath(new URL('./libs/domain/src/index.ts', import.meta.url)),
  '@quota/ledger': fileURLToPath(new URL('./libs/ledger/src/index.ts', import.meta.url)),
  '@quota/config': fileURLToPath(new URL('./libs/config/src/index.ts', import.meta.url)),
  '@quota/inventory': fileURLToPath(new URL('./libs/inventory/src/index.ts', import.meta.url)),
  '@quota/jobs': fileURLToPath(new URL('./libs/jobs/src/index.ts', import.meta.url)),
  '@quota/ops': fileURLToPath(new URL('./libs/ops/src/index.ts', import.meta.url)),
  '@quota/api': fileURLToPath(new URL('./libs/api/src/index.ts', import.meta.url)),
};

// SWC compiles the tests so that Nest's decorators get their design-time metadata,
// which esbuild does not emit.
const plugins = [swc.vite({ module: { type: 'es6' } })];

export default defineConfig({
  plugins,
  resolve: { alias },
  test: {
    projects: [
      {
        plugins,
        resolve: { alias },
        test: {
          name: 'unit',
          include: ['apps/**/*.spec.ts', 'libs/**/*.spec.ts'],
          environment: 'node',
        },
      },
      {
        plugins,
        resolve: { alias },
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts', 'test/architecture/**/*.test.ts'],
          exclude: ['test/e2e/**/*.browser.test.ts', 'test/e2e/zero-setup.test.ts'],
          environment: 'node',
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // Each file creates its own database; files run in parallel.
          fileParallelism: true,
        },
      },
      {
        plugins,
        resolve: { alias },
        test: {
          // The README's quick start from a clean copy (npm run test:quickstart): npm install and a
          // whole build, then the embedded PostgreSQL. Alone, after the integration files: beside
          // them it measures their load, not the start.
          name: 'quickstart',
          include: ['test/e2e/zero-setup.test.ts'],
          environment: 'node',
          testTimeout: 60_000,
          hookTimeout: 60_000,
          fileParallelism: false,
        },
      },
      {
        plugins,
        resolve: { alias },
        test: {
          // The dashboard in Debian's Chromium, driven by playwright-core (npm run test:browser;
          // .ci/run installs chromium). One file at a time: each starts a browser.
          name: 'browser',
          include: ['test/e2e/**/*.browser.test.ts'],
          environment: 'node',
          testTimeout: 60_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      {
        plugins,
        resolve: { alias },
        test: {
          // Fault injection (npm run test:faults): kills processes, restarts a private PostgreSQL,
          // stops a private Redis. One file at a time: each loads the machine on purpose.
          name: 'faults',
          include: ['test/faults/**/*.test.ts'],
          environment: 'node',
          testTimeout: 180_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      {
        plugins,
        resolve: { alias },
        test: {
          // A real control plane (npm run test:kubernetes: test/kubernetes/build.sh builds etcd,
          // kube-apiserver and kube-controller-manager first). One file at a time: each starts one.
          name: 'kubernetes',
          // test/helm: helm from its Go module (test/helm/build.sh, run first by npm run test:kubernetes).
          include: ['test/kubernetes/**/*.test.ts', 'test/helm/**/*.test.ts'],
          environment: 'node',
          testTimeout: 120_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
