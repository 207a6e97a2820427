import { assert } from '../assert.js';
import { DomainError } from '../errors.js';
import type { ReservationSource, Reserved } from '../events/events.js';
import type { NamespaceState, Reservation } from '../events/fold.js';
import type { GroupResource, KubeObject, LimitRange, Operation } from '../kube/types.js';
import { admitLimitRanger } from '../limit-range/admission.js';
import type { JsonPatchOperation } from '../limit-range/json-patch.js';
import type { LimitValidation } from '../limit-range/validate.js';
import { Quantity } from '../quantity/quantity.js';
import { checkQuota } from '../quota/admission.js';
import type { LimitedResource, QuotaCharge, QuotaSnapshot } from '../quota/check.js';
import { pluginEnabled, type AdmissionPlugin } from './plugins.js';
import { admissionObjectName, forbiddenMessage, isForbidden, type QuotaDenial } from '../quota/denial.js';
import * as Resources from '../resources/resource-list.js';
import type { ResourceList } from '../resources/resource-list.js';
import { selectObject } from '../kube/fields-read.js';
import { evaluatorFor, isIgnoredResource } from '../usage/registry.js';
import { isSameResource, isSettled, LIVE_PER_OBJECT_MAX, liveReservationsOf, originOf, sameState, settledOf, settledStateOf, stateOf, type SettledState } from './stored.js';

/**
 * The admission decider: one request, the namespace's current quota state, and out comes
 * the decision and the event to append. It runs the plugins in Kubernetes' order —
 * LimitRanger's defaults (mutation), LimitRanger's validation, then ResourceQuota — on the
 * defaulted object, so a platform team gets the answer the API server would give. Either
 * plugin may be disabled (`Admit.plugins`); NamespaceLifecycle and AlwaysDeny run before this,
 * on the namespace (namespace/admit.ts).
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

export interface Admit {
  readonly request: AdmissionRequest;
  /** The id a new reservation gets (ids come from outside: the domain has no randomness). */
  readonly reservationId: string;
  /** The decision time, epoch milliseconds. */
  readonly now: number;
  /** A REST reservation's expiry, epoch milliseconds. */
  readonly expiresAt?: number;
  readonly limitedResources?: readonly LimitedResource[];
  /** The admission plugins that run (ADMISSION_PLUGINS_ENABLE / _DISABLE); absent: the defaults. */
  readonly plugins?: readonly AdmissionPlugin[];
  /**
   * Who asks: the kube-apiserver's review or a REST call (recorded on the reservation). A REST
   * call may not change an object the cluster admitted (`originOf`); absent in the specs that
   * port Kubernetes' own tables, where every request is the API server's.
   */
  readonly source?: ReservationSource;
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

const ALLOW_WITHOUT_CHARGE: AdmissionAllowed = Object.freeze({ allowed: true, patch: Object.freeze([]), charges: Object.freeze([]) });

