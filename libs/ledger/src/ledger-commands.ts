import { randomUUID } from 'node:crypto';
import {
  assert,
  decide,
  groupResourceString,
  initialState,
  needsOf,
  type AdmissionPlugin,
  type AnswerOf,
  type LimitRangeDefinition,
  type LedgerEvent,
  type LimitedResource,
  type NamespaceCommand,
  type NamespaceFacts,
  type NamespaceState,
  type QuotaDefinition,
  type Refusal,
  type ReleaseReason,
} from '@quota/domain';
import type { DataSource } from 'typeorm';
import { AppendNotifier } from './append-notifier.js';
import { GroupCommitter, type BatchStats } from './group-commit.js';
import { LedgerClock } from './ledger-clock.js';
import { LedgerError } from './ledger-error.js';
import type {
  AdmissionResult,
  AdmitCommand,
  AdmitOutcome,
  CommitOutcome,
  LedgerOptions,
  LimitRangeView,
  PutOptions,
  PutResult,
  QuotaView,
  ReconcileListing,
  ReconcileOutcome,
  ReleaseOutcome,
  RemoveResult,
  WriteOptions,
} from './ledger.types.js';
import { pointing, removed, type EventRef } from './event-position.js';
import type { ReservationRecord } from './rows.js';
import { LEDGER_EVENTS_CHANNEL } from './projection.js';
import { requestDigest } from './request-digest.js';
import type { EventMeta, NamespaceUnitOfWork } from './unit-of-work.js';
import { limitRangeViewOfState, quotaViewOfState, reservationViewOf } from './views.js';

const DEFAULTS = {
  batchSizeMax: 64,
  groupCommandsMax: 256,
  groupBytesMax: 1024 * 1024,
  groupsInFlightMax: 2,
  quotasPerNamespaceMax: 16,
  limitRangesPerNamespaceMax: 16,
  /** The projection worker hears of appends this long after them at most (it also polls). */
  notifyIntervalMs: 20,
  retryMax: 12,
  retryBaseMs: 2,
  retryMaxDelayMs: 100,
  headWaitMaxMs: 5_000,
  queueMax: 10_000,
};

/** A command needs its facts read in at most this many rounds (a commit: the reservation, then its object's). */
const NEEDS_ROUNDS_MAX = 4;

/**
 * Turns an answer into what the caller gets, once the transaction has committed; `written`
 * then gives the position of the command's last event (undefined when it appended none).
 */
type Finish<C extends NamespaceCommand, R> = (answer: AnswerOf[C['type']], work: NamespaceUnitOfWork, before: NamespaceState, written: () => string | undefined) => () => R;

/**
 * The ledger's command side: each write is a NamespaceCommand, handled by one generic loop
 * (as emmett's handleCommand): read what it needs by key, `decide`, append the events, inside
 * the SERIALIZABLE transaction of the group commit it joins (group-commit.ts), retried whole on
 * a conflict. The methods
 * only build the command and turn the decider's answer into the caller's result.
 */
export class LedgerCommands {
  private readonly groups: GroupCommitter;
  private readonly notifier: AppendNotifier;
  private readonly dataSource: DataSource;
  private readonly newId: () => string;
  private readonly clock: LedgerClock;
  private readonly quotaLimit: { max: number; setting: string };
  private readonly limitRangeLimit: { max: number; setting: string };
  private readonly warnAtPercent: number | undefined;
  private readonly admission: { readonly plugins?: readonly AdmissionPlugin[]; readonly limitedResources?: readonly LimitedResource[] };
  private readonly committedListeners: ((commands: number, retries: number) => void)[] = [];
  private readonly countAwaitedListeners: ((namespaces: readonly string[]) => void)[] = [];
  private readonly awaitFirstCount: boolean;

