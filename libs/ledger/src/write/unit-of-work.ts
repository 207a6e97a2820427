import {
  assert,
  decide,
  evolve,
  needsOf,
  reservationsNeededBy,
  type AnswerOf,
  type LedgerEvent,
  type NamespaceCommand,
  type NamespaceFacts,
  type NamespaceState,
  type Needs,
  type QueuePolicy,
  type RecordedEvent,
  type Reservation,
  type ResourceList,
} from '@quota/domain';
import type pg from 'pg';
import type { DecisionInput, FlushPlan } from './flush-statement.js';
import { EMPTY_HEAD, headOf, reservationFromJson, reservationToJson, stateOf, type HeadJson } from '../head.js';
import type { AdmissionResult } from '../ledger.types.js';
import { allLiveRead, keyedRead, releasedSinceRead, type KeyedRead, type ReadRow } from './read-statement.js';
import { recordFromJson, recordOf, type PendingEvent, type ReservationRecord, type ReservationRow } from '../rows.js';
import type { SharedHeads } from '../shared-heads.js';

/**
 * One namespace's part of a group commit, inside the group's SERIALIZABLE transaction: the
 * head and what the commands need read by key (read-statement.ts), the decider's facts built
 * from them, every write buffered as events are appended (each applied to the domain's
 * `evolve`, so the head written is exactly the fold of the stream), and handed to the group's
 * one write statement at the end (`plan`, flush-statement.ts). The namespace's commands run
 * one after the other on the evolving state, in arrival order; one that fails is rolled back
 * to its mark without touching the others.
 */

/** An earlier answer found by its request key, with its id in the decisions log. */
export interface StoredDecision {
  readonly id: string | undefined;
  readonly result: AdmissionResult;
  readonly digest: string | undefined;
}

/** Filled with the decision's id once the batch is written. */
export interface DecisionHandle {
  id?: string;
}

export interface EventMeta {
  readonly actor: string;
  readonly onBehalfOf?: string;
  readonly requestId?: string;
}

export interface Mark {
  readonly state: NamespaceState;
  readonly events: number;
  readonly decisions: number;
  readonly steps: number;
  readonly touched: Map<string, ReservationRecord>;
  readonly exists: boolean;
}

/**
 * What one command did on a unit of work, as plain data: the decider's answer, the state it was
 * decided on and the state its events left. Its handler reads it once the transaction has
 * committed; by then the batch is written, so `position` and the decision's id are filled in.
 */
export interface Step<A> {
  readonly answer: A;
  readonly before: NamespaceState;
  readonly after: NamespaceState;
  readonly events: readonly LedgerEvent[];
  /** The namespace has a stream once the command is decided (it had one, or the command appended). */
  readonly known: boolean;
  /** The global position of its last event, once the batch is written; undefined when it appended none. */
  position?: string;
  /** The decisions-log entry it answers with: recorded in this batch, or stored earlier (its id once written). */
  decision?: DecisionHandle;
  /** A reservation as the command left it (a commit's or release's), when its handler asked for it. */
  reservation?: ReservationRecord;
}

/**
 * What a command's handler keeps of it beside its answer, as data the unit of work applies once
 * the command is decided (no handler reaches into the open transaction): the reservation as the
 * command leaves it (what a commit's or release's answer shows), and an admission's entry in the
 * decisions log — the row logged with the result decided now (none: unlogged), or for a repeat
 * the entry stored under its request key.
 */
export interface Keep {
  readonly reservation?: string;
  readonly decision?: { readonly requestKey?: string; readonly row?: Omit<DecisionInput, 'result'> };
}

/** A command needs its facts read in at most this many rounds (a commit: the reservation, then its object's). */
const NEEDS_ROUNDS_MAX = 4;

export class NamespaceUnitOfWork {
  private state: NamespaceState;
  private exists: boolean;
  private readonly baseVersion: number;
  private readonly headExisted: boolean;
  private allLoaded = false;
  /** Rows read from the database, by reservation id (null: looked up, none). */
  private readonly rows = new Map<string, ReservationRecord | null>();
  private readonly uidsLoaded = new Set<string>();
  /** Rows this batch changes, as they will be written. */
  private touched = new Map<string, ReservationRecord>();
  private readonly events: PendingEvent[] = [];
  private readonly decisions: { input: DecisionInput; handle: DecisionHandle }[] = [];
  /** The commands decided here, in order: their positions are filled in once the batch is written. */
  private readonly steps: Step<unknown>[] = [];
  private readonly answers = new Map<string, StoredDecision | null>();
  private releasedSince: { since: number; uids: Set<string> } | undefined;
  /** The positions the events got, in version order (set by `settle`). */
  private positions: readonly string[] = [];
  /** A waiter admitted from the queue in this batch: the versions of its Queued and AdmittedFromQueue events, for its reservation's history. */
  private readonly dequeued = new Map<string, readonly number[]>();

