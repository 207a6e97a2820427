import { DomainError } from '../errors.js';
import type { ReservationSource, Reserved } from '../events/events.js';
import type { Reservation } from '../events/fold.js';
import type { KubeObject } from '../kube/types.js';
import { Quantity } from '../quantity/quantity.js';
import * as Resources from '../resources/resource-list.js';
import type { ResourceList } from '../resources/resource-list.js';
import { evaluatorFor, isIgnoredResource } from '../usage/registry.js';
import type { AdmissionRequest } from './admission-decision.js';
import { isSameResource, isSettled, originOf, sameState, settledOf, settledStateOf, stateOf, type SettledState } from './stored.js';

/**
 * An admitted object's reservation: what the ledger already holds for the object (by its uid),
 * and the Reserved event an admission appends for it, charged over that (stored.ts says why).
 */

/** What an object's reservation is made of: the request (as admission reads it), its id, its time, who asks. */
export interface ObjectCharge {
  readonly request: AdmissionRequest;
  /** The id a new reservation gets (ids come from outside: the domain has no randomness). */
  readonly reservationId: string;
  /** The decision time, epoch milliseconds. */
  readonly now: number;
  /** A REST reservation's expiry, epoch milliseconds. */
  readonly expiresAt?: number;
  /** Who asks: the kube-apiserver's review or a REST call (recorded on the reservation). */
  readonly source?: ReservationSource;
}

/** A live reservation of the object that the cluster made (its webhook or its listing): a REST call may not change it. */
export function clusterReservationOf(live: readonly Reservation[]): Reservation | undefined {
  return live.find((reservation) => originOf(reservation) !== 'rest');
}

/**
 * The Reserved event for an admitted request, or undefined when the kind's evaluator does
 * not charge this operation. The reservation records the object's whole usage (not only
 * what today's quotas limit), so a quota created later counts it, as the quota controller
 * would count the existing object.
 */
export function reservationFor(command: ObjectCharge, object: KubeObject, stored: StoredObject, asLive: boolean): Reserved | undefined {
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
function changesNothing(command: ObjectCharge, now: SettledState, stored: StoredObject, asLive: boolean): boolean {
  const newest = stored.latest;
  if (newest === undefined || !isSettled(newest) || !sameState(now, stateOf(newest))) return false;
  const { oldObject } = command.request;
  if (!oldObject) return false;
  try {
    const evaluator = evaluatorFor(command.request.groupResource);
    const before = {
      usage: evaluator.usage(oldObject, { now: command.now, asLive, specFloor: true }),
      scopeFacts: evaluator.scopeFacts(oldObject),
    };
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
function baseVersionOf(command: ObjectCharge): string | undefined {
  const { request } = command;
  return command.source === 'webhook' && request.operation === 'UPDATE' ? request.oldObject?.metadata?.resourceVersion : undefined;
}

/** The object's usage and scope facts as its kind's evaluator measures them; undefined when quota does not charge this request. */
export function newState(request: AdmissionRequest, object: KubeObject, now: number, asLive = true): SettledState | undefined {
  if (isIgnoredResource(request.groupResource)) return undefined;
  const evaluator = evaluatorFor(request.groupResource);
  if (!evaluator.handles(request.operation, request.subresource, object, request.oldObject)) return undefined;
  return { usage: evaluator.usage(object, { now, asLive, specFloor: true }), scopeFacts: evaluator.scopeFacts(object) };
}

/** What the ledger holds for the request's object, and whether the request contradicts it. */
export interface StoredObject {
  readonly settled?: Reservation;
  readonly latest?: Reservation;
  /** How many of its reservations are live. */
  readonly live: number;
  readonly conflict?: string;
}

export function storedObjectOf(request: AdmissionRequest, live: readonly Reservation[]): StoredObject {
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
