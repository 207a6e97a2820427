import { assert } from '../assert.js';
import type { Reserved } from '../events/events.js';
import type { NamespaceState, Reservation } from '../events/fold.js';
import { selectObject } from '../kube/fields-read.js';
import type { GroupResource, KubeObject, LimitRange, Operation } from '../kube/types.js';
import type { JsonPatchOperation } from '../limit-range/json-patch.js';
import type { LimitValidation } from '../limit-range/validate.js';
import type { QuotaCharge, QuotaSnapshot } from '../quota/check.js';
import { admissionObjectName, forbiddenMessage, isForbidden, type QuotaDenial } from '../quota/denial.js';
import * as Resources from '../resources/resource-list.js';
import type { ResourceList } from '../resources/resource-list.js';
import type { AdmissionPlugin } from './plugins.js';
import { liveReservationsOf, originOf } from './stored.js';

/**
 * What admission decides on and what it decides, before it is an answer: the request as the
 * kube-apiserver sends it (or a REST call stands in for it), the view of the namespace it is
 * checked against, and the decision of LimitRanger and ResourceQuota (admit.ts decides it) with
 * the refusals it may give, worded as the API server words them.
 */
export interface AdmissionRequest {
  readonly operation: Operation;
  readonly groupResource: GroupResource;
  readonly subresource?: string;
  readonly namespace: string;
  /** `AdmissionRequest.name`; may be empty on a CREATE with generateName. */
  readonly name?: string;
  /** The object as it will be stored (absent on DELETE). */
  readonly object?: KubeObject;
  /** The stored object, on UPDATE (and DELETE). */
  readonly oldObject?: KubeObject;
}

/** What the decision needs of the namespace: read by key, never by scanning history. */
export interface AdmissionView {
  /** Every quota with its current usage (an entry, zero or not, for each hard resource). */
  readonly quotas: readonly QuotaSnapshot[];
  readonly limitRanges: readonly LimitRange[];
  /**
   * The live reservations the ledger holds for the request's object (by `metadata.uid`), oldest
   * first: what an UPDATE or a repeated CREATE is charged against (stored.ts). Empty or absent
   * when the ledger holds none.
   */
  readonly stored?: readonly Reservation[];
}

export type AdmissionDecision = AdmissionAllowed | AdmissionDenied;

export interface AdmissionAllowed {
  readonly allowed: true;
  /**
   * A CREATE of an object the ledger already holds at exactly this usage (a second call for
   * one create): the reservation that already charges it. Nothing new is reserved.
   */
  readonly existing?: Reservation;
  /** The object after LimitRange defaulting (what was checked and what will be stored). */
  readonly object?: KubeObject;
  /** LimitRange defaults as a JSONPatch against the request's object. */
  readonly patch: readonly JsonPatchOperation[];
  /** What each matching quota is charged, and its usage after the charge. */
  readonly charges: readonly QuotaCharge[];
  /** The reservation to append; absent when nothing is charged (DELETE, kinds quota ignores). */
  readonly reservation?: Reserved;
}

export interface AdmissionDenied {
  readonly allowed: false;
  /**
   * 403 Forbidden; 409 Conflict when the request contradicts what the ledger holds for its
   * object (stored.ts); 500 where Kubernetes answers an internal error (uncovered limited scopes);
   * 400 for a webhook review whose object has no uid (no API server sends one).
   */
  readonly code: 400 | 403 | 409 | 500;
  /** The full message, as the API server words it (`pods "web" is forbidden: …`). */
  readonly message: string;
  readonly stage: Extract<AdmissionPlugin, 'LimitRanger' | 'ResourceQuota'>;
  readonly denial?: QuotaDenial;
  readonly limits?: LimitValidation;
}

export const ALLOW_WITHOUT_CHARGE: AdmissionAllowed = Object.freeze({
  allowed: true,
  patch: Object.freeze([]),
  charges: Object.freeze([]),
});

/**
 * A webhook review of an object without `metadata.uid`, which the kube-apiserver sets before it
 * calls validating admission: nothing could ever confirm or release its reservation (the
 * reconciler matches objects by uid, and a webhook's reservation has no TTL), so a forged one
 * would hold quota for good. Refused, nothing reserved.
 */