  private constructor(
    private readonly client: pg.ClientBase,
    readonly namespace: string,
    readonly now: number,
    head: { version: number; state: HeadJson } | undefined,
    /** The heads of the shared quotas covering the namespace, read and locked in this transaction. */
    private readonly shared: SharedHeads | undefined,
    private readonly queuePolicy: QueuePolicy | undefined,
  ) {
    this.baseVersion = head?.version ?? 0;
    this.headExisted = head !== undefined;
    this.exists = this.headExisted;
    this.state = stateOf(this.baseVersion, head?.state ?? EMPTY_HEAD);
  }

  /**
   * Begins a namespace's part of a group inside the group's SERIALIZABLE transaction, from its
   * head as the transaction read it (and locked) and the keyed facts read at that head's
   * version (see GroupCommitter for why those may have been read before the transaction).
   */
  static begin(
    client: pg.ClientBase,
    namespace: string,
    now: number,
    head: { version: number; state: HeadJson } | undefined,
    read: KeyedRead,
    facts: ReadRow,
    shared?: SharedHeads,
    queuePolicy?: QueuePolicy,
  ): NamespaceUnitOfWork {
    const work = new NamespaceUnitOfWork(client, namespace, now, head, shared, queuePolicy);
    work.take(read, facts);
    return work;
  }

  /** What the decider decides on, as far as it has been read. */
  get facts(): NamespaceFacts {
    return {
      namespace: this.namespace,
      known: this.exists,
      now: this.now,
      state: this.state,
      liveLoaded: this.allLoaded ? 'all' : this.uidsLoaded,
      reservations: { get: (id) => this.record(id), has: (id) => this.touched.has(id) || this.rows.has(id) },
      answers: this.answers,
      ...(this.releasedSince ? { releasedSince: this.releasedSince } : {}),
      ...(this.state.shared.size > 0 ? { sharedElsewhere: this.sharedElsewhere() } : {}),
      ...(this.queuePolicy ? { queuePolicy: this.queuePolicy } : {}),
    };
  }

  /** Per shared quota covering the namespace: its usage in the other namespaces it covers. */
  private sharedElsewhere(): Map<string, ResourceList> {
    const shared = this.shared;
    assert(shared, `namespace ${this.namespace} is covered by shared quotas, whose heads were not read`);
    // Only the heads read in this transaction: admission reads every one (admissionViewOf checks).
    return new Map(
      [...this.state.shared.keys()].filter((key) => shared.has(key)).map((key) => [key, shared.elsewhere(key, this.namespace)]),
    );
  }

  /** Keeps the shared heads' copy of this namespace's contributions equal to its state. */
  private syncShared(before: NamespaceState): void {
    if (before.shared.size === 0 && this.state.shared.size === 0) return;
    const shared = this.shared;
    assert(shared, `namespace ${this.namespace} is covered by shared quotas, whose heads were not read`);
    for (const key of before.shared.keys()) if (!this.state.shared.has(key)) shared.setMember(key, this.namespace, undefined);
    for (const key of this.state.shared.keys()) {
      // The fold replaces a contribution only when it changes: the others need not have been read.
      const used = this.state.sharedUsed.get(key);
      if (used !== before.sharedUsed.get(key) || !before.shared.has(key)) shared.setMember(key, this.namespace, used);
    }
  }

  get current(): NamespaceState {
    return this.state;
  }

  /** The batch appends events (the head moves when it commits). */
  get appends(): boolean {
    return this.events.length > 0;
  }

  /** A reservation's record as this batch leaves it: written here, else as read; null when it never existed. */
  record(id: string): ReservationRecord | null | undefined {
    return this.touched.get(id) ?? this.rows.get(id);
  }

  /**
   * One command, as emmett's handleCommand has it: read by key what it needs (needsOf, until
   * nothing is missing), decide with the domain's decider, append what was decided.
   */
  async decide<C extends NamespaceCommand>(command: C, meta: EventMeta, keep?: Keep): Promise<Step<AnswerOf[C['type']]>> {
    for (let round = 1, needs = needsOf(command, this.facts); needs; needs = needsOf(command, this.facts), round++) {
      assert(round <= NEEDS_ROUNDS_MAX, `${command.type} still needs facts after ${NEEDS_ROUNDS_MAX} reads`);
      await this.load(needs);
    }
    const before = this.state;
    const { events, answer } = decide(command, this.facts);
    this.append(events, meta);
    const step: Step<AnswerOf[C['type']]> = { answer, before, after: this.state, events, known: this.exists };
    this.steps.push(step);
    if (keep) this.keep(step, keep);
    return step;
  }