/** Length: the plugins in the order kube-apiserver runs them, read top to bottom. */
export function decideAdmission(whole: Admit, view: AdmissionView): AdmissionDecision {
  // Decided on what admission reads of the kind (kube/fields-read.ts), as the webhook's edge reads it.
  const command: Admit = { ...whole, request: selectedRequest(whole.request) };
  const { request } = command;
  // DELETE is always allowed: the charge is released when the object is gone.
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return ALLOW_WITHOUT_CHARGE;
  if (!request.object) return ALLOW_WITHOUT_CHARGE;

  // LimitRanger disabled: no defaults and no min/max checks, the object is charged as sent.
  const limits = pluginEnabled(command.plugins, 'LimitRanger')
    ? admitLimitRanger({
        operation: request.operation,
        resource: request.groupResource,
        ...(request.subresource ? { subresource: request.subresource } : {}),
        ...(request.name ? { name: request.name } : {}),
        object: request.object,
        ...(request.oldObject ? { oldObject: request.oldObject } : {}),
        limitRanges: view.limitRanges,
      })
    : undefined;
  if (limits && !limits.allowed) {
    return { allowed: false, code: 403, message: limits.message ?? '', stage: 'LimitRanger', limits: limits.validation };
  }
  const object = limits?.object ?? request.object;
  const patch = limits?.patch ?? [];
  // ResourceQuota disabled: nothing is checked and nothing charged, so nothing is reserved (as
  // Kubernetes, which then does not charge at all); the reconciler adopts what exists later.
  if (!pluginEnabled(command.plugins, 'ResourceQuota')) return { allowed: true, object, patch, charges: [] };

  const stored = storedObjectOf(request, view.stored ?? []);
  if (stored.conflict) {
    return {
      allowed: false,
      code: 409,
      stage: 'ResourceQuota',
      message: `Operation cannot be fulfilled on ${groupResourceText(request)} "${admissionObjectName(request.object, request.name)}": ${stored.conflict}`,
    };
  }
  const foreign = command.source === 'rest' ? clusterReservationOf(view.stored ?? []) : undefined;
  if (foreign) return { allowed: false, code: 403, stage: 'ResourceQuota', message: clusterObjectMessage(request, foreign) };
  // A CREATE of an object the ledger holds already: the same again is charged once; anything
  // else is a change and must say so (an UPDATE), or it would be charged the old size.
  if (request.operation === 'CREATE' && stored.settled) {
    const now = newState(request, object, command.now);
    if (now && sameState(now, settledStateOf(stored.settled))) return { allowed: true, object, patch, charges: [], existing: stored.settled };
    return {
      allowed: false,
      code: 409,
      stage: 'ResourceQuota',
      message: `Operation cannot be fulfilled on ${groupResourceText(request)} "${admissionObjectName(request.object, request.name)}": the object (uid ${object.metadata?.uid}) is already admitted (reservation ${stored.settled.id}) with other usage; send an UPDATE to change it`,
    };
  }

  // The cluster's listing found the object at its end (a terminated reservation: a pod Succeeded or
  // Failed): a change of it, a resize, is measured as the request shows it, as Kubernetes measures
  // a terminal pod (its object count only), unless the request shows it alive again.
  const asLive = stored.settled?.terminatedAt === undefined;
  const quota = checkQuota({
    operation: request.operation,
    groupResource: request.groupResource,
    ...(request.subresource ? { subresource: request.subresource } : {}),
    namespace: request.namespace,
    object,
    ...(request.oldObject ? { oldObject: request.oldObject } : {}),
    // An UPDATE is charged against the ledger's settled state of the object, or in full when
    // the ledger does not hold it — never against the caller's oldObject.
    ...(request.operation === 'UPDATE' ? { previous: stored.settled ? settledStateOf(stored.settled) : null } : {}),
    now: command.now,
    // A request's word that its object reached its end is not taken: only the cluster's listing says so.
    asLive,
    // Nor is a pod charged below its spec: a resize found Infeasible may be applied yet.
    specFloor: true,
    quotas: view.quotas,
    ...(command.limitedResources ? { limitedResources: command.limitedResources } : {}),
  });
  if (!quota.allowed) return quotaDenied(request, quota.denial);

  const reservation = reservationFor(command, object, stored, asLive);
  // A webhook's reservation is confirmed or released by the object's uid alone (it has no TTL).
  if (reservation && command.source === 'webhook' && reservation.data.object.uid === undefined) return uidMissing(request);
  // One more change of an object with as many waiting as it may have: refused, not reserved.
  if (reservation?.data.operation === 'UPDATE' && stored.live >= LIVE_PER_OBJECT_MAX) {
    return {
      allowed: false,
      code: 409,
      stage: 'ResourceQuota',
      message: `Operation cannot be fulfilled on ${groupResourceText(request)} "${admissionObjectName(request.object, request.name)}": ${stored.live} changes of the object (uid ${reservation.data.object.uid}) are waiting to be confirmed; retry once they are committed or released`,
    };
  }
  return {
    allowed: true,
    object,
    patch,
    charges: quota.charges,
    ...(reservation ? { reservation } : {}),
  };
}

