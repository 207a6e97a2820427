import { BETA_STORAGE_CLASS_ANNOTATION, LAST_APPLIED_BY_ANNOTATION, LIMIT_RANGER_ANNOTATION } from './annotations.js';
import {
  each,
  keys,
  mergeSelections,
  METADATA_MAP_MAX_BYTES,
  OBJECT_FIELDS,
  objectFields,
  PRESENCE,
  selectFields,
  WHOLE,
  type FieldSelection,
} from './field-selection.js';
import type { GroupResource, KubeObject } from './types.js';

/**
 * What admission reads of each kind (field-selection.ts): the evaluators' readers
 * (usage/pod-model.ts readPod, usage/pvc.ts readPvc, usage/service.ts, usage/resource-claim.ts
 * readRequests), LimitRanger's (limit-range/limit-ranger-plugin.ts), the checks of a review's shape
 * (validation/shape.ts), and what the ledger records of a Namespace and of a definition's
 * author. Each of those readers selects its kind's fields before it reads, so a field it reads
 * and this misses is invisible to it, and Kubernetes' own test tables for it fail.
 */
const RESOURCES = keys({ requests: WHOLE, limits: WHOLE });
const CONTAINER = keys({ name: WHOLE, resources: RESOURCES, restartPolicy: WHOLE });
const CONTAINER_STATUS = keys({ name: WHOLE, resources: RESOURCES, allocatedResources: WHOLE });
/** An affinity term is read only for naming namespaces or selecting them (usesCrossNamespacePodAffinity). */
const AFFINITY_TERM = keys({ namespaces: each(PRESENCE), namespaceSelector: PRESENCE });
const AFFINITY = keys({
  requiredDuringSchedulingIgnoredDuringExecution: each(AFFINITY_TERM),
  preferredDuringSchedulingIgnoredDuringExecution: each(keys({ podAffinityTerm: AFFINITY_TERM })),
});

export const POD_FIELDS: FieldSelection = objectFields(
  {
    spec: keys({
      containers: each(CONTAINER),
      initContainers: each(CONTAINER),
      ephemeralContainers: each(CONTAINER),
      overhead: WHOLE,
      resources: RESOURCES,
      activeDeadlineSeconds: WHOLE,
      priorityClassName: WHOLE,
      affinity: keys({ podAffinity: AFFINITY, podAntiAffinity: AFFINITY }),
    }),
    status: keys({
      phase: WHOLE,
      qosClass: WHOLE,
      conditions: each(keys({ type: WHOLE, reason: WHOLE })),
      containerStatuses: each(CONTAINER_STATUS),
      initContainerStatuses: each(CONTAINER_STATUS),
    }),
  },
  // LimitRanger's defaults annotate the pod: whether there are annotations, and its own.
  { annotations: keys({ [LIMIT_RANGER_ANNOTATION]: WHOLE }) },
);

export const PERSISTENT_VOLUME_CLAIM_FIELDS: FieldSelection = objectFields(
  {
    spec: keys({ resources: RESOURCES, storageClassName: WHOLE, volumeAttributesClassName: WHOLE }),
    status: keys({
      allocatedResources: WHOLE,
      currentVolumeAttributesClassName: WHOLE,
      modifyVolumeStatus: keys({ targetVolumeAttributesClassName: WHOLE }),
    }),
  },
  { annotations: keys({ [BETA_STORAGE_CLASS_ANNOTATION]: WHOLE }) },
);

export const SERVICE_FIELDS: FieldSelection = objectFields({
  spec: keys({ type: WHOLE, ports: each(keys({ nodePort: WHOLE })), allocateLoadBalancerNodePorts: WHOLE }),
});

