import type { ResourceQuotaSpec } from '../kube/types.js';
import { type ClusterResourceQuotaSelector, validateClusterResourceQuotaSelector } from '../selectors/namespace-selection.js';
import type { LabelSelector, LabelSelectorRequirement } from '../selectors/label-selector.js';
import { StrictDecoder } from '../validation/decode.js';
import { child, invalidObject } from '../validation/field.js';
import {
  type FullObjectMeta,
  NAMESPACED_DNS_SUBDOMAIN,
  type ObjectMetaRules,
  decodeObjectMeta,
  validateObjectMeta,
} from '../validation/object-meta.js';
import { nameIsDNSSubdomain } from '../validation/names.js';
import { decodeQuotaSpec, toQuotaSpec, validateQuotaSpec } from '../validation/resource-quota.js';
import { assertDefinitionSize, clusterResourceQuotaSizeErrors, resourceQuotaSizeErrors } from '../validation/sizes.js';

/**
 * The two kinds of quota over several namespaces, validated on create and update
 * as their own API servers do: strict decoding, then OpenShift's ValidateClusterResourceQuota
 * (cluster-scoped, a selector that restricts, a ResourceQuotaSpec at `spec.quota`) and HNC's
 * HierarchicalResourceQuota rules (namespaced, `spec.hard` checked as a ResourceQuota's). The
 * status a client sends is decoded for its errors and dropped: the ledger computes it.
 */

export interface ClusterResourceQuota {
  readonly apiVersion: 'quota.openshift.io/v1';
  readonly kind: 'ClusterResourceQuota';
  readonly metadata: FullObjectMeta;
  readonly spec: { readonly selector: ClusterResourceQuotaSelector; readonly quota: ResourceQuotaSpec };
}

export interface HierarchicalResourceQuota {
  readonly apiVersion: 'hnc.x-k8s.io/v1alpha2';
  readonly kind: 'HierarchicalResourceQuota';
  readonly metadata: FullObjectMeta;
  readonly spec: Pick<ResourceQuotaSpec, 'hard'>;
}

const CLUSTER_DNS_SUBDOMAIN: ObjectMetaRules = { nameFn: nameIsDNSSubdomain, requiresNamespace: false };

export function validateClusterResourceQuota(obj: unknown): ClusterResourceQuota {
  const kind = 'ClusterResourceQuota';
  const dec = new StrictDecoder(kind, 'quota.openshift.io/v1');
  const top = dec.root(obj, ['apiVersion', 'kind', 'metadata', 'spec', 'status']);
  dec.typeMeta(top);
  const metadata = decodeObjectMeta(dec, top['metadata'], 'metadata');
  const spec = dec.object(top['spec'], 'spec', ['selector', 'quota']) ?? {};
  const rawSelector = dec.object(spec['selector'], 'spec.selector', ['labels', 'annotations']);
  const labels = decodeLabelSelector(dec, rawSelector?.['labels'], 'spec.selector.labels');
  const annotations = dec.stringMap(rawSelector?.['annotations'], 'spec.selector.annotations');
  const quota = decodeQuotaSpec(dec, spec['quota'], 'spec.quota');
  const status = dec.object(top['status'], 'status', ['total', 'namespaces']);
  const total = dec.object(status?.['total'], 'status.total', ['hard', 'used']);
  dec.quantities(total?.['hard'], 'status.total.hard');
  dec.quantities(total?.['used'], 'status.total.used');
  dec.array(status?.['namespaces'], 'status.namespaces');
  dec.throwIfInvalid();

  const selector: ClusterResourceQuotaSelector = { ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) };
  assertDefinitionSize(kind, metadata.name ?? '', clusterResourceQuotaSizeErrors({ spec: { selector, quota: toQuotaSpec(quota) } }));
  const errs = [
    ...validateObjectMeta(metadata, CLUSTER_DNS_SUBDOMAIN),
    ...validateClusterResourceQuotaSelector(selector, 'spec.selector'),
    ...validateQuotaSpec(quota, 'spec.quota'),
  ];
  if (errs.length > 0) throw invalidObject(kind, metadata.name ?? '', errs);
  return { apiVersion: 'quota.openshift.io/v1', kind, metadata, spec: { selector, quota: toQuotaSpec(quota) } };
}

export function validateHierarchicalResourceQuota(obj: unknown): HierarchicalResourceQuota {
  const kind = 'HierarchicalResourceQuota';
  const dec = new StrictDecoder(kind, 'hnc.x-k8s.io/v1alpha2');
  const top = dec.root(obj, ['apiVersion', 'kind', 'metadata', 'spec', 'status']);
  dec.typeMeta(top);
  const metadata = decodeObjectMeta(dec, top['metadata'], 'metadata');
  const spec = dec.object(top['spec'], 'spec', ['hard']) ?? {};
  const hard = dec.quantities(spec['hard'], 'spec.hard');
  const status = dec.object(top['status'], 'status', ['hard', 'used']);
  dec.quantities(status?.['hard'], 'status.hard');
  dec.quantities(status?.['used'], 'status.used');
  dec.throwIfInvalid();

  const decoded = { hard, scopes: undefined, scopeSelector: undefined };
  assertDefinitionSize(kind, metadata.name ?? '', resourceQuotaSizeErrors({ spec: toQuotaSpec(decoded) }));
  const errs = [...validateObjectMeta(metadata, NAMESPACED_DNS_SUBDOMAIN), ...validateQuotaSpec(decoded, 'spec')];
  if (errs.length > 0) throw invalidObject(kind, metadata.name ?? '', errs);
  return { apiVersion: 'hnc.x-k8s.io/v1alpha2', kind, metadata, spec: toQuotaSpec(decoded) };
}

/** A meta/v1 LabelSelector, strictly. */
function decodeLabelSelector(dec: StrictDecoder, raw: unknown, path: string): LabelSelector | undefined {
  const selector = dec.object(raw, path, ['matchLabels', 'matchExpressions']);
  if (!selector) return undefined;
  const matchLabels = dec.stringMap(selector['matchLabels'], child(path, 'matchLabels'));
  const expressions = dec.array(selector['matchExpressions'], child(path, 'matchExpressions'));
  const matchExpressions = expressions?.map((item, i): LabelSelectorRequirement => {
    const at = `${child(path, 'matchExpressions')}[${i}]`;
    const r = dec.object(item, at, ['key', 'operator', 'values']) ?? {};
    const values = dec.stringArray(r['values'], child(at, 'values'));
    return {
      key: dec.string(r['key'], child(at, 'key')) ?? '',
      operator: (dec.string(r['operator'], child(at, 'operator')) ?? '') as LabelSelectorRequirement['operator'],
      ...(values ? { values } : {}),
    };
  });
  return { ...(matchLabels ? { matchLabels } : {}), ...(matchExpressions ? { matchExpressions } : {}) };
}
