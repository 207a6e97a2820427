/**
 * The failure policy by kind, as the webhook configurations of a rendered install say it
 * (kustomize's or helm's). Written out here rather than read from CHARGED_KINDS, so that moving a
 * kind between the two webhooks in the code is caught:
 *
 * - what quota charges beyond an object count (CPU, memory, storage, load balancers, node ports,
 *   devices) must be sent under `Fail`: admitted unchecked, it runs over the limit;
 * - what quota only counts must never be sent under `Fail`: a ledger outage would then refuse
 *   every Secret and ConfigMap write in the cluster (helm's release Secrets among them), for a
 *   count the reconciler adopts afterwards anyway. Its policy is the install's value (default
 *   `Ignore`).
 */
export const CHARGED_RESOURCES = ['/pods', '/pods/resize', '/persistentvolumeclaims', '/persistentvolumeclaims/status', '/services', 'resource.k8s.io/resourceclaims'] as const;
export const COUNT_ONLY_RESOURCES = [
  '/configmaps',
  '/secrets',
  '/replicationcontrollers',
  'batch/jobs',
  'batch/cronjobs',
  'apps/deployments',
  'apps/replicasets',
  'apps/statefulsets',
  'apps/daemonsets',
] as const;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Every group/resource a validating webhook is sent, with that webhook's name and failurePolicy. */
export function validatedResources(docs: readonly unknown[]): { resource: string; webhook: string; failurePolicy: string }[] {
  return docs
    .filter((d) => isObj(d) && d['kind'] === 'ValidatingWebhookConfiguration')
    .flatMap((c) => list((c as Obj)['webhooks']))
    .filter(isObj)
    .flatMap((w) =>
      list(w['rules'])
        .filter(isObj)
        .flatMap((r) => list(r['apiGroups']).flatMap((g) => list(r['resources']).map((res) => `${String(g)}/${String(res)}`)))
        .map((resource) => ({ resource, webhook: String(w['name']), failurePolicy: String(w['failurePolicy']) })),
    );
}

/** What is wrong with the failure policies of the rendered webhooks; `countPolicy` is the one the install asked for. */
export function failurePolicyProblems(docs: readonly unknown[], countPolicy: 'Fail' | 'Ignore' = 'Ignore'): string[] {
  const sent = validatedResources(docs);
  const problems: string[] = [];
  for (const resource of CHARGED_RESOURCES) {
    const under = sent.filter((s) => s.resource === resource);
    if (under.length === 0 || under.some((s) => s.failurePolicy !== 'Fail')) {
      problems.push(`${resource} is charged beyond a count and must be sent under failurePolicy Fail only, found ${JSON.stringify(under)}`);
    }
  }
  for (const resource of COUNT_ONLY_RESOURCES) {
    const under = sent.filter((s) => s.resource === resource);
    if (under.length !== 1 || under[0]?.failurePolicy !== countPolicy) {
      problems.push(`${resource} is only counted and must be sent to one webhook, under the count-only failurePolicy ${countPolicy}, found ${JSON.stringify(under)}`);
    }
  }
  const mutating = docs.filter((d) => isObj(d) && d['kind'] === 'MutatingWebhookConfiguration').flatMap((c) => list((c as Obj)['webhooks']));
  for (const w of mutating.filter(isObj))
    if (w['failurePolicy'] !== 'Fail') problems.push(`mutating webhook ${String(w['name'])}: failurePolicy ${String(w['failurePolicy'])}, LimitRange defaults are policy and must be Fail`);
  return problems;
}
