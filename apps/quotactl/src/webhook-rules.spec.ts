import { describe, expect, it } from 'vitest';
import { COUNT_MATCH_CONDITIONS, EVERY_KIND_CREATE } from './webhook-rules.js';

describe("the count webhook's routing", () => {
  it("is sent every namespaced kind's CREATE, in every group and version, and nothing else by that rule", () => {
    expect(EVERY_KIND_CREATE).toEqual({
      apiGroups: ['*'],
      apiVersions: ['*'],
      resources: ['*'],
      operations: ['CREATE'],
      scope: 'Namespaced',
    });
  });

  it('leaves out, by one CEL condition, what validate charges and what quota never charges', () => {
    expect(COUNT_MATCH_CONDITIONS).toHaveLength(1);
    const expression = COUNT_MATCH_CONDITIONS[0]?.expression ?? '';
    expect(expression.startsWith("!(request.resource.group + '/' + request.resource.resource in [")).toBe(true);
    const excluded = [...expression.matchAll(/'([^']*)'/g)].map((m) => m[1]);
    // Charged by validate under failurePolicy, not counted here a second time; ResourceQuota objects; events and the review APIs.
    expect(excluded).toEqual(
      expect.arrayContaining([
        '/pods',
        '/persistentvolumeclaims',
        '/services',
        'resource.k8s.io/resourceclaims',
        '/resourcequotas',
        '/events',
        'events.k8s.io/events',
        '/bindings',
        'authorization.k8s.io/localsubjectaccessreviews',
      ]),
    );
    // Every kind quota only counts goes through.
    for (const kind of ['/configmaps', '/serviceaccounts', 'apps/deployments', 'policy/poddisruptionbudgets', 'example.com/widgets'])
      expect(excluded).not.toContain(kind);
  });
});
