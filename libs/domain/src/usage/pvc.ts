import { BETA_STORAGE_CLASS_ANNOTATION } from '../kube/annotations.js';
import type { GroupResource, KubeObject, Operation } from '../kube/types.js';
import { Quantity } from '../quantity/quantity.js';
import * as Resources from '../resources/resource-list.js';
import type { ResourceList } from '../resources/resource-list.js';
import { field, FieldReader } from './fields.js';
import { objectCountName, unique } from './names.js';
import { EvaluatorBase } from './evaluator-base.js';
import type { UsageOptions } from './evaluator.js';
import type { ScopeFacts } from '../scopes/facts.js';
import { selectFields } from '../kube/field-selection.js';
import { PERSISTENT_VOLUME_CLAIM_FIELDS } from '../kube/fields-read.js';

/** How persistent volume claims are charged (pkg/quota/v1/evaluator/core/persistent_volume_claims.go). */

const PVCS: GroupResource = { group: '', resource: 'persistentvolumeclaims' };
export const PVC_OBJECT_COUNT_NAME = objectCountName(PVCS);

/** The per-class names are `<class>.storageclass.storage.k8s.io/<one of these>`. */
export const PVC_RESOURCE_NAMES: readonly string[] = ['persistentvolumeclaims', 'requests.storage'];
export const STORAGE_CLASS_SUFFIX = '.storageclass.storage.k8s.io/';
/** Read before `spec.storageClassName`, as Kubernetes still does. */
export { BETA_STORAGE_CLASS_ANNOTATION };
export const VOLUME_ATTRIBUTES_CLASS_SCOPE = 'VolumeAttributesClass';

/** `<class>.storageclass.storage.k8s.io/<resource>`. */
export function resourceByStorageClass(storageClass: string, resource: string): string {
  return `${storageClass}${STORAGE_CLASS_SUFFIX}${resource}`;
}

interface PvcModel {
  readonly storageClass: string;
  readonly requests: ResourceList;
  readonly allocatedResources: ResourceList;
  /** Every VolumeAttributesClass the claim refers to (spec, current and target). */
  readonly volumeAttributesClasses: ReadonlySet<string>;
}

export class PersistentVolumeClaimEvaluator extends EvaluatorBase {
  readonly groupResource = PVCS;

  /**
   * CREATE and UPDATE of the claim; UPDATE of its status when both objects are known.
   * Kubernetes means to charge a status update only when the allocated storage or the
   * volume attributes classes change (RequiresQuotaReplenish), but it compares the
   * allocated storage by pointer, which always differs: every status update is charged.
   */
  handles(operation: Operation, subresource?: string, object?: KubeObject, oldObject?: KubeObject): boolean {
    switch (subresource ?? '') {
      case '':
        return operation === 'CREATE' || operation === 'UPDATE';
      case 'status':
        return object !== undefined && oldObject !== undefined;
      default:
        return false;
    }
  }

  matchingResources(input: readonly string[]): string[] {
    return unique(
      input.filter(
        (name) =>
          name === PVC_OBJECT_COUNT_NAME ||
          PVC_RESOURCE_NAMES.includes(name) ||
          PVC_RESOURCE_NAMES.some((resource) => name.endsWith(`${STORAGE_CLASS_SUFFIX}${resource}`)),
      ),
    );
  }

  /** Claims have one scope: the VolumeAttributesClasses they refer to (spec, current, target). */
  scopeFacts(object: KubeObject, options: UsageOptions = {}): ScopeFacts {
    return { [VOLUME_ATTRIBUTES_CLASS_SCOPE]: [...readPvc(object, options.stored).volumeAttributesClasses] };
  }

  /** Kubernetes has no must-specify rule for claims: a claim without a storage request passes. */
  constraints(_required: readonly string[], _object: KubeObject): string[] {
    return [];
  }

  usage(object: KubeObject, options: UsageOptions = {}): ResourceList {
    const pvc = readPvc(object, options.stored);
    const one = Quantity.fromInt(1n);
    const result = new Map<string, Quantity>([
      ['persistentvolumeclaims', one],
      [PVC_OBJECT_COUNT_NAME, one],
    ]);
    if (pvc.storageClass !== '') result.set(resourceByStorageClass(pvc.storageClass, 'persistentvolumeclaims'), one);
    const storage = storageUsage(pvc);
    if (storage !== undefined) {
      result.set('requests.storage', storage);
      if (pvc.storageClass !== '') result.set(resourceByStorageClass(pvc.storageClass, 'requests.storage'), storage);
    }
    return Resources.fromEntries(result);
  }
}

/**
 * The storage request in whole bytes, or the allocated size when that is larger (an
 * expansion in progress or a failed one being recovered). No request, no charge.
 */
function storageUsage(pvc: PvcModel): Quantity | undefined {
  const requested = Resources.get(pvc.requests, 'storage');
  if (requested === undefined) return undefined;
  const request = roundUpToInteger(requested);
  const allocated = Resources.get(pvc.allocatedResources, 'storage');
  if (allocated !== undefined && allocated.cmp(request) > 0) return roundUpToInteger(allocated);
  return request;
}

/** Quantity.RoundUp(0): fractional bytes would fail quota validation. */
function roundUpToInteger(quantity: Quantity): Quantity {
  return quantity.isInteger() ? quantity : Quantity.fromInt(quantity.value(), quantity.format);
}

function readPvc(object: KubeObject, stored = false): PvcModel {
  const read = new FieldReader('persistentvolumeclaim', stored);
  // Only what admission reads of a claim (kube/fields-read.ts).
  const root = read.object(selectFields(object, PERSISTENT_VOLUME_CLAIM_FIELDS), '') ?? {};
  const metadata = read.object(field(root, 'metadata'), 'metadata');
  const annotations = read.object(field(metadata, 'annotations'), 'metadata.annotations');
  const spec = read.object(field(root, 'spec'), 'spec');
  const status = read.object(field(root, 'status'), 'status');
  const resources = read.object(field(spec, 'resources'), 'spec.resources');
  const modify = read.object(field(status, 'modifyVolumeStatus'), 'status.modifyVolumeStatus');

  const annotated = annotations !== undefined && Object.prototype.hasOwnProperty.call(annotations, BETA_STORAGE_CLASS_ANNOTATION);
  const storageClass = annotated
    ? read.string(field(annotations, BETA_STORAGE_CLASS_ANNOTATION), `metadata.annotations[${BETA_STORAGE_CLASS_ANNOTATION}]`)
    : read.string(field(spec, 'storageClassName'), 'spec.storageClassName');

  const classes = [
    read.string(field(spec, 'volumeAttributesClassName'), 'spec.volumeAttributesClassName'),
    read.string(field(status, 'currentVolumeAttributesClassName'), 'status.currentVolumeAttributesClassName'),
    read.string(field(modify, 'targetVolumeAttributesClassName'), 'status.modifyVolumeStatus.targetVolumeAttributesClassName'),
  ].filter((name) => name !== '');

  const model: PvcModel = {
    storageClass,
    requests: read.resources(field(resources, 'requests'), 'spec.resources.requests'),
    allocatedResources: read.resources(field(status, 'allocatedResources'), 'status.allocatedResources'),
    volumeAttributesClasses: new Set(classes),
  };
  read.done();
  return model;
}
