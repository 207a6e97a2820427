import { assert, assertNever } from '../assert.js';
import * as Resources from '../resources/resource-list.js';
import type { ResourceList } from '../resources/resource-list.js';
import { quotaScopeRequirements } from '../scopes/facts.js';
import type { LedgerEvent, LedgerEventType, RecordedEvent } from './events.js';
import { applyReservationEvent } from './fold-reservations.js';
import { applyQueueEvent } from './queue-fold.js';
import { recountQuotaObjects, usedFor } from './quota-usage.js';
import { draftOf, initialState, type Draft, type NamespaceState, type QuotaState, type SharedQuotaState } from './state.js';

/**
 * The fold: a namespace's events in, its quotas, limit ranges, live reservations and usage
 * out. Admission, projections and as-of queries all use this one function, so "usage" has
 * exactly one definition: the sum, over live reservations whose scope facts match a quota,
 * of what each contributes, restricted to the quota's hard resources.
 */

export type {
  LimitRangeState,
  NamespaceObjectState,
  NamespaceState,
  QuotaState,
  Reservation,
  ReservationStatus,
  SharedQuotaState,
  Waiter,
} from './state.js';
export { compareWaiters, queueOrder } from './queue-fold.js';
export { initialState } from './state.js';
export { contributionTo, recomputeSharedUsed, recomputeUsed } from './quota-usage.js';

/** One event applied to a state, returning a new state. */
export function evolve(state: NamespaceState, event: RecordedEvent): NamespaceState {
  const draft = draftOf(state);
  apply(draft, event);
  return draft;
}

/**
 * Many events applied in order. `observe`, when given, sees the state after each event (the
 * working copy: read it then, don't keep it), so a reader that needs every version's state
 * does not pay a copy per event, as `evolve` would.
 */
export function fold(
  events: Iterable<RecordedEvent>,
  from: NamespaceState = initialState(),
  observe?: (state: NamespaceState, event: RecordedEvent) => void,
): NamespaceState {
  const draft = draftOf(from);
  for (const event of events) {
    apply(draft, event);
    observe?.(draft, event);
  }
  return draft;
}

/**
 * Which live reservations must be in the state for `evolve` to apply an event of this type:
 * all of them (a quota definition recounts usage over every one), the one it names
 * (`data.reservationId`), or none (usage totals are in the state already). Whoever folds from a
 * partial state (the command side, the projection, the usage series) asks this. A Record, so
 * that a new event type does not compile until it is classified.
 */
export type ReservationsNeeded = 'all' | 'named' | 'none';

const RESERVATIONS_NEEDED: Readonly<Record<LedgerEventType, ReservationsNeeded>> = {
  QuotaDefined: 'all',
  QuotaChanged: 'all',
  QuotaRemoved: 'none',
  LimitRangeDefined: 'none',
  LimitRangeChanged: 'none',
  LimitRangeRemoved: 'none',
  Reserved: 'none',
  Adopted: 'none',
  Committed: 'named',
  Released: 'named',
  Terminated: 'named',
  NamespaceDefined: 'none',
  NamespaceChanged: 'none',
  NamespaceRemoved: 'none',
  SharedQuotaApplied: 'all',
  SharedQuotaWithdrawn: 'none',
  CountAwaited: 'none',
  Counted: 'none',
  SharedQuotaDefined: 'none',
  SharedQuotaChanged: 'none',
  SharedQuotaRemoved: 'none',
  Queued: 'none',
  AdmittedFromQueue: 'none',
  Cancelled: 'none',
  Expired: 'none',
};

/** What folding an event of this type needs loaded; a type this build does not know needs everything. */
export function reservationsNeededBy(type: string): ReservationsNeeded {
  return Object.prototype.hasOwnProperty.call(RESERVATIONS_NEEDED, type) ? RESERVATIONS_NEEDED[type as LedgerEventType] : 'all';
}

/** The event types whose fold needs this much loaded. */
export function eventTypesNeeding(need: ReservationsNeeded): LedgerEventType[] {
  return (Object.keys(RESERVATIONS_NEEDED) as LedgerEventType[]).filter((type) => RESERVATIONS_NEEDED[type] === need);
}

const parse = (raw: Readonly<Record<string, string>> | undefined): ResourceList => Resources.resourceList(raw ?? {});

function apply(draft: Draft, event: RecordedEvent): void {
  assert(event.version === draft.version + 1, `stream versions must be gap-free: expected ${draft.version + 1}, got ${event.version}`);
  draft.version = event.version;
  draft.lastEventAt = event.at;
  // A stream that holds nothing but its Namespace object is not managed (see NamespaceState).
  if (event.version === 1 && (event.type === 'NamespaceDefined' || event.type === 'NamespaceChanged')) draft.objectOnly = true;
  else if (!NAMESPACE_OBJECT_EVENTS.has(event.type)) delete draft.objectOnly;
  applyData(draft, event, event.version, event.at);
}

const NAMESPACE_OBJECT_EVENTS: ReadonlySet<string> = new Set(['NamespaceDefined', 'NamespaceChanged', 'NamespaceRemoved']);

