import type { GroupResource, KubeObject, LimitRange, Operation, PersistentVolumeClaim, Pod } from '../kube/types.js';
import { admissionObjectName, forbiddenText } from '../kube/forbidden.js';
import { computePodDefaults } from './defaults.js';
import { withLimitRangeApiDefaults } from './limit-range.js';
import type { JsonPatchOperation } from './json-patch.js';
import type { LimitRangerPodOptions } from './pod-resources.js';
import { selectObject } from '../kube/fields-read.js';
import { validatePodLimits, validatePvcLimits, type LimitValidation } from './validate.js';

/**
 * The LimitRanger admission plugin end to end (Admit, then Validate), for one request and
 * the namespace's LimitRanges. Skipped, as plumbing: the informer/lister, the live-lookup
 * LRU and its singleflight; the caller passes the LimitRanges in.
 *
 * LimitRanges may be passed as stored by our admin API, defaulted or not: the defaulting
 * the API server applies whenever it decodes one (SetDefaults_LimitRangeItem) is applied
 * here on read. It is idempotent, so an already defaulted LimitRange is read unchanged.
 */

const isCore = (gr: GroupResource, resource: string): boolean => gr.group === '' && gr.resource === resource;

export interface LimitRangerAttributes {
  readonly operation: Operation;
  readonly resource: GroupResource;
  readonly subresource?: string;
}

/**
 * Whether LimitRanger looks at a request at all: the handler takes CREATE and UPDATE, and
 * SupportsAttributes keeps pods and persistentvolumeclaims without a subresource, except
 * pod UPDATEs (containers are immutable) but including pods/resize (in-place resize).
 */
export function limitRangerHandles({ operation, resource, subresource = '' }: LimitRangerAttributes): boolean {
  if (operation !== 'CREATE' && operation !== 'UPDATE') return false;
  const pods = isCore(resource, 'pods');
  if (subresource === 'resize' && pods && operation === 'UPDATE') return true;
  if (subresource !== '') return false;
  if (pods && operation === 'UPDATE') return false;
  return pods || isCore(resource, 'persistentvolumeclaims');
}

export interface LimitRangerRequest extends LimitRangerAttributes {
  /** `AdmissionRequest.name` (empty on a CREATE with generateName). */
  readonly name?: string;
  readonly object: KubeObject;
  readonly oldObject?: KubeObject;
  /** The namespace's LimitRanges, in the order to apply them, as stored (defaulted or not). */
  readonly limitRanges: readonly LimitRange[];
  readonly options?: LimitRangerPodOptions;
}

export interface LimitRangerDecision {
  /** False when the plugin ignores the request (wrong kind, operation, subresource, or deleting). */
  readonly applies: boolean;
  readonly allowed: boolean;
  /** The defaulting patch against the request's object; empty when refused or nothing was set. */
  readonly patch: readonly JsonPatchOperation[];
  /** The object after defaulting (what was validated). */
  readonly object: KubeObject;
  /** The `kubernetes.io/limit-ranger` annotation written, if any. */
  readonly annotation?: string;
  readonly validation: LimitValidation;
  /**
   * When refused: the Forbidden (403) status message, as admission.NewForbidden words it,
   * e.g. `pods "web" is forbidden: maximum cpu usage per Container is 1, but limit is 2`.
   */
  readonly message?: string;
}

export function limitRangerForbiddenMessage(resource: GroupResource, name: string, reason: string): string {
  return forbiddenText(resource, name, reason);
}

const ALLOWED: LimitValidation = Object.freeze({ ok: true, violations: Object.freeze([]) });

export function admitLimitRanger(request: LimitRangerRequest): LimitRangerDecision {
  // Only what admission reads of the kind (kube/fields-read.ts): the rest cannot change the answer.
  const object = selectObject(request.resource, request.object);
  const oldObject = selectObject(request.resource, request.oldObject);
  // Read as the API server would decode them; a no-op on ones stored already defaulted.
  const limitRanges = request.limitRanges.map(withLimitRangeApiDefaults);
  const ignored: LimitRangerDecision = { applies: false, allowed: true, patch: [], object, validation: ALLOWED };
  if (!limitRangerHandles(request)) return ignored;
  // An object being deleted is never blocked (finalizer updates must go through).
  const deletion = oldObject?.metadata?.deletionTimestamp;
  if (deletion !== undefined && deletion !== null) return ignored;

  let mutated: KubeObject = object;
  let patch: readonly JsonPatchOperation[] = [];
  let annotation: string | undefined;
  let validation: LimitValidation;
  if (isCore(request.resource, 'pods')) {
    const defaulting = computePodDefaults(object as Pod, limitRanges);
    mutated = defaulting.pod;
    patch = defaulting.patch;
    annotation = defaulting.annotation;
    // On pods/resize the stored pod lets values the resize leaves alone go unchecked.
    validation = validatePodLimits(defaulting.pod, limitRanges, request.options, oldObject as Pod | undefined);
  } else {
    validation = validatePvcLimits(object as PersistentVolumeClaim, limitRanges, oldObject as PersistentVolumeClaim | undefined);
  }

  if (!validation.ok) {
    const message = limitRangerForbiddenMessage(request.resource, admissionObjectName(object, request.name), validation.message ?? '');
    return { applies: true, allowed: false, patch: [], object: mutated, validation, message };
  }
  return { applies: true, allowed: true, patch, object: mutated, ...(annotation !== undefined ? { annotation } : {}), validation };
}