  /** Applies what the handler keeps of a decided command (Keep). */
  private keep(step: Step<unknown>, keep: Keep): void {
    if (keep.reservation !== undefined) {
      const record = this.record(keep.reservation);
      if (record) step.reservation = record;
    }
    const answer = step.answer as { readonly kind: string; readonly result?: AdmissionResult };
    if (answer.kind === 'Repeated' && keep.decision) step.decision = this.decisionFor(keep.decision.requestKey ?? '');
    else if (answer.kind === 'Decided' && keep.decision?.row && answer.result)
      step.decision = this.recordDecision({ ...keep.decision.row, result: answer.result });
  }

  /** Reads what a command still needs (needsOf), by key. */
  async load(needs: Needs): Promise<void> {
    const keyed = { requestKeys: needs.requestKeys, reservationIds: needs.reservationIds, uids: needs.uids };
    if (keyed.requestKeys.length + keyed.reservationIds.length + keyed.uids.length > 0) {
      const { rows } = await this.client.query<ReadRow>(keyedRead([{ namespace: this.namespace, read: keyed }]));
      const row = rows[0];
      assert(row, 'the read returns one row');
      this.take(keyed, row);
    }
    if (needs.allLive && !this.allLoaded) {
      this.addRows((await this.client.query<ReservationRow>(allLiveRead(this.namespace))).rows);
      this.allLoaded = true;
    }
    if (needs.releasedSince) await this.loadReleasedSince(needs.releasedSince.uids, needs.releasedSince.since);
  }

  private take(read: KeyedRead, row: ReadRow): void {
    for (const key of read.requestKeys) if (!this.answers.has(key)) this.answers.set(key, null);
    for (const d of row.decisions ?? []) {
      if (!this.answers.get(d.request_key)) this.answers.set(d.request_key, { id: d.id, result: d.result, digest: d.digest ?? undefined });
    }
    for (const id of read.reservationIds) if (!this.rows.has(id)) this.rows.set(id, null);
    this.addRows(row.reservations ?? []);
    for (const uid of read.uids) this.uidsLoaded.add(uid);
    for (const id of read.reservationIds) {
      const uid = this.rows.get(id)?.object.uid;
      if (uid !== undefined) this.uidsLoaded.add(uid);
    }
  }

  private addRows(raw: readonly ReservationRow[]): void {
    const live: Reservation[] = [];
    for (const r of raw) {
      if (this.rows.get(r.reservation_id) || this.touched.has(r.reservation_id)) continue;
      const record = recordOf(r);
      this.rows.set(r.reservation_id, record);
      if (record.status !== 'released') live.push(reservationFromJson(record.json));
    }
    if (live.length === 0) return;
    this.state = { ...this.state, ...withLive([...this.state.reservations.values(), ...live]) };
  }

  /** Of these uids, those released at or after `since`, in an earlier transaction or earlier in this batch. */
  private async loadReleasedSince(uids: readonly string[], since: number): Promise<void> {
    const found = new Set<string>();
    for (const record of this.touched.values()) {
      const uid = record.object.uid;
      if (uid !== undefined && record.status === 'released' && (record.releasedAt ?? 0) >= since && uids.includes(uid)) found.add(uid);
    }
    if (uids.length > 0) {
      const { rows } = await this.client.query<{ object_uid: string }>(releasedSinceRead(this.namespace, uids, since));
      for (const row of rows) found.add(row.object_uid);
    }
    this.releasedSince = { since, uids: found };
  }

  mark(): Mark {
    return {
      state: this.state,
      events: this.events.length,
      decisions: this.decisions.length,
      steps: this.steps.length,
      touched: new Map(this.touched),
      exists: this.exists,
    };
  }

  restore(mark: Mark): void {
    const before = this.state;
    this.state = mark.state;
    this.syncShared(before);
    this.events.length = mark.events;
    this.steps.length = mark.steps;
    for (const { input } of this.decisions.splice(mark.decisions)) {
      if (input.requestKey !== undefined) this.answers.set(input.requestKey, null);
    }
    this.touched = mark.touched;
    this.exists = mark.exists;
  }

  /** Whether this unit of work appended an event of this type. */
  appended(type: LedgerEvent['type']): boolean {
    return this.events.some((event) => event.type === type);
  }

  /** Appends events to the stream (buffered), applying each to the state. */
  append(events: readonly LedgerEvent[], meta: EventMeta): void {
    const start = this.state;
    for (const event of events) {
      // Folding from a partial state is exact only with what the event needs loaded.
      assert(reservationsNeededBy(event.type) !== 'all' || this.allLoaded, `${event.type} needs every live reservation loaded first`);
      const before = this.state;
      const version = before.version + 1;
      const record = { ...event, version, at: this.now } as RecordedEvent;
      this.state = evolve(before, record);
      this.events.push({
        version,
        type: event.type,
        data: event.data,
        request_id: meta.requestId ?? null,
        actor: meta.actor,
        on_behalf_of: meta.onBehalfOf ?? null,
        at: this.now,
      });
      this.track(before, record, meta);
      // A release here changes which objects were released since a listing: ask again.
      if (event.type === 'Released') this.releasedSince = undefined;
    }
    if (events.length > 0) {
      this.exists = true;
      this.syncShared(start);
    }
  }