/** One device choice; the fields beyond the three charged are read only for being set (a v1beta1 request's flat choice). */
const DEVICE_CHOICE = keys({
  deviceClassName: WHOLE,
  allocationMode: WHOLE,
  count: WHOLE,
  selectors: PRESENCE,
  adminAccess: PRESENCE,
  tolerations: PRESENCE,
  capacity: PRESENCE,
});
const DEVICE_REQUEST = mergeSelections(DEVICE_CHOICE, keys({ exactly: DEVICE_CHOICE, firstAvailable: each(DEVICE_CHOICE) }));

export const RESOURCE_CLAIM_FIELDS: FieldSelection = objectFields({ spec: keys({ devices: keys({ requests: each(DEVICE_REQUEST) }) }) });

/** What the ledger records of a Namespace (shared/namespace-validation.ts clusterNamespaceRecord): its labels select it into shared quotas. */
export const NAMESPACE_FIELDS: FieldSelection = objectFields(
  // At most 256 finalizers, as the ledger validates a Namespace (METADATA_LIST_MAX, shared/namespace-validation.ts).
  { spec: keys({ finalizers: { items: WHOLE, maxItems: 256 } }) },
  {
    labels: { whole: true, maxBytes: METADATA_MAP_MAX_BYTES },
    annotations: { whole: true, maxBytes: METADATA_MAP_MAX_BYTES },
    resourceVersion: WHOLE,
  },
);

/**
 * A LimitRange under review: whether it has annotations, and the author one (the mutating webhook
 * stamps it). Kubernetes validates its spec itself.
 */
export const DEFINITION_FIELDS: FieldSelection = objectFields({}, { annotations: keys({ [LAST_APPLIED_BY_ANNOTATION]: WHOLE }) });

/**
 * A LedgerQuota, LedgerClusterQuota or LedgerHierarchicalQuota under review: the author annotation,
 * and its whole spec, which the mutating webhook validates as the REST API validates the
 * ResourceQuota, ClusterResourceQuota or HierarchicalResourceQuota it stands for (a quota's spec
 * is small: its hard, scopes and selectors), and whose counts of kinds the webhooks are not sent
 * are warned of.
 */
export const QUOTA_DEFINITION_FIELDS: FieldSelection = objectFields(
  { spec: WHOLE },
  { annotations: keys({ [LAST_APPLIED_BY_ANNOTATION]: WHOLE }) },
);

const QUOTA_DEFINITIONS = ['ledgerquotas', 'ledgerclusterquotas', 'ledgerhierarchicalquotas'];

/** What admission reads of an object of this kind; OBJECT_FIELDS for every kind it only counts. */
export function fieldsRead(groupResource: GroupResource): FieldSelection {
  const { group, resource } = groupResource;
  if (group === '') {
    switch (resource) {
      case 'pods':
        return POD_FIELDS;
      case 'persistentvolumeclaims':
        return PERSISTENT_VOLUME_CLAIM_FIELDS;
      case 'services':
        return SERVICE_FIELDS;
      case 'namespaces':
        return NAMESPACE_FIELDS;
    }
  }
  if (group === 'resource.k8s.io' && resource === 'resourceclaims') return RESOURCE_CLAIM_FIELDS;
  if (group === 'quota-ledger.io' && QUOTA_DEFINITIONS.includes(resource)) return QUOTA_DEFINITION_FIELDS;
  if (group === '' && resource === 'limitranges') return DEFINITION_FIELDS;
  return OBJECT_FIELDS;
}

/** Every kind's together: what the edge records while it reads a body whose kind it does not know yet. */
export const ANY_KIND_FIELDS: FieldSelection = [
  POD_FIELDS,
  PERSISTENT_VOLUME_CLAIM_FIELDS,
  SERVICE_FIELDS,
  RESOURCE_CLAIM_FIELDS,
  NAMESPACE_FIELDS,
  QUOTA_DEFINITION_FIELDS,
].reduce(mergeSelections);

/** The part of an object of this kind that admission reads (undefined stays undefined). */
export function selectObject<T extends KubeObject | undefined>(groupResource: GroupResource, object: T): T {
  return (object === undefined ? undefined : selectFields(object, fieldsRead(groupResource))) as T;
}
