import { randomUUID } from 'node:crypto';
import {
  assert,
  selectableOf,
  sharedQuotaKey,
  sharedQuotaSelects,
  sharedQuotaTitle,
  type AppliedSharedQuota,
  type NamespaceDefinition,
  type NamespaceState,
  type SharedQuotaDefinition,
  type SharedQuotaRef,
} from '@quota/domain';
import type pg from 'pg';
import type { DataSource } from 'typeorm';
import { AppendNotifier } from './append-notifier.js';
import { flushWorks } from './group-commit.js';
import { stateOf, type HeadJson } from './head.js';
import { LedgerError } from './ledger-error.js';
import { pointing, removed } from './event-position.js';
import type { PutOptions, PutResult, RemoveResult, WriteOptions } from './ledger.types.js';
import { RetryPolicy } from './retry-policy.js';
import { canonicalJson } from './request-digest.js';
import { LEDGER_EVENTS_CHANNEL } from './projection.js';
import { SharedHeads, type SharedHeadRow } from './shared-heads.js';
import { NamespaceUnitOfWork, type EventMeta } from './unit-of-work.js';
import { namespaceViewOf, sharedQuotaViewOf, type NamespaceView, type SharedQuotaView } from './cluster-views.js';

/**
 * The writes that move several heads at once (issue 18): a Namespace's labels (which shared
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
}

const EMPTY_READ = { requestKeys: [], reservationIds: [], uids: [] };
/** The cluster writer's retries: as many as an admission's, with longer pauses (each reads every head). */
const RETRIES = { retryMax: 12, retryBaseMs: 10, retryMaxDelayMs: 200 };
/**
 * Conflicts after which a write takes the heads' tables before its snapshot (transact). A
 * write that reads every head and then locks those of the namespaces it covers loses to any
 * admission committing in those namespaces in between: over 100 busy namespaces it lost all
 * 12 attempts (issue 33, bench:cluster-writes).
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
      const covering = registry.filter((d) => sharedQuotaSelects(d, selectableOf(name, definition)));
      const shared = await lockSharedHeads(tx.client, [...(current?.state.shared ?? []).map((q) => q.key), ...covering.map((d) => sharedQuotaKey(d.ref))]);
      const crowded = this.crowded(name, covering, new Set((current?.state.shared ?? []).map((q) => q.key)), (key) => shared.memberCount(key));
      if (crowded) throw crowded;
      const work = this.begin(tx, name, current, shared);
      const { answer: put } = await work.decide({ type: 'PutNamespace', definition, uid, ...(options.expectedVersion === undefined ? {} : { expectedVersion: options.expectedVersion }) }, meta(options));
      if (put.kind === 'Refused') throw new LedgerError(put.code, put.message, put.details);
      await work.decide(this.sync(covering.map(applied)), meta(options));
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
      const covering = registry.filter((d) => sharedQuotaSelects(d, selectableOf(name, undefined)));
      const shared = await lockSharedHeads(tx.client, (current.state.shared ?? []).map((q) => q.key));
      const work = this.begin(tx, name, current, shared);
      const { answer } = await work.decide({ type: 'RemoveNamespace', ...(options.listedVersion ? { listedVersion: options.listedVersion } : {}) }, meta(options));
      if (answer.kind === 'Refused') throw new LedgerError(answer.code, answer.message, answer.details);
      await work.decide(this.sync(covering.map(applied)), meta(options));
      return removed(before, await flushWorks(tx.client, [work], tx.now, shared));
    });
  }

  /**
   * Why these labels may not be recorded for the namespace, or undefined: a shared quota they
   * would newly put it under covers as many namespaces as one may (issue 33: relabels grew one
   * past its cap, and its admin could no longer redefine it). A read, no lock: the webhook asks
   * before it lets a relabel through, so that the cluster never stores what the ledger refuses.
   */
  async relabelProblem(definition: NamespaceDefinition): Promise<string | undefined> {
    const name = definition.name;
    const registry: SharedQuotaDefinition[] = (await this.dataSource.query(LIVE_SHARED_QUOTAS)).map((r: { definition: SharedQuotaDefinition }) => r.definition);
    const covering = registry.filter((d) => sharedQuotaSelects(d, selectableOf(name, definition)));
    if (covering.length === 0) return undefined;
    const rows: { key: string; members: number; here: boolean }[] = await this.dataSource.query(
      `SELECT key, (SELECT count(*) FROM jsonb_object_keys(state->'members'))::int AS members, (state->'members') ? $2 AS here FROM shared_quota_heads WHERE key = ANY($1::text[])`,
      [covering.map((d) => sharedQuotaKey(d.ref)), name],
    );
    const counts = new Map(rows.map((r) => [r.key, r]));
    const current = new Set(rows.filter((r) => r.here).map((r) => r.key));
    return this.crowded(name, covering, current, (key) => counts.get(key)?.members ?? 0)?.message;
  }

  /** The refusal of a namespace newly put under a shared quota that covers as many as one may. */
  private crowded(name: string, covering: readonly SharedQuotaDefinition[], current: ReadonlySet<string>, members: (key: string) => number): LedgerError | undefined {
    for (const definition of covering) {
      const key = sharedQuotaKey(definition.ref);
      if (current.has(key) || members(key) < this.namespacesMax) continue;
      return new LedgerError(
        'Forbidden',
        `namespaces "${name}" is forbidden: its labels would put it under ${sharedQuotaTitle(definition.ref)}, which covers ${members(key)} namespaces already, as many as one shared quota may (SHARED_QUOTA_NAMESPACES_MAX=${this.namespacesMax})`,
        { kind: 'namespaces', name },
      );
    }
    return undefined;
  }

  /** Creates or changes a shared quota, and applies it to (or withdraws it from) every namespace its selection changes for. */
  async putSharedQuota(definition: SharedQuotaDefinition, options: PutOptions): Promise<PutResult<SharedQuotaView>> {
    const key = sharedQuotaKey(definition.ref);
    const uid = this.newId();
    let committed: NamespaceUnitOfWork[] = [];
    const result = await this.transact(async (tx): Promise<PutResult<SharedQuotaView>> => {
      const namespaces = await namespaceLabels(tx.client);
      const existingHead = (await readSharedHead(tx.client, key)) ?? undefined;
      const existing = existingHead?.state.definition ?? undefined;
      checkExpected(definition.ref, existing, existingHead ? Number(existingHead.version) : 0, options.expectedVersion);
      const stored: SharedQuotaDefinition = {
        ...definition,
        metadata: {
          ...withoutServerFields(definition.metadata),
          uid: existing?.metadata?.uid ?? uid,
          creationTimestamp: existing?.metadata?.creationTimestamp ?? new Date(tx.now).toISOString(),
        },
      };
      // Compared key order aside: the stored definition comes back from jsonb, which reorders keys.
      if (existing && existingHead && canonicalJson(existing) === canonicalJson(stored)) {
        return { created: false, changed: false, view: sharedQuotaViewOf(existingHead.key, Number(existingHead.version), existingHead.state) as SharedQuotaView };
      }
      const selected = namespaces.filter((n) => sharedQuotaSelects(stored, selectableOf(n.namespace, n.object ?? undefined))).map((n) => n.namespace);
      // A hierarchical quota covers its own namespace whether the ledger knows it yet or not.
      if (stored.ref.kind === 'HierarchicalResourceQuota' && stored.ref.namespace && !selected.includes(stored.ref.namespace)) selected.push(stored.ref.namespace);
      if (selected.length > this.namespacesMax) {
        throw new LedgerError(
          'Forbidden',
          `${sharedQuotaTitle(stored.ref)} is forbidden: it would cover ${selected.length} namespaces, more than one shared quota may (SHARED_QUOTA_NAMESPACES_MAX=${this.namespacesMax})`,
          { kind: kindPlural(stored.ref), name: stored.ref.name },
        );
      }
      const members = namespaces.filter((n) => n.shared.includes(key)).map((n) => n.namespace);
      const targets = [...new Set([...selected, ...members])].sort();
      const heads = await lockNamespaceHeads(tx.client, targets);
      const shared = await lockSharedHeads(tx.client, [key]);
      if (!shared.has(key)) shared.take({ key });
      shared.define(key, stored, { type: existing ? 'SharedQuotaChanged' : 'SharedQuotaDefined', data: stored, ...eventMeta(options), at: tx.now }, tx.now);
      const works: NamespaceUnitOfWork[] = [];
      for (const namespace of targets) {
        const head = heads.get(namespace);
        const work = this.begin(tx, namespace, head, shared);
        const keep = [...work.current.shared.values()].filter((q) => q.key !== key).map((q) => ({ key: q.key, ref: q.ref, spec: q.definition.spec }));
        const covering = selected.includes(namespace) ? [...keep, applied(stored)] : keep;
        await work.decide(this.sync(covering), meta(options));
        works.push(work);
      }
      const position = await flushWorks(tx.client, works, tx.now, shared);
      committed = works;
      const plan = shared.plans().find((p) => p.key === key);
      assert(plan, `shared quota ${key} was written`);
      return { created: !existing, changed: true, view: sharedQuotaViewOf(key, plan.version, plan.state) as SharedQuotaView, position };
    });
    this.tell(committed);
    // Unchanged: it stands on its stream's last definition event.
    return pointing(this.dataSource, result, { stream: key, version: result.view.version });
  }

  /** Removes a shared quota: it is withdrawn from every namespace it covered. */
  deleteSharedQuota(ref: SharedQuotaRef, options: WriteOptions): Promise<RemoveResult<SharedQuotaView>> {
    const key = sharedQuotaKey(ref);
    return this.transact(async (tx) => {
      const existingHead = await readSharedHead(tx.client, key);
      const before = existingHead ? sharedQuotaViewOf(key, Number(existingHead.version), existingHead.state) : undefined;
      if (!existingHead || !before) throw new LedgerError('NotFound', `${kindPlural(ref)} "${ref.name}" not found`, { kind: kindPlural(ref), name: ref.name });
      const targets = Object.keys(existingHead.state.members).sort();
      const heads = await lockNamespaceHeads(tx.client, targets);
      const shared = await lockSharedHeads(tx.client, [key]);
      assert(shared.has(key), `shared quota ${key} was locked`);
      shared.define(key, null, { type: 'SharedQuotaRemoved', data: { ref }, ...eventMeta(options), at: tx.now }, tx.now);
      const works: NamespaceUnitOfWork[] = [];
      for (const namespace of targets) {
        const work = this.begin(tx, namespace, heads.get(namespace), shared);
        const covering = [...work.current.shared.values()].filter((q) => q.key !== key).map((q) => ({ key: q.key, ref: q.ref, spec: q.definition.spec }));
        await work.decide(this.sync(covering), meta(options));
        works.push(work);
      }
      return removed(before, await flushWorks(tx.client, works, tx.now, shared));
    });
  }

  private begin(tx: Tx, namespace: string, head: LockedHead | undefined, shared: SharedHeads): NamespaceUnitOfWork {
    const row = { namespace, head_version: head?.version ?? null, decisions: null, reservations: null };
    return NamespaceUnitOfWork.begin(tx.client, namespace, tx.now, head ? { version: Number(head.version), state: head.state } : undefined, EMPTY_READ, row, shared);
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
      gaveUp: (attempts) => new LedgerError('Unavailable', `the change conflicted with concurrent ones ${attempts} times; retry`, { retryAfterSeconds: 1 }),
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

interface LockedHead {
  readonly namespace: string;
  readonly version: string;
  readonly state: HeadJson;
}

function applied(definition: SharedQuotaDefinition): AppliedSharedQuota {
  return { key: sharedQuotaKey(definition.ref), ref: definition.ref, spec: definition.spec };
}

function meta(options: WriteOptions): EventMeta {
  return { actor: options.actor, ...(options.requestId === undefined ? {} : { requestId: options.requestId }) };
}

function eventMeta(options: WriteOptions): { request_id: string | null; actor: string; on_behalf_of: null } {
  return { request_id: options.requestId ?? null, actor: options.actor, on_behalf_of: null };
}

function kindPlural(ref: SharedQuotaRef): string {
  return ref.kind === 'ClusterResourceQuota' ? 'clusterresourcequotas' : 'hierarchicalresourcequotas';
}

function withoutServerFields(metadata: SharedQuotaDefinition['metadata']): SharedQuotaDefinition['metadata'] {
  const { uid: _uid, creationTimestamp: _created, ...rest } = metadata ?? {};
  return rest;
}

function checkExpected(ref: SharedQuotaRef, existing: SharedQuotaDefinition | undefined, version: number, expected: number | undefined): void {
  if (expected === undefined) return;
  const resource = kindPlural(ref);
  if (!existing) throw new LedgerError('Conflict', `Operation cannot be fulfilled on ${resource} "${ref.name}": the object does not exist; remove metadata.resourceVersion to create it`, { kind: resource, name: ref.name });
  if (version !== expected) {
    throw new LedgerError('Conflict', `Operation cannot be fulfilled on ${resource} "${ref.name}": the object has been modified; please apply your changes to the latest version and try again`, { kind: resource, name: ref.name });
  }
}

function stateOfHead(head: LockedHead): NamespaceState {
  return stateOf(Number(head.version), head.state);
}

/** Every shared quota defined now: what a namespace's labels are matched against. */
const LIVE_SHARED_QUOTAS = `SELECT state->'definition' AS definition FROM shared_quota_heads WHERE jsonb_typeof(state->'definition') = 'object' ORDER BY key`;

async function liveSharedQuotas(client: pg.ClientBase): Promise<SharedQuotaDefinition[]> {
  const { rows } = await client.query<{ definition: SharedQuotaDefinition }>(LIVE_SHARED_QUOTAS);
  return rows.map((r) => r.definition);
}

/** Every namespace the ledger knows: its Namespace object and the shared quotas covering it. */
async function namespaceLabels(client: pg.ClientBase): Promise<{ namespace: string; object: NamespaceDefinition | null; shared: string[] }[]> {
  const { rows } = await client.query<{ namespace: string; object: NamespaceDefinition | null; shared: string[] | null }>(
    `SELECT namespace, state->'object'->'definition' AS object,
            (SELECT json_agg(q->>'key') FROM jsonb_array_elements(CASE WHEN jsonb_typeof(state->'shared') = 'array' THEN state->'shared' ELSE '[]'::jsonb END) AS q) AS shared
       FROM namespace_heads ORDER BY namespace`,
  );
  return rows.map((r) => ({ namespace: r.namespace, object: r.object, shared: r.shared ?? [] }));
}

async function readSharedHead(client: pg.ClientBase, key: string): Promise<SharedHeadRow | undefined> {
  const { rows } = await client.query<SharedHeadRow>(`SELECT key, revision::text AS revision, version::text AS version, state FROM shared_quota_heads WHERE key = $1`, [key]);
  return rows[0];
}

/** Locks the heads of these namespaces, in name order (the order every multi-head writer takes). */
async function lockNamespaceHeads(client: pg.ClientBase, namespaces: readonly string[]): Promise<Map<string, LockedHead>> {
  if (namespaces.length === 0) return new Map();
  const { rows } = await client.query<LockedHead>(
    `SELECT namespace, version::text AS version, state FROM namespace_heads WHERE namespace = ANY($1::text[]) ORDER BY namespace FOR NO KEY UPDATE`,
    [[...new Set(namespaces)].sort()],
  );
  return new Map(rows.map((r) => [r.namespace, r]));
}

/** Locks the heads of these shared quotas, in key order, after the namespaces'. */
async function lockSharedHeads(client: pg.ClientBase, keys: readonly string[]): Promise<SharedHeads> {
  if (keys.length === 0) return new SharedHeads();
  const { rows } = await client.query<SharedHeadRow>(
    `SELECT key, revision::text AS revision, version::text AS version, state FROM shared_quota_heads WHERE key = ANY($1::text[]) ORDER BY key FOR NO KEY UPDATE`,
    [[...new Set(keys)].sort()],
  );
  return new SharedHeads(rows);
}