function applyData(draft: Draft, event: LedgerEvent, version: number, at: number): void {
  switch (event.type) {
    case 'QuotaDefined':
    case 'QuotaChanged':
      defineQuota(draft, event, version, at);
      return;
    case 'QuotaRemoved': {
      const { name } = event.data;
      assert(draft.quotas.delete(name), `quota ${name} removed but not defined`);
      draft.used.delete(name);
      recountQuotaObjects(draft);
      return;
    }
    case 'LimitRangeDefined':
    case 'LimitRangeChanged': {
      const { name } = event.data;
      const previous = draft.limitRanges.get(name);
      if (event.type === 'LimitRangeDefined') assert(!previous, `limit range ${name} defined twice`);
      else assert(previous, `limit range ${name} changed before it was defined`);
      draft.limitRanges.set(name, {
        name,
        definition: event.data,
        version,
        createdAt: previous?.createdAt ?? at,
        updatedAt: at,
      });
      return;
    }
    case 'LimitRangeRemoved': {
      const { name } = event.data;
      assert(draft.limitRanges.delete(name), `limit range ${name} removed but not defined`);
      return;
    }
    case 'Reserved':
    case 'Adopted':
    case 'Committed':
    case 'Released':
    case 'Terminated':
      applyReservationEvent(draft, event, version, at);
      return;
    case 'NamespaceDefined':
    case 'NamespaceChanged':
      defineNamespaceObject(draft, event, version, at);
      return;
    case 'NamespaceRemoved':
      assert(draft.object, `namespace ${event.data.name} removed but not defined`);
      delete draft.object;
      draft.objectRemovedAt = at;
      return;
    case 'SharedQuotaApplied':
      applySharedQuota(draft, event, version, at);
      return;
    case 'SharedQuotaWithdrawn': {
      const { key } = event.data;
      assert(draft.shared.delete(key), `shared quota ${key} withdrawn but not applied`);
      draft.sharedUsed.delete(key);
      return;
    }
    case 'CountAwaited':
      draft.awaitingCountSince = at;
      return;
    case 'Counted':
      delete draft.awaitingCountSince;
      return;
    // A shared quota's own stream: its definition lives in its head, not in a namespace's state.
    case 'SharedQuotaDefined':
    case 'SharedQuotaChanged':
    case 'SharedQuotaRemoved':
      return;
    case 'Queued':
    case 'AdmittedFromQueue':
    case 'Cancelled':
    case 'Expired':
      applyQueueEvent(draft, event, version, at);
      return;
    default:
      assertNever(event, 'ledger event');
  }
}

/** The Namespace object defined or changed (its labels and annotations). */
function defineNamespaceObject(
  draft: Draft,
  event: Extract<LedgerEvent, { readonly type: 'NamespaceDefined' | 'NamespaceChanged' }>,
  version: number,
  at: number,
): void {
  if (event.type === 'NamespaceDefined') assert(!draft.object, `namespace ${event.data.name} defined twice`);
  else assert(draft.object, `namespace ${event.data.name} changed before it was defined`);
  draft.object = { definition: event.data, version, createdAt: draft.object?.createdAt ?? at, updatedAt: at };
  delete draft.objectRemovedAt;
}

/** A quota defined or changed: its usage recounted over every live reservation. */
function defineQuota(
  draft: Draft,
  event: Extract<LedgerEvent, { readonly type: 'QuotaDefined' | 'QuotaChanged' }>,
  version: number,
  at: number,
): void {
  const { name } = event.data;
  const previous = draft.quotas.get(name);
  if (event.type === 'QuotaDefined') assert(!previous, `quota ${name} defined twice`);
  else assert(previous, `quota ${name} changed before it was defined`);
  const hard = parse(event.data.spec.hard);
  const quota: QuotaState = {
    name,
    definition: event.data,
    hard,
    hardNames: Object.keys(hard),
    requirements: quotaScopeRequirements(event.data.spec),
    version,
    createdAt: previous?.createdAt ?? at,
    updatedAt: at,
  };
  draft.quotas.set(name, quota);
  draft.used.set(name, usedFor(quota, draft.reservations.values(), draft.quotas.size));
  if (!previous) recountQuotaObjects(draft);
}

/** A shared quota newly covering the namespace, or changed: the namespace's contribution to it recounted. */
function applySharedQuota(
  draft: Draft,
  event: Extract<LedgerEvent, { readonly type: 'SharedQuotaApplied' }>,
  version: number,
  at: number,
): void {
  const { key, ref, spec } = event.data;
  const previous = draft.shared.get(key);
  const hard = parse(spec.hard);
  const quota: SharedQuotaState = {
    name: key,
    key,
    ref,
    definition: { name: key, spec },
    hard,
    hardNames: Object.keys(hard),
    requirements: quotaScopeRequirements(spec),
    version,
    createdAt: previous?.createdAt ?? at,
    updatedAt: at,
  };
  draft.shared.set(key, quota);
  draft.sharedUsed.set(key, usedFor(quota, draft.reservations.values()));
}
