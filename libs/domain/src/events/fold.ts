import { assert, assertNever } from '../assert.js';
import type { ScopedResourceSelectorRequirement } from '../kube/types.js';
import { Quantity } from '../quantity/quantity.js';
import * as Resources from '../resources/resource-list.js';
import type { ResourceList } from '../resources/resource-list.js';
import { factsMatchAll, quotaScopeRequirements, type ScopeFacts } from '../scopes/facts.js';
import type { NamespaceDefinition, SharedQuotaRef } from '../shared/shared-quota.js';
import type {
  LedgerEvent,
  LedgerEventType,
  LimitRangeDefinition,
  ObjectRef,
  QuotaDefinition,
  ReservationSource,
  RecordedEvent,
  ReleaseReason,
} from './events.js';

/**
 * The fold: a namespace's events in, its quotas, limit ranges, live reservations and usage
 * out. Admission, projections and as-of queries all use this one function, so "usage" has
 * exactly one definition: the sum, over live reservations whose scope facts match a quota,
 * of what each contributes, restricted to the quota's hard resources.
 */
export interface QuotaState {
  readonly name: string;
  readonly definition: QuotaDefinition;
  readonly hard: ResourceList;
  readonly hardNames: readonly string[];
  readonly requirements: readonly ScopedResourceSelectorRequirement[];
  /** The stream version of the event that last defined or changed it (its resourceVersion). */
  readonly version: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** A shared quota as one namespace it covers carries it: its spec, and (in `sharedUsed`) what the namespace contributes. */
export interface SharedQuotaState extends QuotaState {
  /** Its key (sharedQuotaKey): also its `name` and `definition.name`. */
  readonly key: string;
  readonly ref: SharedQuotaRef;
}

/** The Namespace object as the fold keeps it: its definition, and the stream version of its last change (its resourceVersion). */
export interface NamespaceObjectState {
  readonly definition: NamespaceDefinition;
  readonly version: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface LimitRangeState {
  readonly name: string;
  readonly definition: LimitRangeDefinition;
  readonly version: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export type ReservationStatus = 'reserved' | 'committed';

/** A live reservation (released ones leave the state; their history stays in the ledger). */
export interface Reservation {
  readonly id: string;
  readonly object: ObjectRef;
  readonly operation: 'CREATE' | 'UPDATE' | 'ADOPT';
  /** Reserved only: who made it (absent for reservations recorded before it was; see `originOf`). */
  readonly source?: ReservationSource;
  readonly status: ReservationStatus;
  /** What it counts toward usage now. */
  readonly contribution: ResourceList;
  /** UPDATE only: what it will count once committed. */
  readonly objectUsage?: ResourceList;
  readonly supersedes?: string;
  readonly scopeFacts: ScopeFacts;
  /** UPDATE only, while pending: the facts of the object's previous state. */
  readonly previousScopeFacts?: ScopeFacts;
  /** The stream version of its Reserved or Adopted event. */
  readonly version: number;
  readonly reservedAt: number;
  readonly committedAt?: number;
  readonly expiresAt?: number;
  /** When a Terminated event cut it down to its object count (the object is terminal but still exists). */
  readonly terminatedAt?: number;
}

export interface NamespaceState {
  /** The version of the last event folded (0 for an empty stream). */
  readonly version: number;
  readonly lastEventAt?: number;
  readonly quotas: ReadonlyMap<string, QuotaState>;
  readonly limitRanges: ReadonlyMap<string, LimitRangeState>;
  /** Live reservations by id, in the order they were made. */
  readonly reservations: ReadonlyMap<string, Reservation>;
  /** Live reservation ids by object uid. */
  readonly reservationsByUid: ReadonlyMap<string, string>;
  /** Per quota: every hard resource, with the usage it has now (zero when nothing counts). */
  readonly used: ReadonlyMap<string, ResourceList>;
  readonly releasedCount: number;
  /** The Namespace object, while one is defined (its labels select the namespace into shared quotas). */
  readonly object?: NamespaceObjectState;
  /**
   * When the Namespace object was last removed, while no new one is defined: the ledger knows the
   * namespace as deleted (NamespaceLifecycle refuses new content there), quotas or not.
   */
  readonly objectRemovedAt?: number;
  /** The shared quotas covering this namespace, by key. */
  readonly shared: ReadonlyMap<string, SharedQuotaState>;
  /** Per shared quota: what this namespace contributes to its usage (every hard resource, zero or not). */
  readonly sharedUsed: ReadonlyMap<string, ResourceList>;
  /**
   * Only the Namespace object was ever recorded here (no quota, limit range, shared quota or
   * reservation): the namespace is not managed, and admission there is not charged.
   */
  readonly objectOnly?: boolean;
  /**
   * Since when (epoch ms) the namespace awaits its first count (`CountAwaited`): its quotas'
   * usage is unknown until a listing started after then has adopted what exists.
   */
  readonly awaitingCountSince?: number;
}

export function initialState(): NamespaceState {
  return {
    version: 0,
    quotas: new Map(),
    limitRanges: new Map(),
    reservations: new Map(),
    reservationsByUid: new Map(),
    used: new Map(),
    releasedCount: 0,
    shared: new Map(),
    sharedUsed: new Map(),
  };
}

/** A mutable working copy; `evolve` and `fold` share it so both run the same code. */
interface Draft {
  version: number;
  lastEventAt?: number;
  quotas: Map<string, QuotaState>;
  limitRanges: Map<string, LimitRangeState>;
  reservations: Map<string, Reservation>;
  reservationsByUid: Map<string, string>;
  used: Map<string, ResourceList>;
  releasedCount: number;
  object?: NamespaceObjectState;
  objectRemovedAt?: number;
  shared: Map<string, SharedQuotaState>;
  sharedUsed: Map<string, ResourceList>;
  objectOnly?: boolean;
  awaitingCountSince?: number;
}

function draftOf(state: NamespaceState): Draft {
  return {
    version: state.version,
    ...(state.lastEventAt === undefined ? {} : { lastEventAt: state.lastEventAt }),
    quotas: new Map(state.quotas),
    limitRanges: new Map(state.limitRanges),
    reservations: new Map(state.reservations),
    reservationsByUid: new Map(state.reservationsByUid),
    used: new Map(state.used),
    releasedCount: state.releasedCount,
    ...(state.object ? { object: state.object } : {}),
    ...(state.objectRemovedAt === undefined ? {} : { objectRemovedAt: state.objectRemovedAt }),
    shared: new Map(state.shared),
    sharedUsed: new Map(state.sharedUsed),
    ...(state.objectOnly ? { objectOnly: true } : {}),
    ...(state.awaitingCountSince === undefined ? {} : { awaitingCountSince: state.awaitingCountSince }),
  };
}

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
export function fold(events: Iterable<RecordedEvent>, from: NamespaceState = initialState(), observe?: (state: NamespaceState, event: RecordedEvent) => void): NamespaceState {
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
};

/** What folding an event of this type needs loaded; a type this build does not know needs everything. */
export function reservationsNeededBy(type: string): ReservationsNeeded {
  return Object.prototype.hasOwnProperty.call(RESERVATIONS_NEEDED, type) ? RESERVATIONS_NEEDED[type as LedgerEventType] : 'all';
}

/** The event types whose fold needs this much loaded. */
export function eventTypesNeeding(need: ReservationsNeeded): LedgerEventType[] {
  return (Object.keys(RESERVATIONS_NEEDED) as LedgerEventType[]).filter((type) => RESERVATIONS_NEEDED[type] === need);
}

/** The usage of one quota computed from scratch; the fold's incremental `used` must equal it. */
export function recomputeUsed(state: NamespaceState, quotaName: string): ResourceList | undefined {
  const quota = state.quotas.get(quotaName);
  if (!quota) return undefined;
  return usedFor(quota, state.reservations.values(), state.quotas.size);
}

/** What the namespace contributes to a shared quota, computed from scratch; the fold's `sharedUsed` must equal it. */
export function recomputeSharedUsed(state: NamespaceState, key: string): ResourceList | undefined {
  const quota = state.shared.get(key);
  if (!quota) return undefined;
  return usedFor(quota, state.reservations.values());
}

/**
 * A quota's usage over these reservations. With `quotaCount` (a namespace's own quota), its
 * `count/resourcequotas` and `resourcequotas` are the number of quotas the namespace holds, as
 * Kubernetes counts ResourceQuota objects: here quotas are the ledger's definitions, not reserved
 * objects, so reservations (an adopted ResourceQuota of the cluster) do not count toward them.
 */
function usedFor(quota: QuotaState, reservations: Iterable<Reservation>, quotaCount?: number): ResourceList {
  const counted = quotaCount === undefined ? NO_NAMES : quotaCountNames(quota);
  const names = counted.length === 0 ? quota.hardNames : quota.hardNames.filter((name) => !counted.includes(name));
  let used = zeros(quota.hard);
  for (const reservation of reservations) {
    const amount = contributionTo(reservation, quota);
    if (amount) used = Resources.add(used, Resources.mask(amount, names));
  }
  if (counted.length > 0) used = Resources.add(used, Resources.fromEntries(counted.map((name) => [name, Quantity.fromInt(BigInt(quotaCount ?? 0))])));
  return used;
}

const NO_NAMES: readonly string[] = [];
/** Kubernetes' two names for the count of ResourceQuota objects. */
const QUOTA_COUNT_NAMES: readonly string[] = ['count/resourcequotas', 'resourcequotas'];

/**
 * The hard names of a namespace's quota that count the namespace's quotas: none for a scoped quota
 * (Kubernetes' object-count evaluator matches no scope). Cheap: it runs in the fold's hot loop.
 */
function quotaCountNames(quota: QuotaState): readonly string[] {
  if (quota.requirements.length > 0) return NO_NAMES;
  const has0 = Resources.has(quota.hard, 'count/resourcequotas');
  const has1 = Resources.has(quota.hard, 'resourcequotas');
  return has0 && has1 ? QUOTA_COUNT_NAMES : has0 ? ['count/resourcequotas'] : has1 ? ['resourcequotas'] : NO_NAMES;
}

/** After a quota is defined or removed: every quota counting the namespace's quotas shows the new number. */
function recountQuotaObjects(draft: Draft): void {
  for (const quota of draft.quotas.values()) {
    const counted = quotaCountNames(quota);
    if (counted.length === 0) continue;
    const current = draft.used.get(quota.name) ?? zeros(quota.hard);
    const next: Record<string, Quantity> = { ...current };
    for (const name of counted) next[name] = Quantity.fromInt(BigInt(draft.quotas.size));
    draft.used.set(quota.name, Object.freeze(next));
  }
}

/**
 * What a live reservation counts toward one quota, or undefined when its scopes do not
 * match. A pending update counts only its increase toward the quotas the object was already
 * in, and its whole new usage toward a quota it moves into (Kubernetes' UPDATE charge).
 */
export function contributionTo(reservation: Reservation, quota: QuotaState): ResourceList | undefined {
  if (!factsMatchAll(reservation.scopeFacts, quota.requirements)) return undefined;
  const previous = reservation.previousScopeFacts;
  if (reservation.status === 'reserved' && previous && reservation.objectUsage && !factsMatchAll(previous, quota.requirements)) {
    return reservation.objectUsage;
  }
  return reservation.contribution;
}

function zeros(hard: ResourceList): ResourceList {
  return Resources.fromEntries(Object.entries(hard).map(([name, q]) => [name, q.sub(q)]));
}

const parse = (raw: Readonly<Record<string, string>> | undefined): ResourceList =>
  Resources.resourceList(raw ?? {});

function apply(draft: Draft, event: RecordedEvent): void {
  assert(
    event.version === draft.version + 1,
    `stream versions must be gap-free: expected ${draft.version + 1}, got ${event.version}`,
  );
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
    case 'QuotaChanged': {
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
      return;
    }
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
    case 'Reserved': {
      const data = event.data;
      const expiresAt = data.expiresAt === undefined ? undefined : Date.parse(data.expiresAt);
      assert(expiresAt === undefined || !Number.isNaN(expiresAt), `reservation ${data.reservationId} has a bad expiresAt`);
      addReservation(draft, {
        id: data.reservationId,
        object: data.object,
        operation: data.operation,
        ...(data.source ? { source: data.source } : {}),
        status: 'reserved',
        contribution: parse(data.charged),
        ...(data.objectUsage ? { objectUsage: parse(data.objectUsage) } : {}),
        ...(data.supersedes ? { supersedes: data.supersedes } : {}),
        scopeFacts: data.scopeFacts,
        ...(data.previousScopeFacts ? { previousScopeFacts: data.previousScopeFacts } : {}),
        version,
        reservedAt: at,
        ...(expiresAt === undefined ? {} : { expiresAt }),
      });
      return;
    }
    case 'Adopted': {
      const data = event.data;
      addReservation(draft, {
        id: data.reservationId,
        object: data.object,
        operation: 'ADOPT',
        status: 'committed',
        contribution: parse(data.usage),
        scopeFacts: data.scopeFacts,
        version,
        reservedAt: at,
        committedAt: at,
      });
      return;
    }
    case 'Committed': {
      const { reservationId } = event.data;
      const reservation = draft.reservations.get(reservationId);
      assert(reservation, `reservation ${reservationId} committed but not live`);
      assert(reservation.status === 'reserved', `reservation ${reservationId} committed twice`);
      // A committed update counts the object's whole new usage; the reservation of its
      // previous state is released (superseded) by its own event.
      const { previousScopeFacts: _, ...rest } = reservation;
      const committed: Reservation = { ...rest, status: 'committed', contribution: reservation.objectUsage ?? reservation.contribution, committedAt: at };
      applyContribution(draft, reservation, -1);
      applyContribution(draft, committed, 1);
      draft.reservations.set(reservationId, committed);
      return;
    }
    case 'Released': {
      releaseReservation(draft, event.data.reservationId, event.data.reason);
      return;
    }
    case 'Terminated': {
      const { reservationId } = event.data;
      const reservation = draft.reservations.get(reservationId);
      assert(reservation, `reservation ${reservationId} terminated but not live`);
      assert(reservation.status === 'committed', `reservation ${reservationId} terminated before it was committed`);
      assert(reservation.terminatedAt === undefined, `reservation ${reservationId} terminated twice`);
      const remaining = parse(event.data.usage);
      // It releases a part of the charge: every key it keeps was charged, and no more of it.
      const unknown = Resources.resourceNames(remaining).filter((name) => !Resources.has(reservation.contribution, name));
      assert(unknown.length === 0 && Resources.lessThanOrEqual(remaining, reservation.contribution).ok, `reservation ${reservationId} terminated to more than it counted`);
      const terminated: Reservation = { ...reservation, contribution: remaining, terminatedAt: at };
      applyContribution(draft, reservation, -1);
      applyContribution(draft, terminated, 1);
      draft.reservations.set(reservationId, terminated);
      return;
    }
    case 'NamespaceDefined':
    case 'NamespaceChanged':
      if (event.type === 'NamespaceDefined') assert(!draft.object, `namespace ${event.data.name} defined twice`);
      else assert(draft.object, `namespace ${event.data.name} changed before it was defined`);
      draft.object = { definition: event.data, version, createdAt: draft.object?.createdAt ?? at, updatedAt: at };
      delete draft.objectRemovedAt;
      return;
    case 'NamespaceRemoved':
      assert(draft.object, `namespace ${event.data.name} removed but not defined`);
      delete draft.object;
      draft.objectRemovedAt = at;
      return;
    case 'SharedQuotaApplied': {
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
      return;
    }
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
    default:
      assertNever(event, 'ledger event');
  }
}

function addReservation(draft: Draft, reservation: Reservation): void {
  assert(!draft.reservations.has(reservation.id), `reservation ${reservation.id} recorded twice`);
  assert(
    Resources.negativeKeys(reservation.contribution).length === 0,
    `reservation ${reservation.id} charges a negative quantity`,
  );
  draft.reservations.set(reservation.id, reservation);
  if (reservation.object.uid) draft.reservationsByUid.set(reservation.object.uid, reservation.id);
  applyContribution(draft, reservation, 1);
}

function releaseReservation(draft: Draft, id: string, _reason: ReleaseReason): void {
  const reservation = draft.reservations.get(id);
  // Released reservations leave the state, so a second release finds nothing: a bug upstream.
  assert(reservation, `reservation ${id} released but not live (released twice?)`);
  draft.reservations.delete(id);
  const uid = reservation.object.uid;
  if (uid && draft.reservationsByUid.get(uid) === id) {
    draft.reservationsByUid.delete(uid);
    // An UPDATE that is released falls back to the reservation it would have superseded.
    if (reservation.supersedes && draft.reservations.has(reservation.supersedes)) {
      draft.reservationsByUid.set(uid, reservation.supersedes);
    }
  }
  draft.releasedCount++;
  applyContribution(draft, reservation, -1);
}

/**
 * Adds (sign 1) or removes (sign -1) what a reservation counts toward every quota, on the
 * quota's hard resources only. The hot loop of the fold: it touches only the keys involved.
 */
function applyContribution(draft: Draft, reservation: Reservation, sign: 1 | -1): void {
  applyTo(draft.quotas, draft.used, reservation, sign, true);
  if (draft.shared.size > 0) applyTo(draft.shared, draft.sharedUsed, reservation, sign, false);
}

function applyTo(quotas: ReadonlyMap<string, QuotaState>, usedByQuota: Map<string, ResourceList>, reservation: Reservation, sign: 1 | -1, ownQuotas: boolean): void {
  for (const quota of quotas.values()) {
    const amount = contributionTo(reservation, quota);
    if (!amount) continue;
    const current = usedByQuota.get(quota.name) ?? zeros(quota.hard);
    const counted = ownQuotas ? quotaCountNames(quota) : NO_NAMES;
    let next: Record<string, Quantity> | undefined;
    for (const name of quota.hardNames) {
      if (counted.length > 0 && counted.includes(name)) continue;
      const change = Resources.get(amount, name);
      if (change === undefined || change.isZero()) continue;
      next ??= { ...current };
      const before = next[name] as Quantity;
      const after = sign === 1 ? before.add(change) : before.sub(change);
      assert(after.sign() >= 0, `usage of quota ${quota.name} went negative on ${name}`);
      next[name] = after;
    }
    if (next) usedByQuota.set(quota.name, Object.freeze(next));
  }
}
