import { assert } from '../assert.js';
import type { LedgerEvent } from '../events/events.js';
import { isChargedKind } from '../kube/kinds.js';
import type { KubeObject } from '../kube/types.js';
import { admitLimitRanger } from '../limit-range/limit-ranger-plugin.js';
import type { JsonPatchOperation } from '../limit-range/json-patch.js';
import { checkQuota } from '../quota/resource-quota-plugin.js';
import * as Resources from '../resources/resource-list.js';
import {
  admissionViewOf,
  ALLOW_WITHOUT_CHARGE,
  clusterObjectMessage,
  objectConflict,
  quotaDenied,
  selectedRequest,
  uidMissing,
  type AdmissionDecision,
  type AdmissionView,
} from './admission-decision.js';
import { admittedUid, decidedAnswer, earlierAnswer } from './admission-answer.js';
import type { AdmissionAnswer, AdmitObject, AdmitResources, Decided } from './commands.js';
import { liveLoadedFor, type NamespaceFacts } from './facts.js';
import { namespaceStages } from './namespace-stages.js';
import { clusterReservationOf, newState, reservationFor, storedObjectOf, type ObjectCharge } from './object-reservation.js';
import { pluginEnabled } from './plugins.js';
import { decideBehindQueue, decideWait } from './reservation-queue.js';
import { decideResources } from './rest.js';
import { LIVE_PER_OBJECT_MAX, sameState, settledStateOf } from './stored.js';

/**
 * The admission decider, for an object or a resource list, read top to bottom as kube-apiserver
 * runs its plugins: the request key first (a repeat gets the first answer, a reused key a
 * conflict); the namespace's stages, NamespaceLifecycle and AlwaysDeny (namespace-stages.ts; an
 * unmanaged namespace is answered there); then, on what the ledger holds, LimitRanger's defaults
 * and validation and ResourceQuota on the defaulted object, so a platform team gets the answer
 * the API server would give; a resource list that may wait is queued where it does not fit, and
 * what fits is held back behind a blocking waiter short of what it asks for (reservation-queue.ts). Each plugin runs only when enabled (`command.plugins`).
 */
export function decideAdmit(command: AdmitObject | AdmitResources, facts: NamespaceFacts): Decided<AdmissionAnswer> {
  const earlier = earlierAnswer(command, facts);
  if (earlier) return { events: [], answer: earlier };
  const refused = namespaceStages(command, facts);
  if (refused) return refused;
  const decision = command.type === 'AdmitObject' ? admitObject(command, facts) : admitResources(command, facts);
  const waiting = command.type === 'AdmitResources' ? decideWait(command, facts, decision) : decideBehindQueue(command, facts, decision);
  if (waiting) return waiting;
  const reserved = decision.allowed && !decision.existing && !command.dryRun ? decision.reservation : undefined;
  const events: LedgerEvent[] = reserved ? [reserved] : [];
  return { events, answer: decidedAnswer(decision, command, facts) };
}

/**
 * An object's admission in a managed namespace: LimitRanger's defaults (mutation) and validation,
 * then ResourceQuota (`chargeObject`) on the defaulted object. Either plugin may be disabled.
 */
export function admitObject(whole: AdmitObject, facts: NamespaceFacts): AdmissionDecision {
  const uid = admittedUid(whole);
  // What the ledger holds for the object: an UPDATE or a repeated CREATE is charged against it.
  assert(uid === undefined || liveLoadedFor(facts, uid), `the live reservations of ${uid} were loaded before deciding`);
  // Decided on what admission reads of the kind (kube/fields-read.ts), as the webhook's edge reads it.
  const command: AdmitObject = { ...whole, request: selectedRequest(whole.request) };
  const { request } = command;
  // DELETE is always allowed: the charge is released when the object is gone.
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return ALLOW_WITHOUT_CHARGE;
  if (!request.object) return ALLOW_WITHOUT_CHARGE;
  const view = admissionViewOf(facts.state, uid, facts.sharedElsewhere);

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
  return chargeObject(command, facts, view, { object, patch });
}

