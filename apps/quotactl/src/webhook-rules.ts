import { CHARGED_KINDS, type ChargedKind } from '@quota/domain';

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
 * What validate sees, both webhooks together (`validateWebhookRules` splits them): every
 * namespaced kind a quota counts (the domain's CHARGED_KINDS: the list the inventory lists and
 * the reconciler's RBAC grants), with DELETE so that a release is
 * recorded at once instead of at the next reconcile. Namespaces are sent too (the one cluster-scoped rule): the ledger
 * records their labels. ResourceQuota objects are left out on purpose: quotas live in the
 * ledger's admin API, and charging `count/resourcequotas` at admission would only duplicate
 * what the reconciler counts. `pods/resize` and `persistentvolumeclaims/status` are the two
 * subresource writes quota admission charges (in-place resize, allocated storage).
 */
export const VALIDATE_RULES: readonly RuleWithOperations[] = validateRules([]);

/** The validate rules with these custom resources added (each group's kinds in one rule): both validating webhooks' together. */
export function validateRules(customResources: readonly CustomResource[]): RuleWithOperations[] {
  const { charged, countOnly } = validateWebhookRules(customResources);
  return [...charged, NAMESPACE_RULE, ...countOnly];
}

/**
 * The validate rules of the namespaced kinds split by webhook: `charged` (pods, claims, services,
 * resource claims) under `failurePolicy`, `countOnly` (the `countOnly` kinds and every custom
 * resource, which quota counts only) under `countFailurePolicy`. NAMESPACE_RULE has webhooks of its own.
 */
export function validateWebhookRules(customResources: readonly CustomResource[]): {
  charged: RuleWithOperations[];
  countOnly: RuleWithOperations[];
} {
  const sent = CHARGED_KINDS.filter((k) => k.webhook);
  return {
    charged: kindRules(sent.filter((k) => !k.countOnly)),
    countOnly: kindRules([...sent.filter((k) => k.countOnly), ...customResources]),
  };
}

function kindRules(kinds: readonly (CustomResource | ChargedKind)[]): RuleWithOperations[] {
  return groupsOf(kinds).map(([group, inGroup]) =>
    rule(
      group,
      inGroup.flatMap((k) => [k.groupResource.resource, ...subresourcesOf(k).map((sub) => `${k.groupResource.resource}/${sub}`)]),
      ['CREATE', 'UPDATE', 'DELETE'],
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
