import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Reporter, TestModule } from 'vitest/node';

/** What differential.test.ts leaves of its run (test/kubernetes/README.md). */
const DIFFERENTIAL = fileURLToPath(new URL('./.results/differential.json', import.meta.url));

/**
 * A vitest reporter for `npm run test:kubernetes`: one last line, `kubernetes e2e: N passed, M
 * failed; differential: S steps, D disagreements`, for CI and the lead's summary (the second half
 * from the differential test's results file, when this run wrote one). A file whose hooks failed (its control plane did not
 * start) has no failed test of its own: it counts as one failure, and unhandled errors do too.
 */
export default class KubernetesSummary implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = unhandledErrors.length;
    for (const module of modules) {
      const tests = [...module.children.allTests()];
      passed += tests.filter((test) => test.result().state === 'passed').length;
      const failedTests = tests.filter((test) => test.result().state === 'failed').length;
      failed += failedTests > 0 ? failedTests : module.ok() ? 0 : 1;
    }
    console.log(`kubernetes e2e: ${passed} passed, ${failed} failed${differential(modules)}`);
  }
}

/** `; differential: S steps, D disagreements` when this run played the differential test. */
function differential(modules: ReadonlyArray<TestModule>): string {
  if (!modules.some((module) => module.moduleId.endsWith('differential.test.ts')) || !existsSync(DIFFERENTIAL)) return '';
  const { steps, disagreements } = JSON.parse(readFileSync(DIFFERENTIAL, 'utf8')) as { steps: number; disagreements: number };
  return `; differential: ${steps} steps, ${disagreements} disagreements`;
}
