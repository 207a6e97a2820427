import { CHARGED_KINDS, IGNORED_RESOURCES, type ChargedKind } from '@quota/domain';

/**
 * Which API requests each admission webhook is sent (`rules` of the configurations
 * webhook-config.ts builds): the charged and count-only kinds validate sees, Namespaces, and the
 * objects mutate stamps or defaults.
 */

/** A custom resource: the shape of CUSTOM_RESOURCES' entries. */
export type CustomResource = Pick<ChargedKind, 'kind' | 'apiVersion' | 'groupResource'>;

export interface RuleWithOperations {
  readonly apiGroups: readonly string[];
  readonly apiVersions: readonly string[];
  readonly resources: readonly string[];
  readonly operations: readonly ('CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT')[];
  readonly scope: 'Namespaced' | 'Cluster' | '*';
}

/**
 * Namespaces themselves (cluster-scoped): their labels choose the ClusterResourceQuotas and
 * hierarchical quotas covering them, so the ledger reads each change as it is made. Their own
 * webhooks: a Namespace review is matched by the Namespace's labels, and the label that makes a
 * namespace sent is one of them.
 */
export const NAMESPACE_RULE: RuleWithOperations = {
  apiGroups: [''],
  apiVersions: ['*'],
  resources: ['namespaces'],
  operations: ['CREATE', 'UPDATE', 'DELETE'],
  scope: 'Cluster',
};

/**
 * Every namespaced kind's CREATE, in every group and version: Kubernetes' quota counts an object
 * of any kind a quota names (`count/widgets.example.com`), so the count webhook is sent them all,
 * a CRD installed tomorrow included, and no rule has to follow discovery. Its matchConditions
 * (COUNT_MATCH_CONDITIONS) leave out the kinds validate is sent and those quota never charges. A
 * kind's UPDATE changes no count (the object-count evaluator handles CREATE alone), so none is sent.
 */
export const EVERY_KIND_CREATE: RuleWithOperations = {
  apiGroups: ['*'],
  apiVersions: ['*'],
  resources: ['*'],
  operations: ['CREATE'],
  scope: 'Namespaced',
};

/**
 * What validate sees, both webhooks together (`validateWebhookRules` splits them): the kinds
 * quota charges beyond a count (pods, claims, services, resource claims), with DELETE so that a
 * release is recorded at once instead of at the next reconcile; Namespaces (the one
 * cluster-scoped rule: the ledger records their labels); and the CREATE of every other
 * namespaced kind, which quota counts (`count/<resource>.<group>`, a CRD's included), with the
 * DELETE of the count-only kinds of CHARGED_KINDS. ResourceQuota objects are left out on purpose
 * (COUNT_MATCH_CONDITIONS): quotas live in the ledger's admin API, and charging
 * `count/resourcequotas` at admission would only duplicate what the reconciler counts.
 * `pods/resize` and `persistentvolumeclaims/status` are the two subresource writes quota
 * admission charges (in-place resize, allocated storage).
 */
export const VALIDATE_RULES: readonly RuleWithOperations[] = validateRules([]);

/** The validate rules with these custom resources' DELETE added (each group's kinds in one rule): both validating webhooks' together. */
export function validateRules(customResources: readonly CustomResource[]): RuleWithOperations[] {
  const { charged, countOnly } = validateWebhookRules(customResources);
  return [...charged, NAMESPACE_RULE, ...countOnly];
}

/**
 * The validate rules of the namespaced kinds split by webhook: `charged` (pods, claims, services,
 * resource claims) under `failurePolicy`; `countOnly`, what quota only counts, under
 * `countFailurePolicy`: every kind's CREATE (EVERY_KIND_CREATE), and the DELETE of the count-only
 * kinds and the custom resources named, which the reconciler lists (a delete of any other kind is
 * released when its watch sees it gone). NAMESPACE_RULE has webhooks of its own.
 */