  /** Keeps the reservation rows in step with the events: each is written as the batch leaves it. */
  private track(before: NamespaceState, event: RecordedEvent, meta: EventMeta): void {
    switch (event.type) {
      case 'AdmittedFromQueue': {
        const waiter = before.queue.get(event.data.reservationId);
        assert(waiter, `reservation ${event.data.reservationId} was queued before its admission`);
        this.dequeued.set(waiter.id, [waiter.version, event.version]);
        return;
      }
      case 'Reserved':
      case 'Adopted': {
        const live = this.state.reservations.get(event.data.reservationId);
        assert(live, `reservation ${event.data.reservationId} is live after ${event.type}`);
        // Admitted from the queue: its history starts at its Queued event; the freeing command's request id is not its own.
        const queued = this.dequeued.get(live.id);
        const rest = queued
          ? { eventVersions: [...queued, event.version] }
          : { eventVersions: [event.version], ...(meta.requestId === undefined ? {} : { requestId: meta.requestId }) };
        this.touched.set(live.id, recordFromJson(reservationToJson(live), live.status, rest));
        return;
      }
      case 'Committed':
      case 'Terminated':
      case 'Released': {
        const id = event.data.reservationId;
        const previous = this.record(id);
        const live = event.type === 'Released' ? before.reservations.get(id) : this.state.reservations.get(id);
        assert(previous && live, `reservation ${id} was loaded before its ${event.type}`);
        const eventVersions = [...previous.eventVersions, event.version];
        const rest = { eventVersions, ...(previous.requestId === undefined ? {} : { requestId: previous.requestId }) };
        this.touched.set(
          id,
          event.type === 'Released'
            ? recordFromJson(reservationToJson(live), 'released', { ...rest, releasedAt: this.now, releaseReason: event.data.reason })
            : recordFromJson(reservationToJson(live), 'committed', rest),
        );
        return;
      }
      default:
        return;
    }
  }

  /** Records an answer in the decisions log (written with the batch). */
  recordDecision(input: DecisionInput): DecisionHandle {
    const handle: DecisionHandle = {};
    this.decisions.push({ input, handle });
    if (input.requestKey !== undefined)
      this.answers.set(input.requestKey, { id: undefined, result: input.result, digest: input.requestDigest });
    return handle;
  }

  /** The decision stored for a request key: read earlier, or recorded in this batch (its id known once it is written). */
  decisionFor(requestKey: string): DecisionHandle {
    const stored = this.answers.get(requestKey)?.id;
    return stored !== undefined ? { id: stored } : (this.decisions.find((d) => d.input.requestKey === requestKey)?.handle ?? {});
  }

  /** What this namespace writes in the group's statement (flush-statement.ts), or undefined when nothing. */
  plan(): FlushPlan | undefined {
    if (this.events.length === 0 && this.decisions.length === 0) return undefined;
    return {
      namespace: this.namespace,
      base: { version: this.baseVersion, existed: this.headExisted },
      head: { version: this.state.version, state: headOf(this.state) },
      events: this.events,
      created: [...this.touched.values()].filter((r) => !this.rows.get(r.id)),
      changed: [...this.touched.values()].filter((r) => this.rows.get(r.id)),
      decisions: this.decisions.map((d) => d.input),
    };
  }

  /** Once the group is written: the ids its decisions got, in the order `plan` listed them, and the positions its events got, in version order. */
  settle(ids: readonly string[], positions: readonly string[]): void {
    assert(ids.length === this.decisions.length, 'every decision got an id');
    assert(positions.length === this.events.length, 'every event got a position');
    this.decisions.forEach((d, i) => (d.handle.id = ids[i]));
    this.positions = positions;
    for (const step of this.steps) if (step.after.version > step.before.version) step.position = this.positionAt(step.after.version);
  }

  /** The global position of this batch's event at `version`, once the batch is written (undefined before, or for a version it did not append). */
  positionAt(version: number): string | undefined {
    return this.positions[version - this.baseVersion - 1];
  }
}

/** The live-reservation maps of a state holding exactly these reservations. */
function withLive(reservations: readonly Reservation[]): Pick<NamespaceState, 'reservations' | 'reservationsByUid'> {
  const live = new Map<string, Reservation>();
  const byUid = new Map<string, string>();
  for (const r of [...reservations].sort((a, b) => a.version - b.version)) {
    live.set(r.id, r);
    if (r.object.uid !== undefined) byUid.set(r.object.uid, r.id);
  }
  return { reservations: live, reservationsByUid: byUid };
}
