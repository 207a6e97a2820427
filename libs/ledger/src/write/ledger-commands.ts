import { randomUUID } from 'node:crypto';
import {
  assert,
  freedSharedKeys,
  measureListing,
  needsOf,
  type AdmissionPlugin,
  type AnswerOf,
  type LimitRangeDefinition,
  type LimitedResource,
  type NamespaceCommand,
  type QuotaDefinition,
  type ReleaseReason,
} from '@quota/domain';
import type { DataSource } from 'typeorm';
import { AppendNotifier, LEDGER_EVENTS_CHANNEL } from './append-notifier.js';
import { GroupCommitter, type BatchStats } from './group-commit.js';
import { LedgerClock } from './ledger-clock.js';
import { LedgerError } from '../ledger-error.js';
import type {
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
} from '../ledger.types.js';
import { pointing, removed } from './event-position.js';
import { requestDigest } from './request-digest.js';
import { queuedTotal } from '../read/queue-queries.js';
import { dequeuedBy, type DequeueOutcome } from './shared-drain.js';
import { RetryPolicy } from './retry-policy.js';
import type { EventMeta, Keep, Step } from './unit-of-work.js';
import { limitRangeViewOfState, quotaViewOfState } from '../read/views.js';
import { admitOutcome, bytesOf, decisionOf, expected, kindOf, refusal, settled, unmanaged, unread, writeMeta } from './command-outcomes.js';

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
  queueTotalMax: 10_000,
};

