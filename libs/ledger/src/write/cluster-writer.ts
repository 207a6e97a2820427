import { randomUUID } from 'node:crypto';
import {
  appliedSharedQuota,
  assert,
  crowdedRefusal,
  decideSharedQuota,
  sharedQuotaKey,
  sharedQuotasCovering,
  type AppliedSharedQuota,
  type NamespaceDefinition,
  type NamespaceState,
  type SharedQuotaDefinition,
  type SharedQuotaEvent,
  type SharedQuotaRef,
  type QueuePolicy,
} from '@quota/domain';
import type pg from 'pg';
import type { DataSource } from 'typeorm';
import { AppendNotifier, LEDGER_EVENTS_CHANNEL } from './append-notifier.js';
import { flushWorks } from './flush.js';
import { stateOf } from '../head.js';
import { LedgerError } from '../ledger-error.js';
import { pointing, removed } from './event-position.js';
import type { PutOptions, PutResult, RemoveResult, WriteOptions } from '../ledger.types.js';
import { RetryPolicy } from './retry-policy.js';
import { SharedHeads, type SharedHeadRow } from '../shared-heads.js';
import { NamespaceUnitOfWork } from './unit-of-work.js';
import { namespaceViewOf, sharedQuotaViewOf, type NamespaceView, type SharedQuotaView } from '../read/cluster-views.js';
import { waitingUnder } from '../read/queue-queries.js';
import { fairDrain, type DequeueOutcome } from './shared-drain.js';
import {
  LIVE_SHARED_QUOTAS,
  liveSharedQuotas,
  lockNamespaceHeads,
  lockSharedHeads,
  namespaceLabels,
  readSharedHead,
  type LockedHead,
} from './cluster-heads.js';
import { refusal, writeMeta } from './command-outcomes.js';

/**
 * The writes that move several heads at once: a Namespace's labels (which shared
 * quotas cover it), and a shared quota's definition (which namespaces it covers). Each is one
 * SERIALIZABLE transaction that reads what decides the selection (every shared quota's
 * definition, or every namespace's labels), locks the heads it changes in one order (namespaces,
 * then shared quotas, each sorted), lets every namespace's own decider apply or withdraw the
 * shared quotas (so each namespace's contribution is recounted in its fold), and writes it all
 * in the group commit's one statement with a compare-and-set on every head. Admissions take the
 * same heads with SKIP LOCKED, so they wait for these (rare) writes instead of deadlocking.
 */
export interface ClusterWriterOptions {
  readonly newId?: () => string;
  readonly clock?: () => number;
  readonly retryMax?: number;
  /** Most namespaces one shared quota may cover (each admission there rewrites its head). */
  readonly sharedQuotaNamespacesMax?: number;
  /** A namespace a shared quota starts to manage awaits its first count (QUOTA_AWAITS_FIRST_COUNT). */
  readonly awaitFirstCount?: boolean;
  /** The reservation queue's policy: a relabel drains the namespace's queue as any write does. */
  readonly queuePolicy?: QueuePolicy;
}

const EMPTY_READ = { requestKeys: [], reservationIds: [], uids: [] };
/** The cluster writer's retries: as many as an admission's, with longer pauses (each reads every head). */
const RETRIES = { retryMax: 12, retryBaseMs: 10, retryMaxDelayMs: 200 };
/**
 * Conflicts after which a write takes the heads' tables before its snapshot (transact). A
 * write that reads every head and then locks those of the namespaces it covers loses to any
 * admission committing in those namespaces in between: over 100 busy namespaces it lost all
 * 12 attempts (docs/benchmarks.md, "Cluster writes under admission load").
 */
const OPTIMISTIC_ATTEMPTS = 2;
const NAMESPACES_MAX = 1000;

interface Tx {
  readonly client: pg.ClientBase;
  readonly now: number;
}