  constructor(dataSource: DataSource, options: LedgerOptions = {}) {
    this.dataSource = dataSource;
    this.newId = options.newId ?? randomUUID;
    this.clock = new LedgerClock(dataSource, options.clock);
    this.quotaLimit = { max: options.quotasPerNamespaceMax ?? DEFAULTS.quotasPerNamespaceMax, setting: 'QUOTAS_PER_NAMESPACE_MAX' };
    this.limitRangeLimit = { max: options.limitRangesPerNamespaceMax ?? DEFAULTS.limitRangesPerNamespaceMax, setting: 'LIMIT_RANGES_PER_NAMESPACE_MAX' };
    this.warnAtPercent = options.quotaWarningPercent ? options.quotaWarningPercent : undefined;
    this.awaitFirstCount = options.awaitFirstCount === true;
    this.admission = {
      ...(options.admissionPlugins ? { plugins: options.admissionPlugins } : {}),
      ...(options.limitedResources?.length ? { limitedResources: options.limitedResources } : {}),
    };
    this.notifier = new AppendNotifier(dataSource, LEDGER_EVENTS_CHANNEL, DEFAULTS.notifyIntervalMs);
    this.groups = new GroupCommitter(dataSource, {
      batchSizeMax: options.batchSizeMax ?? DEFAULTS.batchSizeMax,
      groupCommandsMax: options.groupCommandsMax ?? DEFAULTS.groupCommandsMax,
      groupBytesMax: options.groupBytesMax ?? DEFAULTS.groupBytesMax,
      groupsInFlightMax: options.groupsInFlightMax ?? DEFAULTS.groupsInFlightMax,
      retryMax: options.retryMax ?? DEFAULTS.retryMax,
      retryBaseMs: options.retryBaseMs ?? DEFAULTS.retryBaseMs,
      retryMaxDelayMs: options.retryMaxDelayMs ?? DEFAULTS.retryMaxDelayMs,
      headWaitMaxMs: options.headWaitMaxMs ?? DEFAULTS.headWaitMaxMs,
      queueMax: DEFAULTS.queueMax,
      ...(options.clock ? { clock: options.clock } : {}),
      onCommitted: (commands, retries) => {
        options.onCommitted?.(commands, retries);
        for (const listener of this.committedListeners) listener(commands, retries);
      },
      onAppended: () => this.notifier.poke(),
      ...(options.onPrefetched ? { onPrefetched: options.onPrefetched } : {}),
      ...(options.onLocked ? { onLocked: options.onLocked } : {}),
    });
  }

  /** The ledger's time, epoch ms: the injected clock, or the database's. */
  now(): Promise<number> {
    return this.clock.now();
  }

  /** Transactions, commands, retries and refusals so far (for metrics and the benchmark). */
  get stats(): Readonly<BatchStats> {
    return this.groups.stats;
  }

  /** Tells `listener` of every committed transaction: how many commands it decided, after how many retries (metrics). */
  onCommitted(listener: (commands: number, retries: number) => void): void {
    this.committedListeners.push(listener);
  }

  /**
   * Tells `listener` of namespaces that began awaiting their first count (CountAwaited) in a
   * committed write, so that their count is queued at once (the API's ReconcileTrigger).
   */
  onCountAwaited(listener: (namespaces: readonly string[]) => void): void {
    this.countAwaitedListeners.push(listener);
  }

  /** Finishes the batches in flight; new commands are refused. */
  async close(): Promise<void> {
    await this.groups.close();
    await this.notifier.close();
  }

