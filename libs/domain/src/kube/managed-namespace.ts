/**
 * On a Namespace the ledger manages (a quota, LimitRange or shared quota has covered it): the
 * webhooks' default `namespaceSelector` sends only namespaces that carry it, so that a ledger
 * outage refuses nothing where no quota was ever defined. The reconciler sets it when a namespace
 * becomes managed, before its first count, and removes it from a namespace the ledger does not
 * manage; a ValidatingAdmissionPolicy (deploy/kubernetes/base/managed-namespace-label.yaml) lets
 * no one else remove or change it.
 */
export const MANAGED_NAMESPACE_LABEL = 'quota-ledger.io/managed';
/**
 * Beside MANAGED_NAMESPACE_LABEL: when (RFC 3339, the ledger's clock) the reconciler set it. A
 * listing is a first count only if it began a propagation delay after this (the kube-apiserver
 * reads namespaces' labels from a cache), whichever reconciler replica set it.
 */
export const MANAGED_SINCE_ANNOTATION = 'quota-ledger.io/managed-since';