export class ClusterWriter {
  /** Transactions committed, and those rerun after a conflict, by cause (bench:cluster-writes reads them). */
  readonly stats = { transactions: 0, retries: 0, conflicts: { serialization: 0, version: 0, unique: 0, locked: 0 } };
  private readonly newId: () => string;
  private readonly notifier: AppendNotifier;
  private readonly namespacesMax: number;
  private readonly countAwaitedListeners: ((namespaces: readonly string[]) => void)[] = [];
  private readonly dequeuedListeners: ((outcome: DequeueOutcome, waitedMs: number) => void)[] = [];
  private readonly retries: RetryPolicy;

  constructor(
    private readonly dataSource: DataSource,
    private readonly options: ClusterWriterOptions = {},
  ) {
    this.newId = options.newId ?? randomUUID;
    this.retries = new RetryPolicy({ ...RETRIES, retryMax: options.retryMax ?? RETRIES.retryMax, pessimisticAfter: OPTIMISTIC_ATTEMPTS });
    this.namespacesMax = options.sharedQuotaNamespacesMax ?? NAMESPACES_MAX;
    this.notifier = new AppendNotifier(dataSource, LEDGER_EVENTS_CHANNEL, 20);
  }

  async close(): Promise<void> {
    await this.notifier.close();
  }

  /** Tells `listener` of namespaces that began awaiting their first count in a committed write (LedgerCommands.onCountAwaited). */
  onCountAwaited(listener: (namespaces: readonly string[]) => void): void {
    this.countAwaitedListeners.push(listener);
  }

  /** After COMMIT: tells the listeners of the namespaces these units of work made await their first count. */
  private tell(works: readonly NamespaceUnitOfWork[]): void {
    const awaiting = works.filter((work) => work.appended('CountAwaited')).map((work) => work.namespace);
    if (awaiting.length > 0) for (const listener of this.countAwaitedListeners) listener(awaiting);
  }

  /** The SyncSharedQuotas command, with the deployment's first-count setting. */
  private sync(covering: readonly AppliedSharedQuota[]) {
    return { type: 'SyncSharedQuotas', covering, ...(this.options.awaitFirstCount ? { awaitFirstCount: true } : {}) } as const;
  }

  /** Creates or changes a Namespace object; the shared quotas its labels select cover it from this transaction on. */
  async putNamespace(definition: NamespaceDefinition, options: PutOptions): Promise<PutResult<NamespaceView>> {
    const name = definition.name;
    const uid = this.newId();
    let committed: NamespaceUnitOfWork[] = [];
    const result = await this.transact(async (tx) => {
      const registry = await liveSharedQuotas(tx.client);
      const head = await lockNamespaceHeads(tx.client, [name]);
      const current = head.get(name);
      const covering = sharedQuotasCovering(registry, name, definition);
      const shared = await lockSharedHeads(tx.client, [
        ...(current?.state.shared ?? []).map((q) => q.key),
        ...covering.map((d) => sharedQuotaKey(d.ref)),
      ]);
      const crowded = crowdedRefusal(
        name,
        covering,
        new Set((current?.state.shared ?? []).map((q) => q.key)),
        (key) => shared.memberCount(key),
        this.namespacesMax,
      );
      if (crowded) throw refusal(crowded);
      const work = this.begin(tx, name, current, shared);
      const { answer: put } = await work.decide(
        {
          type: 'PutNamespace',
          definition,
          uid,
          ...(options.expectedVersion === undefined ? {} : { expectedVersion: options.expectedVersion }),
        },
        writeMeta(options),
      );
      if (put.kind === 'Refused') throw refusal(put);
      await work.decide(this.sync(covering.map(appliedSharedQuota)), writeMeta(options));
      const position = await flushWorks(tx.client, [work], tx.now, shared);
      committed = [work];
      const view = namespaceViewOf(name, work.current);
      assert(view, `namespace ${name} exists after its PUT`);
      return { created: put.kind === 'Defined', changed: put.kind !== 'Unchanged', view, position };
    });
    this.tell(committed);
    // Unchanged (and no shared quota moved): it stands on the event that last changed the Namespace.
    return pointing(this.dataSource, result, { stream: name, version: result.view.version });
  }