  async admit(command: AdmitCommand): Promise<AdmitOutcome> {
    const { request } = command;
    assert(command.logged !== false || command.dryRun, 'only a dry run may go unlogged');
    const key = command.requestKey !== undefined && !command.dryRun ? command.requestKey : undefined;
    // Computed outside the transaction: the key is a claim checked against what it was first used for.
    const digest = key === undefined ? undefined : requestDigest(command);
    const common = {
      ...(key === undefined ? {} : { requestKey: key, requestDigest: digest }),
      dryRun: command.dryRun,
      reservationId: this.newId(),
      source: command.source,
      ...(command.ttlMs === undefined ? {} : { ttlMs: command.ttlMs }),
      ...(command.requireKnownNamespace ? { requireKnownNamespace: true } : {}),
      ...(this.warnAtPercent === undefined ? {} : { warnAtPercent: this.warnAtPercent }),
      ...(this.admission.plugins ? { plugins: this.admission.plugins } : {}),
    };
    const decided: NamespaceCommand = command.resources
      ? {
          type: 'AdmitResources',
          ...common,
          groupResource: request.groupResource,
          ...(request.name ? { name: request.name } : {}),
          ...(kindOf(command) ? { kind: kindOf(command) } : {}),
          resources: command.resources,
        }
      : { type: 'AdmitObject', ...common, request, ...(this.admission.limitedResources ? { limitedResources: this.admission.limitedResources } : {}) };
    const meta = { actor: command.requester, ...(command.onBehalfOf ? { onBehalfOf: command.onBehalfOf } : {}), ...(command.requestKey ? { requestId: command.requestKey } : {}) };
    const outcome = await this.handle(command.namespace, decided, meta, (answer, work, _before, written): (() => AdmitOutcome) => {
      const managed = work.facts.known;
      switch (answer.kind) {
        case 'Refused':
          return refused(answer);
        case 'Unmanaged':
          return () => ({ result: answer.result, repeated: false, decisionId: '', managed: false });
        case 'KeyReused':
          return () => ({ result: answer.result, repeated: false, decisionId: '', managed });
        case 'Repeated': {
          const decisionId = work.decisionIdFor(key ?? '');
          return () => ({ result: answer.result, repeated: true, decisionId: decisionId(), managed });
        }
        case 'Decided': {
          if (command.logged === false) return () => ({ result: answer.result, repeated: false, decisionId: '', managed: true });
          const handle = work.recordDecision(decisionOf(command, answer.result, key, digest));
          return () => ({ result: answer.result, repeated: false, decisionId: handle.id ?? '', managed: true, position: written() });
        }
      }
    });
    // A repeat, or an object admitted again, appended nothing: it stands on its reservation's
    // first event, read once committed. Not for the webhook: kube-apiserver reads no position,
    // and a repeated review should cost no extra round trip.
    const { result } = outcome;
    if (command.source === 'webhook' || !result.allowed || result.dryRun || !result.reservationId) return outcome;
    return pointing(this.dataSource, outcome, { stream: command.namespace, reservationId: result.reservationId });
  }

  /** `by: 'rest'`: a REST call, which may settle only reservations REST made (the cluster's are the reconciler's). */
  async commit(namespace: string, reservationId: string, options: WriteOptions & { readonly by?: 'rest' }): Promise<CommitOutcome> {
    const command = { type: 'CommitReservation', reservationId, ...(options.by ? { by: options.by } : {}) } as const;
    const { outcome, latest } = await this.handle(namespace, command, writeMeta(options), (answer, work, _before, written) => {
      if (answer.kind === 'Refused') return refused(answer);
      return settled(namespace, recordIn(work, reservationId), answer.kind === 'Committed', written);
    });
    return pointing(this.dataSource, outcome, latest);
  }

  async release(namespace: string, reservationId: string, options: WriteOptions & { readonly reason?: ReleaseReason; readonly by?: 'rest' }): Promise<ReleaseOutcome> {
    const command = { type: 'ReleaseReservation', reservationId, reason: options.reason ?? 'cancelled', ...(options.by ? { by: options.by } : {}) } as const;
    const { outcome, latest } = await this.handle(namespace, command, writeMeta(options), (answer, work, _before, written) => {
      if (answer.kind === 'Refused') return refused(answer);
      return settled(namespace, recordIn(work, reservationId), answer.kind === 'Released', written);
    });
    return pointing(this.dataSource, outcome, latest);
  }

