import type { Reporter, TestModule } from 'vitest/node';

/**
 * A vitest reporter for `npm run test:kubernetes`: one last line, `kubernetes e2e: N passed, M
 * failed`, for CI and the lead's summary. A file whose hooks failed (its control plane did not
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
    console.log(`kubernetes e2e: ${passed} passed, ${failed} failed`);
  }
}