  /**
   * Deletes a Namespace object: only the shared quotas that cover it by name (its own hierarchical
   * ones) still do. `listedVersion`: the reconciler's listing that misses it (a record observed at
   * a newer version is kept: Conflict).
   */
  deleteNamespace(name: string, options: WriteOptions & { readonly listedVersion?: string }): Promise<RemoveResult<NamespaceView>> {
    return this.transact(async (tx) => {
      const registry = await liveSharedQuotas(tx.client);
      const current = (await lockNamespaceHeads(tx.client, [name])).get(name);
      const before = current ? namespaceViewOf(name, stateOfHead(current)) : undefined;
      if (!current || !before) throw new LedgerError('NotFound', `namespaces "${name}" not found`, { kind: 'namespaces', name });
      const covering = sharedQuotasCovering(registry, name, undefined);
      const shared = await lockSharedHeads(
        tx.client,
        (current.state.shared ?? []).map((q) => q.key),
      );
      const work = this.begin(tx, name, current, shared);
      const { answer } = await work.decide(
        { type: 'RemoveNamespace', ...(options.listedVersion ? { listedVersion: options.listedVersion } : {}) },
        writeMeta(options),
      );
      if (answer.kind === 'Refused') throw refusal(answer);
      await work.decide(this.sync(covering.map(appliedSharedQuota)), writeMeta(options));
      return removed(before, await flushWorks(tx.client, [work], tx.now, shared));
    });
  }

  /**
   * Why these labels may not be recorded for the namespace, or undefined: a shared quota they
   * would newly put it under covers as many namespaces as one may (relabels once grew one
   * past its cap, and its admin could no longer redefine it). A read, no lock: the webhook asks
   * before it lets a relabel through, so that the cluster never stores what the ledger refuses.
   */
  async relabelProblem(definition: NamespaceDefinition): Promise<string | undefined> {
    const name = definition.name;
    const registry: SharedQuotaDefinition[] = (await this.dataSource.query(LIVE_SHARED_QUOTAS)).map(
      (r: { definition: SharedQuotaDefinition }) => r.definition,
    );
    const covering = sharedQuotasCovering(registry, name, definition);
    if (covering.length === 0) return undefined;
    const rows: { key: string; members: number; here: boolean }[] = await this.dataSource.query(
      `SELECT key, (SELECT count(*) FROM jsonb_object_keys(state->'members'))::int AS members, (state->'members') ? $2 AS here FROM shared_quota_heads WHERE key = ANY($1::text[])`,
      [covering.map((d) => sharedQuotaKey(d.ref)), name],
    );
    const counts = new Map(rows.map((r) => [r.key, r]));
    const current = new Set(rows.filter((r) => r.here).map((r) => r.key));
    return crowdedRefusal(name, covering, current, (key) => counts.get(key)?.members ?? 0, this.namespacesMax)?.message;
  }

  /**
   * Creates or changes a shared quota, and applies it to (or withdraws it from) every namespace
   * its selection changes for: the domain's shared-quota decider decides on every namespace's
   * labels and the quota's head; this locks the heads it names and has each namespace sync.
   */
  async putSharedQuota(definition: SharedQuotaDefinition, options: PutOptions): Promise<PutResult<SharedQuotaView>> {
    const key = sharedQuotaKey(definition.ref);
    const command = {
      type: 'PutSharedQuota',
      definition,
      uid: this.newId(),
      namespacesMax: this.namespacesMax,
      ...(options.expectedVersion === undefined ? {} : { expectedVersion: options.expectedVersion }),
      ...(options.unmanagedOnly ? { unmanagedOnly: true } : {}),
    } as const;
    let committed: NamespaceUnitOfWork[] = [];
    const result = await this.transact(async (tx): Promise<PutResult<SharedQuotaView>> => {
      const namespaces = await namespaceLabels(tx.client);
      const head = await readSharedHead(tx.client, key);
      const { events, answer, resync } = decideSharedQuota(command, { now: tx.now, head: factsOf(head), namespaces });
      if (answer.kind === 'Refused') throw refusal(answer);
      if (answer.kind !== 'Defined' && answer.kind !== 'Changed') {
        assert(head, `an unchanged shared quota ${key} has a head`);
        return { created: false, changed: false, view: sharedQuotaViewOf(head.key, Number(head.version), head.state) as SharedQuotaView };
      }
      const works = await this.resync(tx, key, answer.definition, events, resync, options);
      const position = await flushWorks(tx.client, works.units, tx.now, works.shared);
      committed = works.units;
      const plan = works.shared.plans().find((p) => p.key === key);
      assert(plan, `shared quota ${key} was written`);
      return {
        created: answer.kind === 'Defined',
        changed: true,
        view: sharedQuotaViewOf(key, plan.version, plan.state) as SharedQuotaView,
        position,
      };
    });
    this.tell(committed);
    // Unchanged: it stands on its stream's last definition event.
    return pointing(this.dataSource, result, { stream: key, version: result.view.version });
  }