  /**
   * Appends the reconciler's corrections for one namespace, through the same batched
   * transaction as admissions: two reconcilers working from the same listing release a stale
   * reservation once, and a reservation admitted while the listing ran is judged by the state
   * that includes it.
   */
  reconcile(namespace: string, listing: ReconcileListing, options: WriteOptions & { readonly graceMs: number }): Promise<ReconcileOutcome> {
    const command = { type: 'Reconcile', covers: listing.covers, objects: listing.objects, listedAt: listing.listedAt, graceMs: options.graceMs, newId: this.newId } as const;
    return this.handle(namespace, command, writeMeta(options), (answer, work) => {
      const version = work.current.version;
      return () => ({ namespace, version, actions: answer.actions, overHard: answer.overHard, pending: answer.pending, uncovered: answer.uncovered });
    });
  }

  async putQuota(namespace: string, definition: QuotaDefinition, options: PutOptions): Promise<PutResult<QuotaView>> {
    const command = { type: 'PutQuota', definition, uid: this.newId(), limit: this.quotaLimit, awaitFirstCount: this.awaitFirstCount, ...expected(options) } as const;
    const result = await this.handle(namespace, command, writeMeta(options), (answer, work, _before, written) => {
      if (answer.kind === 'Refused') return refused(answer);
      const view = quotaViewOfState(namespace, work.current, definition.name);
      assert(view, `quota ${definition.name} exists after its PUT`);
      return () => ({ created: answer.kind === 'Defined', changed: answer.kind !== 'Unchanged', view, position: written() });
    });
    // Unchanged: it stands on the event that last defined or changed the quota.
    return pointing(this.dataSource, result, { stream: namespace, version: result.view.version });
  }

  deleteQuota(namespace: string, name: string, options: WriteOptions): Promise<RemoveResult<QuotaView>> {
    return this.handle(namespace, { type: 'RemoveQuota', name }, writeMeta(options), (answer, _work, before, written) => {
      if (answer.kind === 'Refused') return refused(answer);
      const last = quotaViewOfState(namespace, before, name);
      assert(last, `quota ${name} existed before its removal`);
      return () => removed(last, written());
    });
  }

  async putLimitRange(namespace: string, definition: LimitRangeDefinition, options: PutOptions): Promise<PutResult<LimitRangeView>> {
    const command = { type: 'PutLimitRange', definition, uid: this.newId(), limit: this.limitRangeLimit, awaitFirstCount: this.awaitFirstCount, ...expected(options) } as const;
    const result = await this.handle(namespace, command, writeMeta(options), (answer, work, _before, written) => {
      if (answer.kind === 'Refused') return refused(answer);
      const view = limitRangeViewOfState(namespace, work.current, definition.name);
      assert(view, `limit range ${definition.name} exists after its PUT`);
      return () => ({ created: answer.kind === 'Defined', changed: answer.kind !== 'Unchanged', view, position: written() });
    });
    return pointing(this.dataSource, result, { stream: namespace, version: result.view.version });
  }

  deleteLimitRange(namespace: string, name: string, options: WriteOptions): Promise<RemoveResult<LimitRangeView>> {
    return this.handle(namespace, { type: 'RemoveLimitRange', name }, writeMeta(options), (answer, _work, before, written) => {
      if (answer.kind === 'Refused') return refused(answer);
      const last = limitRangeViewOfState(namespace, before, name);
      assert(last, `limit range ${name} existed before its removal`);
      return () => removed(last, written());
    });
  }

  /**
   * The one loop every write goes through: in the namespace's next batch, read by key what the
   * command needs (needsOf, until nothing is missing), decide, append what was decided, and
   * let `finish` shape the answer. A retried transaction runs all of it again on fresh reads.
   */
  private handle<C extends NamespaceCommand, R>(namespace: string, command: C, meta: EventMeta, finish: Finish<C, R>): Promise<R> {
    const first = needsOf(command, unread(namespace));
    return this.groups.submit<R>(namespace, {
      ...(first ? { prefetch: first } : {}),
      bytes: bytesOf(command),
      run: async (work) => {
        const { answer, before, events } = await decideOn(work, command, meta);
        const last = work.current.version;
        const after = finish(answer, work, before, () => (last > before.version ? work.positionAt(last) : undefined));
        if (!events.some((event) => event.type === 'CountAwaited')) return after;
        return () => {
          const result = after();
          for (const listener of this.countAwaitedListeners) listener([namespace]);
          return result;
        };
      },
    });
  }
}

