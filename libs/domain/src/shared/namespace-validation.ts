import { MANAGED_NAMESPACE_LABEL, MANAGED_SINCE_ANNOTATION } from '../kube/managed-namespace.js';
import type { NamespaceDefinition } from './shared-quota.js';
import { StrictDecoder } from '../validation/decode.js';
import { type FieldError, checkEach, invalid, invalidObject, str, tooMany } from '../validation/field.js';
import {
  type FullObjectMeta,
  type ObjectMetaRules,
  decodeObjectMeta,
  isStandardOrQualifiedFinalizer,
  METADATA_LIST_MAX,
  validateObjectMeta,
} from '../validation/object-meta.js';
import { isQualifiedName, nameIsDNSLabel } from '../validation/names.js';

/**
 * A Namespace as the ledger keeps it (the labels and annotations that shared quotas
 * select namespaces by), validated on create and update as the API server does: strict
 * decoding, then `ValidateNamespace` (pkg/apis/core/validation). Cluster-scoped; the name is a
 * DNS label; the status a client sends is decoded for its errors and dropped (the API server
 * sets it).
 */
export interface Namespace {
  readonly apiVersion: 'v1';
  readonly kind: 'Namespace';
  readonly metadata: FullObjectMeta;
  readonly spec: { readonly finalizers?: readonly string[] };
}

const KIND = 'Namespace';
const CLUSTER_DNS_LABEL: ObjectMetaRules = { nameFn: nameIsDNSLabel, requiresNamespace: false };

/**
 * Validates an untrusted Namespace (parsed JSON) and returns it typed. Throws
 * `DomainError('ObjectMalformed')` for what does not decode, `DomainError('ObjectInvalid')` with
 * one `FieldCause` per problem for what Kubernetes would refuse.
 */
export function validateNamespace(obj: unknown): Namespace {
  const dec = new StrictDecoder(KIND);
  const top = dec.root(obj, ['apiVersion', 'kind', 'metadata', 'spec', 'status']);
  dec.typeMeta(top);
  const metadata = decodeObjectMeta(dec, top['metadata'], 'metadata');
  const spec = dec.object(top['spec'], 'spec', ['finalizers']) ?? {};
  const finalizers = dec.stringArray(spec['finalizers'], 'spec.finalizers');
  const status = dec.object(top['status'], 'status', ['phase', 'conditions']);
  dec.string(status?.['phase'], 'status.phase');
  dec.array(status?.['conditions'], 'status.conditions');
  dec.throwIfInvalid();

  const errs: FieldError[] = [...validateObjectMeta(metadata, CLUSTER_DNS_LABEL), ...finalizerErrors(finalizers ?? [], 'spec.finalizers')];
  if (errs.length > 0) throw invalidObject(KIND, metadata.name ?? '', errs);
  return { apiVersion: 'v1', kind: KIND, metadata, spec: finalizers ? { finalizers } : {} };
}

/**
 * validateFinalizerName of each, on the list's path (Kubernetes does not index it); at most
 * METADATA_LIST_MAX of them (the ledger stores them), checked first.
 */
function finalizerErrors(finalizers: readonly string[], path: string): FieldError[] {
  if (finalizers.length > METADATA_LIST_MAX) return [tooMany(path, finalizers.length, METADATA_LIST_MAX)];
  const problems = (finalizer: string): string[] => [
    ...isQualifiedName(finalizer),
    ...(isStandardOrQualifiedFinalizer(finalizer) ? [] : ['name is neither a standard finalizer name nor is it fully qualified']),
  ];
  return checkEach(finalizers, problems, (finalizer, msg) => invalid(path, str(finalizer), msg));
}

/**
 * kubectl's copy of the last applied object: it repeats the object, can be as large as all
 * annotations together, and no quota selects on it, so the ledger does not keep it.
 */
const NOT_RECORDED_ANNOTATIONS: ReadonlySet<string> = new Set([
  'kubectl.kubernetes.io/last-applied-configuration',
  MANAGED_SINCE_ANNOTATION,
]);
/** The reconciler's mark of a namespace the ledger manages: it follows from the ledger, and selects no quota. */
const NOT_RECORDED_LABELS: ReadonlySet<string> = new Set([MANAGED_NAMESPACE_LABEL]);

/**
 * What the ledger records of a Namespace a cluster has (from a webhook review or the
 * reconciler's listing): name, labels, annotations and finalizers, validated as the admin PUT
 * validates them. The cluster's server-set fields (uid, resourceVersion, managedFields, status)
 * are its own, not the ledger's, and are left out.
 */
export function clusterNamespaceRecord(
  name: string,
  metadata: {
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
    readonly resourceVersion?: string;
  },
  finalizers?: unknown,
): NamespaceDefinition {
  const annotations = Object.entries(metadata.annotations ?? {}).filter(([key]) => !NOT_RECORDED_ANNOTATIONS.has(key));
  const labels = metadata.labels && Object.fromEntries(Object.entries(metadata.labels).filter(([key]) => !NOT_RECORDED_LABELS.has(key)));
  const namespace = validateNamespace({
    apiVersion: 'v1',
    kind: KIND,
    metadata: { name, ...(labels ? { labels } : {}), ...(annotations.length > 0 ? { annotations: Object.fromEntries(annotations) } : {}) },
    ...(finalizers === undefined ? {} : { spec: { finalizers } }),
  });
  const definition = namespaceDefinitionOf(name, namespace);
  return metadata.resourceVersion ? { ...definition, observedVersion: metadata.resourceVersion } : definition;
}

/** What the ledger keeps of a validated Namespace: its name, labels, annotations and finalizers. */
export function namespaceDefinitionOf(name: string, namespace: Namespace): NamespaceDefinition {
  return {
    name,
    metadata: {
      ...(namespace.metadata.labels ? { labels: namespace.metadata.labels } : {}),
      ...(namespace.metadata.annotations ? { annotations: namespace.metadata.annotations } : {}),
    },
    ...(namespace.spec.finalizers ? { spec: { finalizers: namespace.spec.finalizers } } : {}),
  };
}

/** Whether two records carry the same labels and annotations (the finalizers select nothing). */
export function sameNamespaceMetadata(a: Pick<NamespaceDefinition, 'metadata'>, b: Pick<NamespaceDefinition, 'metadata'>): boolean {
  const canonical = (m: Readonly<Record<string, string>> | undefined) =>
    JSON.stringify(Object.entries(m ?? {}).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));
  return (
    canonical(a.metadata?.labels) === canonical(b.metadata?.labels) &&
    canonical(a.metadata?.annotations) === canonical(b.metadata?.annotations)
  );
}