export function validateWebhookRules(customResources: readonly CustomResource[]): {
  charged: RuleWithOperations[];
  countOnly: RuleWithOperations[];
} {
  const sent = CHARGED_KINDS.filter((k) => k.webhook);
  return {
    charged: kindRules(
      sent.filter((k) => !k.countOnly),
      ['CREATE', 'UPDATE', 'DELETE'],
    ),
    countOnly: [EVERY_KIND_CREATE, ...kindRules([...sent.filter((k) => k.countOnly), ...customResources], ['DELETE'])],
  };
}

/** A webhook's CEL condition on each request its rules match (admissionregistration.k8s.io/v1 MatchCondition). */
export interface MatchCondition {
  readonly name: string;
  readonly expression: string;
}

/**
 * What EVERY_KIND_CREATE does not send: the kinds validate is sent under `failurePolicy` (they
 * would be charged twice), ResourceQuota objects (see VALIDATE_RULES), and the resources quota never
 * charges (IGNORED_RESOURCES: events, the review APIs, bindings). Matched as `<group>/<resource>`,
 * the core group empty; the API server evaluates it before calling the webhook.
 */
export const COUNT_MATCH_CONDITIONS: readonly MatchCondition[] = [
  {
    name: 'counted-only',
    expression: `!(request.resource.group + '/' + request.resource.resource in [${countExcluded()
      .map((r) => `'${r.group}/${r.resource}'`)
      .join(', ')}])`,
  },
];

function countExcluded(): { readonly group: string; readonly resource: string }[] {
  const elsewhere = CHARGED_KINDS.filter((k) => !k.countOnly).map((k) => k.groupResource);
  return [...elsewhere, ...IGNORED_RESOURCES];
}

function kindRules(kinds: readonly (CustomResource | ChargedKind)[], operations: RuleWithOperations['operations']): RuleWithOperations[] {
  return groupsOf(kinds).map(([group, inGroup]) =>
    rule(
      group,
      inGroup.flatMap((k) => [k.groupResource.resource, ...subresourcesOf(k).map((sub) => `${k.groupResource.resource}/${sub}`)]),
      operations,
    ),
  );
}

/** The subresource writes charged for a kind: a custom resource has none. */
function subresourcesOf(kind: CustomResource | ChargedKind): readonly string[] {
  return 'subresources' in kind ? (kind.subresources ?? []) : [];
}

/** The kinds by API group, groups in the order they first appear. */
export function groupsOf<K extends CustomResource>(kinds: readonly K[]): [string, K[]][] {
  const groups = new Map<string, K[]>();
  for (const kind of kinds) groups.set(kind.groupResource.group, [...(groups.get(kind.groupResource.group) ?? []), kind]);
  return [...groups];
}

/** LimitRange defaults apply to pods and claims only, and only to the objects themselves. */
export const MUTATE_RULES: readonly RuleWithOperations[] = [rule('', ['pods', 'persistentvolumeclaims'], ['CREATE', 'UPDATE'])];

/**
 * LimitRange and Ledger*Quota objects get the user who wrote them stamped
 * (quota-ledger.io/last-applied-by), in every namespace: the first one in a namespace is what
 * makes it managed, before it carries the label.
 */
export const MUTATE_DEFINITION_RULES: readonly RuleWithOperations[] = [
  rule('', ['limitranges'], ['CREATE', 'UPDATE']),
  rule('quota-ledger.io', ['ledgerquotas', 'ledgerhierarchicalquotas'], ['CREATE', 'UPDATE']),
  // The one cluster-scoped kind stamped: LedgerClusterQuota objects.
  { ...rule('quota-ledger.io', ['ledgerclusterquotas'], ['CREATE', 'UPDATE']), scope: 'Cluster' },
];

function rule(group: string, resources: readonly string[], operations: RuleWithOperations['operations']): RuleWithOperations {
  // Cluster-scoped objects are outside every namespace's quota: not sending them saves a round trip.
  return { apiGroups: [group], apiVersions: ['*'], resources, operations, scope: 'Namespaced' };
}