  /** Removes a shared quota: it is withdrawn from every namespace it covered. */
  deleteSharedQuota(ref: SharedQuotaRef, options: WriteOptions): Promise<RemoveResult<SharedQuotaView>> {
    const key = sharedQuotaKey(ref);
    return this.transact(async (tx) => {
      const head = await readSharedHead(tx.client, key);
      const { events, answer, resync } = decideSharedQuota(
        { type: 'RemoveSharedQuota', ref, ...(options.unmanagedOnly ? { unmanagedOnly: true } : {}) },
        { now: tx.now, head: factsOf(head), namespaces: [] },
      );
      if (answer.kind === 'Refused') throw refusal(answer);
      const before = head ? sharedQuotaViewOf(key, Number(head.version), head.state) : undefined;
      assert(before, `shared quota ${key} existed before its removal`);
      const works = await this.resync(tx, key, null, events, resync, options);
      return removed(before, await flushWorks(tx.client, works.units, tx.now, works.shared));
    });
  }

  /**
   * A shared quota's fair drain: in one transaction, locks the heads of the namespaces
   * waiting under it and of every shared quota covering them, and admits their waiters that fit
   * by weighted fair share (shared-drain.ts). What it admitted, per namespace.
   */
  async drainSharedQueue(key: string, options: WriteOptions): Promise<Map<string, number>> {
    const waiting = await waitingUnder(this.dataSource, key);
    if (waiting.length === 0) return new Map();
    const { admitted, dequeued } = await this.transact(async (tx) => {
      const heads = await lockNamespaceHeads(tx.client, waiting);
      const keys = [...heads.values()].flatMap((head) => (head.state.shared ?? []).map((q) => q.key));
      const shared = await lockSharedHeads(tx.client, keys);
      const units = [...heads.values()].map((head) => this.begin(tx, head.namespace, head, shared));
      const dequeued: { outcome: DequeueOutcome; waitedMs: number }[] = [];
      const admitted = fairDrain(units, key, writeMeta(options), dequeued);
      if (dequeued.length > 0) await flushWorks(tx.client, units, tx.now, shared);
      return { admitted, dequeued };
    });
    for (const { outcome, waitedMs } of dequeued) for (const listener of this.dequeuedListeners) listener(outcome, waitedMs);
    return admitted;
  }

  /** Tells `listener` of every waiter a fair drain took out of the queue, and how long it waited (LedgerCommands.onDequeued). */
  onDequeued(listener: (outcome: DequeueOutcome, waitedMs: number) => void): void {
    this.dequeuedListeners.push(listener);
  }

