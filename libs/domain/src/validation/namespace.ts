import { StrictDecoder } from './decode.js';
import { type FieldError, invalid, invalidObject, str } from './field.js';
import { type FullObjectMeta, type ObjectMetaRules, decodeObjectMeta, isStandardOrQualifiedFinalizer, validateObjectMeta } from './object-meta.js';
import { isQualifiedName, nameIsDNSLabel } from './names.js';

/**
 * A Namespace as the ledger keeps it (issue 18: the labels and annotations that shared quotas
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

  const errs: FieldError[] = [...validateObjectMeta(metadata, CLUSTER_DNS_LABEL), ...(finalizers ?? []).flatMap((f) => finalizerErrors(f, 'spec.finalizers'))];
  if (errs.length > 0) throw invalidObject(KIND, metadata.name ?? '', errs);
  return { apiVersion: 'v1', kind: KIND, metadata, spec: finalizers ? { finalizers } : {} };
}

/** validateFinalizerName, on the list's path (Kubernetes does not index it). */
function finalizerErrors(finalizer: string, path: string): FieldError[] {
  const errs = isQualifiedName(finalizer).map((msg) => invalid(path, str(finalizer), msg));
  if (!isStandardOrQualifiedFinalizer(finalizer)) errs.push(invalid(path, str(finalizer), 'name is neither a standard finalizer name nor is it fully qualified'));
  return errs;
}