/**
 * A webhook review of an object without `metadata.uid`, which the kube-apiserver sets before it
 * calls validating admission: nothing could ever confirm or release its reservation (the
 * reconciler matches objects by uid, and a webhook's reservation has no TTL), so a forged one
 * would hold quota for good. Refused, nothing reserved.
 */
function uidMissing(request: AdmissionRequest): AdmissionDenied {
  return {
    allowed: false,
    code: 400,
    stage: 'ResourceQuota',
    message: `${groupResourceText(request)} "${admissionObjectName(request.object, request.name)}" cannot be admitted: the review's object has no metadata.uid, which the kube-apiserver sets before validating admission; the ledger would have no way to confirm or release what it reserved`,
  };
}

/** A live reservation of the object that the cluster made (its webhook or its listing): a REST call may not change it. */
function clusterReservationOf(live: readonly Reservation[]): Reservation | undefined {
  return live.find((reservation) => originOf(reservation) !== 'rest');
}

function clusterObjectMessage(request: AdmissionRequest, reservation: Reservation): string {
  const how = originOf(reservation) === 'adopted' ? 'found in the cluster by the reconciler' : "admitted by the cluster's webhook";
  return (
    `${groupResourceText(request)} "${admissionObjectName(request.object, request.name)}" is forbidden: the object (uid ${reservation.object.uid ?? ''}) was ${how} ` +
    `(reservation ${reservation.id}); only the kube-apiserver's reviews and the reconciler change what it is charged, not a REST call`
  );
}