/**
 * ResourceQuota on an object (after LimitRanger): charged against what the ledger holds for it
 * (stored.ts), never against the caller's oldObject; a request that contradicts that record is a
 * conflict, and a REST call may not change what the cluster admitted.
 */
function chargeObject(
  command: AdmitObject,
  facts: NamespaceFacts,
  view: AdmissionView,
  defaulted: { object: KubeObject; patch: readonly JsonPatchOperation[] },
): AdmissionDecision {
  const { request } = command;
  const { object, patch } = defaulted;
  const stored = storedObjectOf(request, view.stored ?? []);
  if (stored.conflict) return objectConflict(request, stored.conflict);
  const foreign = command.source === 'rest' ? clusterReservationOf(view.stored ?? []) : undefined;
  if (foreign) return { allowed: false, code: 403, stage: 'ResourceQuota', message: clusterObjectMessage(request, foreign) };
  // A CREATE of an object the ledger holds already: the same again is charged once; anything
  // else is a change and must say so (an UPDATE), or it would be charged the old size.
  if (request.operation === 'CREATE' && stored.settled) {
    const now = newState(request, object, facts.now);
    if (now && sameState(now, settledStateOf(stored.settled)))
      return { allowed: true, object, patch, charges: [], existing: stored.settled };
    return objectConflict(
      request,
      `the object (uid ${object.metadata?.uid}) is already admitted (reservation ${stored.settled.id}) with other usage; send an UPDATE to change it`,
    );
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
    now: facts.now,
    // A request's word that its object reached its end is not taken: only the cluster's listing says so.
    asLive,
    // Nor is a pod charged below its spec: a resize found Infeasible may be applied yet.
    specFloor: true,
    quotas: view.quotas,
    ...(command.limitedResources ? { limitedResources: command.limitedResources } : {}),
  });
  if (!quota.allowed) return quotaDenied(request, quota.denial);

  const charge: ObjectCharge = {
    request,
    reservationId: command.reservationId,
    now: facts.now,
    ...(command.ttlMs === undefined ? {} : { expiresAt: facts.now + command.ttlMs }),
    ...(command.source ? { source: command.source } : {}),
  };
  // The count webhook is sent every kind's CREATE: one outside CHARGED_KINDS is reserved only where
  // a quota counts it, else the ledger would hold reservations of kinds the reconciler may not even
  // list (RBAC), each released as uncovered; those it lists it adopts, so a quota counting them later counts them.
  if (quota.charges.length === 0 && !isChargedKind(request.groupResource)) return { allowed: true, object, patch, charges: [] };
  const reservation = reservationFor(charge, object, stored, asLive);
  // A webhook's reservation is confirmed or released by the object's uid alone (it has no TTL).
  if (reservation && command.source === 'webhook' && reservation.data.object.uid === undefined) return uidMissing(request);
  // One more change of an object with as many waiting as it may have: refused, not reserved.
  if (reservation?.data.operation === 'UPDATE' && stored.live >= LIVE_PER_OBJECT_MAX) {
    return objectConflict(
      request,
      `${stored.live} changes of the object (uid ${reservation.data.object.uid}) are waiting to be confirmed; retry once they are committed or released`,
    );
  }
  return { allowed: true, object, patch, charges: quota.charges, ...(reservation ? { reservation } : {}) };
}

/** A resource list's admission (REST): charged as given to the unscoped quotas (rest.ts). */
function admitResources(command: AdmitResources, facts: NamespaceFacts): AdmissionDecision {
  // ResourceQuota disabled: nothing checked, nothing charged, nothing reserved (as for an object).
  if (!pluginEnabled(command.plugins, 'ResourceQuota')) return { allowed: true, patch: [], charges: [] };
  const expiresAt = command.ttlMs === undefined ? undefined : facts.now + command.ttlMs;
  return decideResources(
    {
      namespace: facts.namespace,
      groupResource: command.groupResource,
      ...(command.name ? { name: command.name } : {}),
      ...(command.kind ? { kind: command.kind } : {}),
      resources: Resources.resourceList(command.resources),
      reservationId: command.reservationId,
      now: facts.now,
      ...(expiresAt === undefined ? {} : { expiresAt }),
    },
    admissionViewOf(facts.state, undefined, facts.sharedElsewhere),
  );
}