export function uidMissing(request: AdmissionRequest): AdmissionDenied {
  return {
    allowed: false,
    code: 400,
    stage: 'ResourceQuota',
    message: `${groupResourceText(request)} "${admissionObjectName(request.object, request.name)}" cannot be admitted: the review's object has no metadata.uid, which the kube-apiserver sets before validating admission; the ledger would have no way to confirm or release what it reserved`,
  };
}

export function clusterObjectMessage(request: AdmissionRequest, reservation: Reservation): string {
  const how = originOf(reservation) === 'adopted' ? 'found in the cluster by the reconciler' : "admitted by the cluster's webhook";
  return (
    `${groupResourceText(request)} "${admissionObjectName(request.object, request.name)}" is forbidden: the object (uid ${reservation.object.uid ?? ''}) was ${how} ` +
    `(reservation ${reservation.id}); only the kube-apiserver's reviews and the reconciler change what it is charged, not a REST call`
  );
}

/** The request as admission reads it: only the fields it reads of the kind (kube/fields-read.ts), as the webhook's edge reads them. */
export function selectedRequest(request: AdmissionRequest): AdmissionRequest {
  if (!request.object && !request.oldObject) return request;
  const { object, oldObject, ...rest } = request;
  const selected = (o: KubeObject | undefined) => selectObject(request.groupResource, o);
  return { ...rest, ...(object ? { object: selected(object) } : {}), ...(oldObject ? { oldObject: selected(oldObject) } : {}) };
}

/** A refusal of the ResourceQuota plugin, as the API server answers it. */
export function quotaDenied(request: AdmissionRequest, denial: QuotaDenial): AdmissionDenied {
  return {
    allowed: false,
    code: isForbidden(denial) ? 403 : 500,
    message: forbiddenMessage(request.groupResource, admissionObjectName(request.object, request.name), denial),
    stage: 'ResourceQuota',
    denial,
  };
}

export function groupResourceText(request: AdmissionRequest): string {
  const { group, resource } = request.groupResource;
  return group ? `${resource}.${group}` : resource;
}

/**
 * The view admission needs, taken from a namespace state: the quotas, the limit ranges, and the
 * live reservations of the request's object (`uid`), which the state must hold (the service
 * loads them by key before deciding).
 */
export function admissionViewOf(state: NamespaceState, uid?: string, sharedElsewhere?: ReadonlyMap<string, ResourceList>): AdmissionView {
  const stored = uid === undefined ? [] : liveReservationsOf(state, uid);
  // Awaiting its first count, the namespace's usage is unknown: every quota refuses what it would
  // charge (`status unknown for quota`), as Kubernetes' does before its controller's first count.
  const unknown = state.awaitingCountSince !== undefined;
  return {
    quotas: [
      ...[...state.quotas.values()].map((quota) => ({
        name: quota.name,
        spec: quota.definition.spec,
        used: unknown ? Resources.EMPTY : (state.used.get(quota.name) ?? Resources.EMPTY),
      })),
      // A shared quota's usage is the total over every namespace it covers: this namespace's
      // part from its own state, the others' from the shared quota's head.
      ...[...state.shared.values()].map((quota) => {
        const here = state.sharedUsed.get(quota.key) ?? Resources.EMPTY;
        const elsewhere = sharedElsewhere?.get(quota.key);
        assert(
          sharedElsewhere === undefined || elsewhere !== undefined,
          `the usage of ${quota.key} in other namespaces was read before deciding`,
        );
        return {
          name: quota.key,
          shared: quota.ref,
          spec: quota.definition.spec,
          used: unknown ? Resources.EMPTY : elsewhere ? Resources.add(here, elsewhere) : here,
        };
      }),
    ],
    limitRanges: [...state.limitRanges.values()].map((lr) => ({
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: lr.name },
      spec: lr.definition.spec,
    })),
    ...(stored.length > 0 ? { stored } : {}),
  };
}

/** A 409 of the ResourceQuota plugin: the request contradicts what the ledger holds for its object (stored.ts). */
export function objectConflict(request: AdmissionRequest, why: string): AdmissionDenied {
  return {
    allowed: false,
    code: 409,
    stage: 'ResourceQuota',
    message: `Operation cannot be fulfilled on ${groupResourceText(request)} "${admissionObjectName(request.object, request.name)}": ${why}`,
  };
}