function selectedRequest(request: AdmissionRequest): AdmissionRequest {
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

/**
 * The Reserved event for an admitted request, or undefined when the kind's evaluator does
 * not charge this operation. The reservation records the object's whole usage (not only
 * what today's quotas limit), so a quota created later counts it, as the quota controller
 * would count the existing object.
 */
function reservationFor(command: Admit, object: KubeObject, stored: StoredObject, asLive: boolean): Reserved | undefined {
  const { request } = command;
  const now = newState(request, object, command.now, asLive);
  if (!now) return undefined;
  const { usage } = now;
  const base = {
    reservationId: command.reservationId,
    object: objectRef(request, object),
    scopeFacts: now.scopeFacts,
    ...(command.expiresAt === undefined ? {} : { expiresAt: new Date(command.expiresAt).toISOString() }),
    ...(command.source ? { source: command.source } : {}),
  };
  if (request.operation === 'CREATE' || !request.oldObject) {
    return { type: 'Reserved', data: { ...base, operation: 'CREATE', charged: Resources.canonicalResourceList(usage) } };
  }
  const settled = stored.settled ? settledStateOf(stored.settled) : undefined;
  if (changesNothing(command, now, stored, asLive)) return undefined;
  const oldResourceVersion = baseVersionOf(command);
  return {
    type: 'Reserved',
    data: {
      ...base,
      operation: 'UPDATE',
      // While pending, the increase over what the ledger holds; in full when it holds nothing.
      charged: Resources.canonicalResourceList(settled ? increase(usage, settled.usage) : usage),
      objectUsage: Resources.canonicalResourceList(usage),
      ...(stored.latest ? { supersedes: stored.latest.id } : {}),
      ...(settled ? { previousScopeFacts: settled.scopeFacts } : {}),
      ...(oldResourceVersion ? { oldResourceVersion } : {}),
    },
  };
}

/**
 * Whether an UPDATE changes nothing the ledger counts (a label edit): nothing to reserve, confirm
 * or release. Only when nothing of the object waits to be confirmed, the request is its settled
 * state again, and so is the old object it changes: by both accounts nothing changes. Not when a
 * change waits: a change back to the settled state (a resize down, then up again) is a state the
 * object may be in, which committing the change before it would otherwise charge the smaller size
 * for good; and even a repeat of a waiting change is a request of its own, which may be written
 * after the first was refused or timed out. Nor when the old object differs from the ledger's
 * record (a change that bypassed the webhook): the listing could otherwise measure the object again
 * below this change while it is being written (settle-listed.ts). The old object only ever makes
 * the ledger record more; what is charged is still measured over the ledger's own record.
 */
function changesNothing(command: Admit, now: SettledState, stored: StoredObject, asLive: boolean): boolean {
  const newest = stored.latest;
  if (newest === undefined || !isSettled(newest) || !sameState(now, stateOf(newest))) return false;
  const { oldObject } = command.request;
  if (!oldObject) return false;
  try {
    const evaluator = evaluatorFor(command.request.groupResource);
    const before = { usage: evaluator.usage(oldObject, { now: command.now, asLive, specFloor: true }), scopeFacts: evaluator.scopeFacts(oldObject) };
    return sameState(before, stateOf(newest));
  } catch (error) {
    if (error instanceof DomainError) return false;
    throw error;
  }
}

/**
 * The version of the stored object an UPDATE changes: a listing showing a later one shows whether
 * the change was written (settle-listed.ts). Taken only from the API server's review.
 */
function baseVersionOf(command: Admit): string | undefined {
  const { request } = command;
  return command.source === 'webhook' && request.operation === 'UPDATE' ? request.oldObject?.metadata?.resourceVersion : undefined;
}

/** The object's usage and scope facts as its kind's evaluator measures them; undefined when quota does not charge this request. */
function newState(request: AdmissionRequest, object: KubeObject, now: number, asLive = true): SettledState | undefined {
  if (isIgnoredResource(request.groupResource)) return undefined;
  const evaluator = evaluatorFor(request.groupResource);
  if (!evaluator.handles(request.operation, request.subresource, object, request.oldObject)) return undefined;
  return { usage: evaluator.usage(object, { now, asLive, specFloor: true }), scopeFacts: evaluator.scopeFacts(object) };
}

/** What the ledger holds for the request's object, and whether the request contradicts it. */
interface StoredObject {
  readonly settled?: Reservation;
  readonly latest?: Reservation;
  /** How many of its reservations are live. */
  readonly live: number;
  readonly conflict?: string;
}

function storedObjectOf(request: AdmissionRequest, live: readonly Reservation[]): StoredObject {
  if (live.length === 0) return { live: 0 };
  const other = live.find((r) => !isSameResource(r, request.groupResource));
  if (other) {
    return {
      live: live.length,
      conflict: `the uid ${other.object.uid} belongs to ${other.object.resource}${other.object.group ? `.${other.object.group}` : ''} "${other.object.name ?? ''}" in this ledger`,
    };
  }
  const settled = settledOf(live);
  const latest = live[live.length - 1];
  return { live: live.length, ...(settled ? { settled } : {}), ...(latest ? { latest } : {}) };
}

function groupResourceText(request: AdmissionRequest): string {
  const { group, resource } = request.groupResource;
  return group ? `${resource}.${group}` : resource;
}

/** `max(0, after - before)` per key of `after`: what an update adds while it is pending. */
function increase(after: ResourceList, before: ResourceList): ResourceList {
  return Resources.fromEntries(
    Object.entries(after).map(([name, q]) => {
      const was = Resources.get(before, name);
      const diff = was === undefined ? q : q.sub(was);
      return [name, diff.sign() > 0 ? diff : Quantity.fromNanos(0n, q.format)] as const;
    }),
  );
}

function objectRef(request: AdmissionRequest, object: KubeObject): Reserved['data']['object'] {
  const metadata = object.metadata ?? {};
  const name = metadata.name || request.name;
  return {
    group: request.groupResource.group,
    resource: request.groupResource.resource,
    ...(object.kind ? { kind: object.kind } : {}),
    ...(name ? { name } : {}),
    ...(metadata.uid ? { uid: metadata.uid } : {}),
  };
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
        assert(sharedElsewhere === undefined || elsewhere !== undefined, `the usage of ${quota.key} in other namespaces was read before deciding`);
        return { name: quota.key, shared: quota.ref, spec: quota.definition.spec, used: unknown ? Resources.EMPTY : elsewhere ? Resources.add(here, elsewhere) : here };
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