  /**
   * Locks the heads of the namespaces a shared quota's change touches and then its own (the order
   * every multi-head writer takes), records its event on its head, and has each namespace apply
   * (`covered`) or withdraw it, keeping the other shared quotas that cover it.
   */
  private async resync(
    tx: Tx,
    key: string,
    stored: SharedQuotaDefinition | null,
    events: readonly SharedQuotaEvent[],
    resync: readonly { namespace: string; covered: boolean }[],
    options: WriteOptions,
  ) {
    const heads = await lockNamespaceHeads(
      tx.client,
      resync.map((r) => r.namespace),
    );
    const shared = await lockSharedHeads(tx.client, [key]);
    if (!shared.has(key)) shared.take({ key });
    for (const event of events)
      shared.define(key, stored, { type: event.type, data: event.data, ...eventMeta(options), at: tx.now }, tx.now);
    const units: NamespaceUnitOfWork[] = [];
    for (const { namespace, covered } of resync) {
      const work = this.begin(tx, namespace, heads.get(namespace), shared);
      const keep: AppliedSharedQuota[] = [...work.current.shared.values()]
        .filter((q) => q.key !== key)
        .map((q) => ({ key: q.key, ref: q.ref, spec: q.definition.spec }));
      await work.decide(this.sync(covered && stored ? [...keep, appliedSharedQuota(stored)] : keep), writeMeta(options));
      units.push(work);
    }
    return { units, shared };
  }

  private begin(tx: Tx, namespace: string, head: LockedHead | undefined, shared: SharedHeads): NamespaceUnitOfWork {
    const row = { namespace, head_version: head?.version ?? null, decisions: null, reservations: null };
    return NamespaceUnitOfWork.begin(
      tx.client,
      namespace,
      tx.now,
      head ? { version: Number(head.version), state: head.state } : undefined,
      EMPTY_READ,
      row,
      shared,
      this.options.queuePolicy,
    );
  }

  /**
   * One SERIALIZABLE transaction, retried whole on a serialization failure or a moved head, by
   * the writers' one RetryPolicy. After OPTIMISTIC_ATTEMPTS conflicts (the policy's
   * `pessimisticAfter`) it first locks the head tables in EXCLUSIVE mode, before
   * its first query takes the snapshot (PostgreSQL lets a SERIALIZABLE transaction lock tables
   * before its view of the data is frozen): it waits for the admissions in flight, holds off new
   * ones (their head locks wait behind it; plain reads go on), and runs alone on the heads, so
   * it commits. Tables in the order admissions lock them (namespaces, then shared quotas), so
   * nothing waits in a cycle.
   */
  private transact<R>(body: (tx: Tx) => Promise<R>): Promise<R> {
    return this.retries.run((attempt) => this.once(attempt, body), {
      conflicted: (cause) => this.stats.conflicts[cause]++,
      retrying: () => this.stats.retries++,
      gaveUp: (attempts) =>
        new LedgerError('Unavailable', `the change conflicted with concurrent ones ${attempts} times; retry`, { retryAfterSeconds: 1 }),
    });
  }

  private async once<R>(attempt: number, body: (tx: Tx) => Promise<R>): Promise<R> {
    const runner = this.dataSource.createQueryRunner();
    try {
      const client = (await runner.connect()) as pg.PoolClient;
      await runner.startTransaction('SERIALIZABLE');
      if (this.retries.pessimistic(attempt)) await client.query(`LOCK TABLE namespace_heads, shared_quota_heads IN EXCLUSIVE MODE`);
      const { rows } = await client.query<{ now_ms: number }>(`SELECT (extract(epoch from clock_timestamp()) * 1000)::float8 AS now_ms`);
      const now = this.options.clock ? this.options.clock() : Math.floor(rows[0]?.now_ms ?? Date.now());
      const result = await body({ client, now });
      await runner.commitTransaction();
      this.stats.transactions++;
      this.notifier.poke();
      return result;
    } catch (error) {
      if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
      throw error;
    } finally {
      await runner.release();
    }
  }
}

/** What the shared-quota decider needs of a head. */
function factsOf(head: SharedHeadRow | undefined) {
  return head
    ? { version: Number(head.version), definition: head.state.definition ?? undefined, members: Object.keys(head.state.members) }
    : undefined;
}

/** A shared quota's own event: the actor, and the Kubernetes user it relayed (a LedgerClusterQuota's author). */
function eventMeta(options: WriteOptions): { request_id: string | null; actor: string; on_behalf_of: string | null } {
  return { request_id: options.requestId ?? null, actor: options.actor, on_behalf_of: options.onBehalfOf ?? null };
}

function stateOfHead(head: LockedHead): NamespaceState {
  return stateOf(Number(head.version), head.state);
}