/**
 * The ledger's command side, read as emmett's handleCommand: each write builds a
 * NamespaceCommand; `handle` has it decided in the SERIALIZABLE transaction of the group commit
 * it joins (group-commit.ts: read by key, `decide`, append, write, COMMIT, retried whole on a
 * conflict) and gets back a plain Step once committed; the method then turns the decider's
 * answer into the caller's result, or throws its refusal.
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
  private readonly sharedFreedListeners: ((keys: readonly string[]) => void)[] = [];
  private readonly dequeuedListeners: ((outcome: DequeueOutcome, waitedMs: number) => void)[] = [];
  private readonly awaitFirstCount: boolean;
  private readonly queueTotalMax: number;

  constructor(dataSource: DataSource, options: LedgerOptions = {}) {
    this.dataSource = dataSource;
    this.newId = options.newId ?? randomUUID;
    this.clock = new LedgerClock(dataSource, options.clock);
    this.quotaLimit = { max: options.quotasPerNamespaceMax ?? DEFAULTS.quotasPerNamespaceMax, setting: 'QUOTAS_PER_NAMESPACE_MAX' };
    this.limitRangeLimit = {
      max: options.limitRangesPerNamespaceMax ?? DEFAULTS.limitRangesPerNamespaceMax,
      setting: 'LIMIT_RANGES_PER_NAMESPACE_MAX',
    };
    this.warnAtPercent = options.quotaWarningPercent ? options.quotaWarningPercent : undefined;
    this.awaitFirstCount = options.awaitFirstCount === true;
    this.queueTotalMax = options.queueTotalMax ?? DEFAULTS.queueTotalMax;
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
      retries: new RetryPolicy({
        retryMax: options.retryMax ?? DEFAULTS.retryMax,
        retryBaseMs: options.retryBaseMs ?? DEFAULTS.retryBaseMs,
        retryMaxDelayMs: options.retryMaxDelayMs ?? DEFAULTS.retryMaxDelayMs,
      }),
      headWaitMaxMs: options.headWaitMaxMs ?? DEFAULTS.headWaitMaxMs,
      queueMax: DEFAULTS.queueMax,
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.queuePolicy ? { queuePolicy: options.queuePolicy } : {}),
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

  /** Tells `listener` of the shared quotas a committed write freed room in, whose waiters a fair drain may admit now (the API's QueueSweeper). */
  onSharedFreed(listener: (keys: readonly string[]) => void): void {
    this.sharedFreedListeners.push(listener);
  }

  /** Tells `listener` of every waiter a committed write took out of the queue, and how long it waited (the queue-wait metric). */
  onDequeued(listener: (outcome: DequeueOutcome, waitedMs: number) => void): void {
    this.dequeuedListeners.push(listener);
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
    if (command.wait && !command.dryRun && (await queuedTotal(this.dataSource)) >= this.queueTotalMax) {
      // Checked before the transaction (a bound, not an invariant): one more waiter than the bound may slip in per race.
      throw new LedgerError(
        'TooManyRequests',
        `${this.queueTotalMax} reservations are queued in all namespaces (QUEUE_TOTAL_MAX); retry later`,
        { retryAfterSeconds: 5 },
      );
    }
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
          ...(command.wait
            ? { wait: { ms: command.wait.seconds * 1000, priority: command.wait.priority, principal: command.requester } }
            : {}),
        }
      : {
          type: 'AdmitObject',
          ...common,
          request,
          ...(this.admission.limitedResources ? { limitedResources: this.admission.limitedResources } : {}),
        };
    const meta = {
      actor: command.requester,
      ...(command.onBehalfOf ? { onBehalfOf: command.onBehalfOf } : {}),
      ...(command.requestKey ? { requestId: command.requestKey } : {}),
    };
    // What the step keeps, as data: the decisions-log row for an answer decided now (unless unlogged), the stored one for a repeat.
    const keep: Keep = {
      decision: {
        ...(key === undefined ? {} : { requestKey: key }),
        ...(command.logged === false ? {} : { row: decisionOf(command, key, digest) }),
      },
    };
    const step = await this.handle(command.namespace, decided, meta, keep);
    const outcome = admitOutcome(step);
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
    const step = await this.handle(namespace, command, writeMeta(options), { reservation: reservationId });
    if (step.answer.kind === 'Refused') throw refusal(step.answer);
    const { outcome, latest } = settled(namespace, step, step.answer.kind === 'Committed');
    return pointing(this.dataSource, outcome, latest);
  }

  async release(
    namespace: string,
    reservationId: string,
    options: WriteOptions & { readonly reason?: ReleaseReason; readonly by?: 'rest' },
  ): Promise<ReleaseOutcome> {
    const command = {
      type: 'ReleaseReservation',
      reservationId,
      reason: options.reason ?? 'cancelled',
      ...(options.by ? { by: options.by } : {}),
    } as const;
    const step = await this.handle(namespace, command, writeMeta(options), { reservation: reservationId });
    if (step.answer.kind === 'Refused') throw refusal(step.answer);
    const { outcome, latest } = settled(namespace, step, step.answer.kind === 'Released');
    return pointing(this.dataSource, outcome, latest);
  }

  /** Cancels a queued reservation (Cancelled); NotFound when it is not queued (admitted ones are released instead). */
  async cancelQueued(namespace: string, reservationId: string, options: WriteOptions): Promise<{ readonly position?: string }> {
    const step = await this.handle(namespace, { type: 'CancelQueued', reservationId }, writeMeta(options));
    if (step.answer.kind === 'Refused') throw refusal(step.answer);
    return step.position === undefined ? {} : { position: step.position };
  }

  /** Expires the namespace's waiters past their deadline and admits those that fit now (the periodic sweep; a shared quota's wake-up). */
  async sweepQueue(namespace: string, options: WriteOptions): Promise<readonly string[]> {
    const step = await this.handle(namespace, { type: 'SweepQueue' }, writeMeta(options));
    return step.events.map((event) => event.type);
  }

  /**
   * Appends the reconciler's corrections for one namespace, through the same batched
   * transaction as admissions: two reconcilers working from the same listing release a stale
   * reservation once, and a reservation admitted while the listing ran is judged by the state
   * that includes it.
   */
  async reconcile(
    namespace: string,
    listing: ReconcileListing,
    options: WriteOptions & { readonly graceMs: number },
  ): Promise<ReconcileOutcome> {
    const countable = listing.countable === false ? { countable: false } : {};
    // Measured once, outside the transaction (and its retries), as of the listing's start.
    const listed = measureListing(listing.objects, listing.listedAt);
    const command = {
      type: 'Reconcile',
      covers: listing.covers,
      objects: listing.objects,
      listed,
      listedAt: listing.listedAt,
      graceMs: options.graceMs,
      ids: listing.objects.map(() => this.newId()),
      ...(listing.deleted?.length ? { deleted: listing.deleted } : {}),
      ...countable,
    } as const;
    const { answer, after } = await this.handle(namespace, command, writeMeta(options));
    return {
      namespace,
      version: after.version,
      actions: answer.actions,
      overHard: answer.overHard,
      pending: answer.pending,
      unconfirmed: answer.unconfirmed,
      uncovered: answer.uncovered,
      unreadable: answer.unreadable,
    };
  }

  async putQuota(namespace: string, definition: QuotaDefinition, options: PutOptions): Promise<PutResult<QuotaView>> {
    const command = {
      type: 'PutQuota',
      definition,
      uid: this.newId(),
      limit: this.quotaLimit,
      awaitFirstCount: this.awaitFirstCount,
      ...expected(options),
    } as const;
    const { answer, after, position } = await this.handle(namespace, command, writeMeta(options));
    if (answer.kind === 'Refused') throw refusal(answer);
    const view = quotaViewOfState(namespace, after, definition.name);
    assert(view, `quota ${definition.name} exists after its PUT`);
    const result = { created: answer.kind === 'Defined', changed: answer.kind !== 'Unchanged', view, position };
    // Unchanged: it stands on the event that last defined or changed the quota.
    return pointing(this.dataSource, result, { stream: namespace, version: result.view.version });
  }

  async deleteQuota(namespace: string, name: string, options: WriteOptions): Promise<RemoveResult<QuotaView>> {
    const { answer, before, position } = await this.handle(
      namespace,
      { type: 'RemoveQuota', name, ...unmanaged(options) },
      writeMeta(options),
    );
    if (answer.kind === 'Refused') throw refusal(answer);
    const last = quotaViewOfState(namespace, before, name);
    assert(last, `quota ${name} existed before its removal`);
    return removed(last, position);
  }

  async putLimitRange(namespace: string, definition: LimitRangeDefinition, options: PutOptions): Promise<PutResult<LimitRangeView>> {
    const command = {
      type: 'PutLimitRange',
      definition,
      uid: this.newId(),
      limit: this.limitRangeLimit,
      awaitFirstCount: this.awaitFirstCount,
      ...expected(options),
    } as const;
    const { answer, after, position } = await this.handle(namespace, command, writeMeta(options));
    if (answer.kind === 'Refused') throw refusal(answer);
    const view = limitRangeViewOfState(namespace, after, definition.name);
    assert(view, `limit range ${definition.name} exists after its PUT`);
    const result = { created: answer.kind === 'Defined', changed: answer.kind !== 'Unchanged', view, position };
    return pointing(this.dataSource, result, { stream: namespace, version: result.view.version });
  }

  async deleteLimitRange(namespace: string, name: string, options: WriteOptions): Promise<RemoveResult<LimitRangeView>> {
    const { answer, before, position } = await this.handle(
      namespace,
      { type: 'RemoveLimitRange', name, ...unmanaged(options) },
      writeMeta(options),
    );
    if (answer.kind === 'Refused') throw refusal(answer);
    const last = limitRangeViewOfState(namespace, before, name);
    assert(last, `limit range ${name} existed before its removal`);
    return removed(last, position);
  }

  /**
   * The one way every write goes: in the namespace's next batch, the unit of work reads by key
   * what the command needs, decides and appends, and keeps on the step what `keep` asks for (data
   * the unit of work applies: the batch writes a decision with it); the Step comes back once the
   * transaction has committed. A retried transaction runs all of it again on fresh reads.
   */
  private async handle<C extends NamespaceCommand>(
    namespace: string,
    command: C,
    meta: EventMeta,
    keep?: Keep,
  ): Promise<Step<AnswerOf[C['type']]>> {
    const first = needsOf(command, unread(namespace));
    const step = await this.groups.submit(namespace, {
      ...(first ? { prefetch: first } : {}),
      bytes: bytesOf(command),
      run: (work) => work.decide(command, meta, keep),
    });
    if (step.events.some((event) => event.type === 'CountAwaited'))
      for (const listener of this.countAwaitedListeners) listener([namespace]);
    const freed =
      step.events.length > 0 && (step.before.shared.size > 0 || step.after.shared.size > 0)
        ? freedSharedKeys(step.before, step.after, step.events)
        : [];
    if (freed.length > 0) for (const listener of this.sharedFreedListeners) listener(freed);
    if (step.before.queue.size > 0 && this.dequeuedListeners.length > 0) {
      for (const { outcome, waitedMs } of dequeuedBy(step.before, step.events, step.after.lastEventAt ?? 0))
        for (const listener of this.dequeuedListeners) listener(outcome, waitedMs);
    }
    return step;
  }
}
