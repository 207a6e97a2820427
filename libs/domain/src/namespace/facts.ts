import type { ObjectRef, ReleaseReason } from '../events/events.js';
import type { ReservationOrigin } from './stored.js';
import { initialState, type NamespaceState } from '../events/fold.js';
import type { AdmissionResult } from './answers.js';
import type { ResourceList } from '../resources/resource-list.js';
import type { QueuePolicy } from '../queue/policy.js';

/**
 * What the namespace decider decides on: the namespace's folded state as far as it has been
 * read, and the facts looked up by key beside it. The command side reads these by key (never
 * by scanning history), asking `needsOf` what a command still lacks, and hands them to
 * `decide`; a fact that was not looked up is absent from its map, one looked up and not found
 * is `null`.
 */
export interface NamespaceFacts {
  /** The namespace's name (its stream). */
  readonly namespace: string;
  /** The namespace has a stream: a quota or limit range was defined here, ever. */
  readonly known: boolean;
  /** The decision's time (the transaction's clock), epoch milliseconds. */
  readonly now: number;
  /** Quotas with their usage, limit ranges, and the live reservations loaded so far. */
  readonly state: NamespaceState;
  /** Object uids whose live reservations are all in `state`, or 'all' when every live one is. */
  readonly liveLoaded: ReadonlySet<string> | 'all';
  /** Reservations looked up by id, released ones included. */
  readonly reservations: Lookup<string, RecordedReservation | null>;
  /** Earlier answers looked up by request key. */
  readonly answers: Lookup<string, StoredAnswer | null>;
  /**
   * Per shared quota covering the namespace (by key): its usage in every other namespace it
   * covers, as its head holds it in this transaction. Absent in tests that have no other namespace.
   */
  readonly sharedElsewhere?: ReadonlyMap<string, ResourceList>;
  /** The queue's policy; absent: DEFAULT_QUEUE_POLICY. */
  readonly queuePolicy?: QueuePolicy;
  /** Reconcile: of the uids asked about, those whose reservation was released at or after `since`. */
  readonly releasedSince?: { readonly since: number; readonly uids: ReadonlySet<string> };
}

/** What the decider asks of a keyed fact: a ReadonlyMap is one, so is a view over a unit of work's rows. */
export interface Lookup<K, V> {
  get(key: K): V | undefined;
  has(key: K): boolean;
}

/** A reservation as the ledger recorded it, live or released. */
export interface RecordedReservation {
  readonly id: string;
  readonly object: ObjectRef;
  /** Who made it, and so who may settle it (`originOf`). */
  readonly origin: ReservationOrigin;
  readonly status: 'reserved' | 'committed' | 'released';
  readonly expiresAt?: number;
  readonly releasedAt?: number;
  readonly releaseReason?: ReleaseReason;
}

/** An answer the namespace gave earlier to a request key. */
export interface StoredAnswer {
  readonly result: AdmissionResult;
  /** What the key was used for (a digest of the request); undefined for answers stored before digests were kept. */
  readonly digest: string | undefined;
}

/** The facts of a namespace nothing has been read of yet (tests and the specs start here). */
export function emptyFacts(
  namespace: string,
  now: number,
  state: NamespaceState = initialState(),
  known = state.version > 0,
): NamespaceFacts {
  return { namespace, known, now, state, liveLoaded: 'all', reservations: new Map(), answers: new Map() };
}

/** Whether every live reservation of this object is in the state. */
export function liveLoadedFor(facts: NamespaceFacts, uid: string): boolean {
  return facts.liveLoaded === 'all' || facts.liveLoaded.has(uid);
}