/**
 * One command on a namespace's unit of work: read by key what it needs (needsOf, until nothing
 * is missing), decide, append what was decided. Returns the answer and the state it was decided on.
 */
export async function decideOn<C extends NamespaceCommand>(
  work: NamespaceUnitOfWork,
  command: C,
  meta: EventMeta,
): Promise<{ answer: AnswerOf[C['type']]; before: NamespaceState; events: readonly LedgerEvent[] }> {
  for (let round = 1, needs = needsOf(command, work.facts); needs; needs = needsOf(command, work.facts), round++) {
    assert(round <= NEEDS_ROUNDS_MAX, `${command.type} still needs facts after ${NEEDS_ROUNDS_MAX} reads`);
    await work.load(needs);
  }
  const before = work.current;
  const { events, answer } = decide(command, work.facts);
  work.append(events, meta);
  return { answer, before, events };
}

/** Roughly what a command writes: a reconcile one reservation and event per object listed, a definition its spec, anything else a few rows. */
function bytesOf(command: NamespaceCommand): number {
  switch (command.type) {
    case 'Reconcile':
      return 2048 + 1024 * command.objects.length;
    case 'PutQuota':
    case 'PutLimitRange':
      return 4096 + 8 * JSON.stringify(command.definition).length;
    default:
      return 2048;
  }
}

/** Facts of which nothing has been read: what a command asks for first is read with the head. */
function unread(namespace: string): NamespaceFacts {
  return { namespace, known: true, now: 0, state: initialState(), liveLoaded: new Set(), reservations: new Map(), answers: new Map() };
}

function refused(answer: Refusal): () => never {
  return () => {
    throw new LedgerError(answer.code, answer.message, answer.details);
  };
}

function recordIn(work: NamespaceUnitOfWork, id: string) {
  const record = work.record(id);
  assert(record, `reservation ${id} was read before it was decided on`);
  return record;
}

/** A commit's or release's outcome, and the reservation's latest event: what a repeat (which appended nothing) stands on. */
function settled(namespace: string, record: ReservationRecord, changed: boolean, written: () => string | undefined): () => { outcome: CommitOutcome; latest: EventRef | undefined } {
  const view = reservationViewOf(namespace, record);
  const version = record.eventVersions.at(-1);
  return () => ({ outcome: { view, changed, position: written() }, latest: version === undefined ? undefined : { stream: namespace, version } });
}

function expected(options: PutOptions): { expectedVersion?: number } {
  return options.expectedVersion === undefined ? {} : { expectedVersion: options.expectedVersion };
}

function writeMeta(options: WriteOptions): EventMeta {
  return { actor: options.actor, ...(options.requestId === undefined ? {} : { requestId: options.requestId }) };
}

/** The admitted object's kind: the object's own, else the one the command names (a resource list), else the old object's. */
function kindOf(command: AdmitCommand): string | undefined {
  return command.request.object?.kind || command.kind || command.request.oldObject?.kind || undefined;
}

/** The decisions log's row for an answer decided now. */
function decisionOf(command: AdmitCommand, result: AdmissionResult, key: string | undefined, digest: string | undefined) {
  const { request } = command;
  const object = request.object;
  const uid = object?.metadata?.uid ?? request.oldObject?.metadata?.uid;
  const name = request.name || object?.metadata?.name;
  return {
    source: command.source,
    ...(key && digest ? { requestKey: key, requestDigest: digest } : {}),
    operation: request.operation,
    resource: groupResourceString(request.groupResource),
    ...(kindOf(command) ? { kind: kindOf(command) } : {}),
    ...(name ? { name } : {}),
    ...(uid ? { objectUid: uid } : {}),
    requester: command.requester,
    ...(command.onBehalfOf ? { onBehalfOf: command.onBehalfOf } : {}),
    dryRun: command.dryRun,
    result,
  };
}
