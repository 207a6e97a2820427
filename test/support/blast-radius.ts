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
export const CHARGED_RESOURCES = [
  '/pods',
  '/pods/resize',
  '/persistentvolumeclaims',
  '/persistentvolumeclaims/status',
  '/services',
  'resource.k8s.io/resourceclaims',
] as const;
export const COUNT_ONLY_RESOURCES = [
  '/configmaps',
  '/secrets',
  '/replicationcontrollers',
  '/serviceaccounts',
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
      problems.push(
        `${resource} is only counted and must be sent to one webhook, under the count-only failurePolicy ${countPolicy}, found ${JSON.stringify(under)}`,
      );
    }
  }
  const mutating = docs
    .filter((d) => isObj(d) && d['kind'] === 'MutatingWebhookConfiguration')
    .flatMap((c) => list((c as Obj)['webhooks']));
  for (const w of mutating.filter(isObj))
    if (w['failurePolicy'] !== 'Fail')
      problems.push(
        `mutating webhook ${String(w['name'])}: failurePolicy ${String(w['failurePolicy'])}, LimitRange defaults are policy and must be Fail`,
      );
  return problems;
}

const MANAGED_LABEL = 'quota-ledger.io/managed';
const NAMESPACE_RESOURCE = '/namespaces';

/** Does this selector require the managed label (Exists, or a matchLabels/In on it)? */
function requiresManaged(selector: unknown): boolean {
  if (!isObj(selector)) return false;
  if (isObj(selector['matchLabels']) && MANAGED_LABEL in selector['matchLabels']) return true;
  return list(selector['matchExpressions']).some(
    (e) => isObj(e) && e['key'] === MANAGED_LABEL && (e['operator'] === 'Exists' || e['operator'] === 'In'),
  );
}

function webhooksOf(docs: readonly unknown[]): Obj[] {
  return docs
    .filter((d) => isObj(d) && String(d['kind']).endsWith('WebhookConfiguration'))
    .flatMap((c) => list((c as Obj)['webhooks']))
    .filter(isObj);
}

function resourcesOf(webhook: Obj): string[] {
  return list(webhook['rules'])
    .filter(isObj)
    .flatMap((r) => list(r['apiGroups']).flatMap((g) => list(r['resources']).map((res) => `${String(g)}/${String(res)}`)));
}

/**
 * Which namespaces each webhook is sent, as the install asked (`managed`: only those the reconciler
 * labelled quota-ledger.io/managed, the default of the manifests and the chart; `all`: every
 * namespace). In `managed`, whatever quota charges or counts (pods, claims, services, Secrets,
 * workloads) must come from labelled namespaces only: from every namespace, a ledger outage refuses
 * writes where no quota was ever defined. A Namespace's own writes: a managed one's under Fail (its
 * labels choose shared quotas), every other under Ignore (an outage must not stop creating one).
 */
export function namespaceSelectorProblems(docs: readonly unknown[], sent: 'managed' | 'all'): string[] {
  const problems: string[] = [];
  for (const webhook of webhooksOf(docs)) {
    const name = String(webhook['name']);
    const resources = resourcesOf(webhook);
    const charged = resources.filter(
      (r) => (CHARGED_RESOURCES as readonly string[]).includes(r) || (COUNT_ONLY_RESOURCES as readonly string[]).includes(r),
    );
    const managed = requiresManaged(webhook['namespaceSelector']);
    for (const resource of charged) {
      if (sent === 'managed' && !managed)
        problems.push(
          `${name} sends ${resource} from namespaces not labelled ${MANAGED_LABEL}: an outage refuses writes where no quota is`,
        );
      if (sent === 'all' && managed)
        problems.push(`${name} sends ${resource} only from namespaces labelled ${MANAGED_LABEL}, but every namespace was asked for`);
    }
    if (!resources.includes(NAMESPACE_RESOURCE)) continue;
    if (managed)
      problems.push(`${name}: a Namespace's review is matched by its own labels, so this selector would never see the label removed`);
    const object = webhook['objectSelector'];
    const ofManaged = requiresManaged(object);
    const ofUnmanaged = list(isObj(object) ? object['matchExpressions'] : []).some(
      (e) => isObj(e) && e['key'] === MANAGED_LABEL && e['operator'] === 'DoesNotExist',
    );
    if (sent === 'managed' && !ofManaged && !ofUnmanaged && webhook['failurePolicy'] === 'Fail')
      problems.push(`${name}: sends the Namespaces of every namespace under Fail: an outage stops creating namespaces`);
    if (ofUnmanaged && webhook['failurePolicy'] !== 'Ignore')
      problems.push(
        `${name}: failurePolicy ${String(webhook['failurePolicy'])} for the Namespaces the ledger does not manage; they must not wait on it (Ignore)`,
      );
    if (ofManaged && webhook['failurePolicy'] !== 'Fail')
      problems.push(
        `${name}: failurePolicy ${String(webhook['failurePolicy'])} for managed Namespaces, whose relabels move shared quotas (Fail)`,
      );
  }
  const namespaceWebhooks = webhooksOf(docs).filter((w) => resourcesOf(w).includes(NAMESPACE_RESOURCE));
  if (sent === 'managed' && !namespaceWebhooks.some((w) => requiresManaged(w['objectSelector'])))
    problems.push('no webhook is sent the writes of managed Namespaces');
  return problems;
}

/**
 * The managed label's guards: the reconciler may patch Namespaces (its own ClusterRole, nothing
 * else in it), and an admission policy, bound, lets nobody else remove or change the label and the
 * reconciler change nothing else.
 */
export function managedLabelProblems(docs: readonly unknown[]): string[] {
  const problems: string[] = [];
  const named = (kind: string, name: string): Obj | undefined =>
    docs.find((d): d is Obj => isObj(d) && d['kind'] === kind && isObj(d['metadata']) && d['metadata']['name'] === name);
  const role = named('ClusterRole', 'quota-ledger-reconciler-namespace-labels');
  const rules = list(role?.['rules']).filter(isObj);
  if (!role)
    problems.push('no ClusterRole quota-ledger-reconciler-namespace-labels: the reconciler cannot label the namespaces it manages');
  else if (
    JSON.stringify(rules.map((r) => [r['apiGroups'], r['resources'], r['verbs']])) !== JSON.stringify([[[''], ['namespaces'], ['patch']]])
  )
    problems.push(`ClusterRole quota-ledger-reconciler-namespace-labels grants more than patch on namespaces: ${JSON.stringify(rules)}`);
  const policy = named('ValidatingAdmissionPolicy', 'quota-ledger-managed-label');
  const text = JSON.stringify(policy ?? {});
  if (!policy)
    problems.push('no ValidatingAdmissionPolicy quota-ledger-managed-label: anyone who may patch a Namespace can remove its managed label');
  else {
    if (!text.includes('system:serviceaccount:quota-ledger:quota-ledger-reconciler'))
      problems.push('the managed-label policy does not name the reconciler');
    if (!text.includes(MANAGED_LABEL)) problems.push(`the managed-label policy does not guard ${MANAGED_LABEL}`);
    if (policy['spec'] && isObj(policy['spec']) && policy['spec']['failurePolicy'] !== 'Fail')
      problems.push('the managed-label policy does not fail closed');
  }
  const binding = named('ValidatingAdmissionPolicyBinding', 'quota-ledger-managed-label');
  if (!binding) problems.push('no ValidatingAdmissionPolicyBinding quota-ledger-managed-label: the policy guards nothing unbound');
  else if (!JSON.stringify(binding).includes('"Deny"')) problems.push('the managed-label policy is bound without Deny');
  return problems;
}
