import { randomUUID } from 'node:crypto';
import {
  admissionViewOf,
  decideAdmission,
  decideCommit,
  decideResources,
  decideReconcile,
  decideRelease,
  deepEqualJson,
  fold,
  initialState,
  type RawQuantities,
  type RecordedEvent,
  groupResourceString,
  Resources,
  type AdmissionDecision,
  type LedgerEvent,
  type LimitRange,
  type LimitRangeDefinition,
  type QuotaDefinition,
  type QuotaDenial,
  type ReleaseReason,
} from '@quota/domain';
import type pg from 'pg';
import type { DataSource } from 'typeorm';
import { AppendNotifier } from './append-notifier.js';
import { LEDGER_EVENTS_CHANNEL } from './projection.js';
import { NamespaceBatcher, type BatchStats } from './batcher.js';
import { headOf, quotaStateOf, reservationFromJson, stateOf, type HeadJson, type ReservationJson } from './head.js';
import { LedgerError } from './ledger-error.js';
import type {
  AdmissionResult,
  AdmitCommand,
  AdmitOutcome,
  CommitOutcome,
  DecisionQuery,
  DecisionView,
  DenialJson,
  EventView,
  LedgerOptions,
  LimitRangeView,
  NamespaceUsage,
  NamespaceUsageAt,
  UsageMarker,
  UsageSeries,
  DefinitionChange,
  Page,
  ProjectedUsage,
  PutOptions,
  PutResult,
  QuotaView,
  ReconcileListing,
  ReconcileOutcome,
  ReleaseOutcome,
  ReservationView,
  WriteOptions,
} from './ledger.types.js';
import { requestDigest } from './request-digest.js';
import { sampleUsage } from './usage-sampler.js';
import { RESERVATION_COLUMNS, recordOf, reservationViewOf, type NamespaceTx, type RawReservationRow, type ReservationRecord } from './namespace-tx.js';

/** Most samples one usage series answers, and most markers of each kind. */
export const SERIES_POINTS_MAX = 500;
export const SERIES_MARKERS_MAX = 1000;

const DEFAULTS = {
  batchSizeMax: 64,
  quotasPerNamespaceMax: 16,
  limitRangesPerNamespaceMax: 16,
  /** The projection worker hears of appends this long after them at most (it also polls). */
  notifyIntervalMs: 20,
  retryMax: 12,
  retryBaseMs: 2,
  retryMaxDelayMs: 100,
  statementTimeoutMs: 5000,
  queueMax: 10_000,
};

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * The ledger: every write goes through one compare-and-set on the namespace's head per batch
 * of commands (see NamespaceBatcher, NamespaceTx.open); reads go straight to the head row, the
 * reservation rows and the decisions log, by key.
 */
export class Ledger {
  private readonly pool: pg.Pool;
  private readonly batcher: NamespaceBatcher;
  private readonly notifier: AppendNotifier;
  private readonly newId: () => string;
  private readonly clock: (() => number) | undefined;
  private readonly quotasPerNamespaceMax: number;
  private readonly limitRangesPerNamespaceMax: number;

  constructor(dataSource: DataSource, options: LedgerOptions = {}) {
    const pool = (dataSource.driver as unknown as { master?: pg.Pool }).master;
    if (!pool) throw new Error('the ledger needs an initialized PostgreSQL data source');
    this.pool = pool;
    this.newId = options.newId ?? randomUUID;
    this.clock = options.clock;
    this.quotasPerNamespaceMax = options.quotasPerNamespaceMax ?? DEFAULTS.quotasPerNamespaceMax;
    this.limitRangesPerNamespaceMax = options.limitRangesPerNamespaceMax ?? DEFAULTS.limitRangesPerNamespaceMax;
    this.batcher = new NamespaceBatcher(pool, {
      batchSizeMax: options.batchSizeMax ?? DEFAULTS.batchSizeMax,
      retryMax: options.retryMax ?? DEFAULTS.retryMax,
      retryBaseMs: options.retryBaseMs ?? DEFAULTS.retryBaseMs,
      retryMaxDelayMs: options.retryMaxDelayMs ?? DEFAULTS.retryMaxDelayMs,
      statementTimeoutMs: options.statementTimeoutMs ?? DEFAULTS.statementTimeoutMs,
      queueMax: DEFAULTS.queueMax,
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.onCommitted ? { onCommitted: options.onCommitted } : {}),
      onAppended: () => this.notifier.poke(),
    });
    this.notifier = new AppendNotifier(pool, LEDGER_EVENTS_CHANNEL, DEFAULTS.notifyIntervalMs);
  }

  /** The ledger's time, epoch ms: the injected clock, or the database's. */
  async now(): Promise<number> {
    if (this.clock) return this.clock();
    const { rows } = await this.pool.query<{ now_ms: number }>(`SELECT (extract(epoch from clock_timestamp()) * 1000)::float8 AS now_ms`);
    return Math.floor(rows[0]?.now_ms ?? Date.now());
  }

  /** The pool the ledger reads and writes with (projections and audit queries share it). */
  get connectionPool(): pg.Pool {
    return this.pool;
  }

  /** Transactions, commands, retries and refusals so far (for metrics and the benchmark). */
  get stats(): Readonly<BatchStats> {
    return this.batcher.stats;
  }

  /** Finishes the batches in flight; new commands are refused. */
  async close(): Promise<void> {
    await this.batcher.close();
    await this.notifier.close();
  }

  // ---------------------------------------------------------------- admission

  admit(command: AdmitCommand): Promise<AdmitOutcome> {
    const object = command.request.object;
    const uid = object?.metadata?.uid ?? command.request.oldObject?.metadata?.uid;
    const reservationId = this.newId();
    const requestKey = command.requestKey && !command.dryRun ? command.requestKey : undefined;
    // Computed outside the batch's transaction: the key is a claim checked against what it was first used for.
    const digest = requestKey ? requestDigest(command) : undefined;
    return this.batcher.submit<AdmitOutcome>(command.namespace, {
      prefetch: { requestKeys: requestKey ? [requestKey] : [], uids: uid ? [uid] : [] },
      run: async (tx) => {
        if (requestKey) {
          const earlier = await tx.decisionFor(requestKey);
          if (earlier) {
            // Decisions stored before digests were kept (null) answer as they always did.
            if (earlier.digest !== undefined && earlier.digest !== digest) {
              return () => ({ result: keyReused(command.namespace, requestKey, command.dryRun), repeated: false, decisionId: '', managed: tx.known });
            }
            const handle = earlier.id === undefined ? tx.handleFor(requestKey) : undefined;
            return () => ({ result: earlier.result, repeated: true, decisionId: earlier.id ?? handle?.id ?? '', managed: tx.known });
          }
        }
        if (!tx.known) {
          if (command.requireKnownNamespace) {
            throw new LedgerError(
              'NamespaceNotFound',
              `namespaces "${command.namespace}" not found: define a ResourceQuota or LimitRange in it first`,
              { kind: 'namespaces', name: command.namespace },
            );
          }
          // An unmanaged namespace (no quota or limit range, ever): nothing to charge and nothing
          // to record. The webhook is sent every namespace's requests; logging them all would let
          // any caller grow the decisions log with names that mean nothing here.
          return () => ({ result: { allowed: true, code: 200, dryRun: command.dryRun }, repeated: false, decisionId: '', managed: false });
        }
        const result = await this.decide(tx, command, reservationId, uid);
        const handle = tx.recordDecision({
          source: command.source,
          ...(requestKey && digest ? { requestKey, requestDigest: digest } : {}),
          operation: command.request.operation,
          resource: groupResourceString(command.request.groupResource),
          ...(object?.kind ? { kind: object.kind } : {}),
          ...(command.request.name || object?.metadata?.name ? { name: command.request.name || object?.metadata?.name } : {}),
          ...(uid ? { objectUid: uid } : {}),
          requester: command.requester,
          ...(command.onBehalfOf ? { onBehalfOf: command.onBehalfOf } : {}),
          dryRun: command.dryRun,
          result,
        });
        return () => ({ result, repeated: false, decisionId: handle.id ?? '', managed: true });
      },
    });
  }

  private async decide(tx: NamespaceTx, command: AdmitCommand, reservationId: string, uid: string | undefined): Promise<AdmissionResult> {
    const { request } = command;
    const dryRun = command.dryRun;

    // What the ledger holds for the object: an UPDATE or a repeated CREATE is charged against it.
    if (uid) await tx.loadLiveOf(uid);
    const view = admissionViewOf(tx.current, uid);
    const expiresAt = command.ttlMs === undefined ? undefined : tx.now + command.ttlMs;
    const decision: AdmissionDecision = command.resources
      ? decideResources(
          {
            namespace: command.namespace,
            groupResource: request.groupResource,
            ...(request.name ? { name: request.name } : {}),
            ...(request.object?.kind ? { kind: request.object.kind } : {}),
            resources: Resources.resourceList(command.resources),
            reservationId,
            now: tx.now,
            ...(expiresAt === undefined ? {} : { expiresAt }),
          },
          view,
        )
      : decideAdmission({ request, reservationId, now: tx.now, ...(expiresAt === undefined ? {} : { expiresAt }) }, view);

    if (!decision.allowed) {
      return {
        allowed: false,
        code: decision.code,
        dryRun,
        message: decision.message,
        stage: decision.stage,
        ...(decision.denial ? { denial: denialJson(decision.denial) } : {}),
      };
    }
    if (decision.existing) {
      // The same object admitted again (a second webhook call for one create): charged once.
      const live = decision.existing;
      return {
        allowed: true,
        code: 200,
        dryRun,
        reservationId: live.id,
        charged: Resources.canonicalResourceList(live.contribution),
        ...(live.expiresAt === undefined ? {} : { expiresAt: iso(live.expiresAt) }),
      };
    }
    const reservation = decision.reservation;
    if (reservation && !dryRun) {
      tx.append([reservation], { actor: command.requester, ...(command.onBehalfOf ? { onBehalfOf: command.onBehalfOf } : {}), ...(command.requestKey ? { requestId: command.requestKey } : {}) });
    }
    return {
      allowed: true,
      code: 200,
      dryRun,
      ...(reservation && !dryRun ? { reservationId: reservation.data.reservationId } : {}),
      ...(reservation ? { charged: reservation.data.charged } : {}),
      ...(reservation?.data.expiresAt ? { expiresAt: reservation.data.expiresAt } : {}),
      ...(decision.patch.length > 0 ? { patch: decision.patch } : {}),
    };
  }

  commit(namespace: string, reservationId: string, options: WriteOptions): Promise<CommitOutcome> {
    return this.batcher.submit<CommitOutcome>(namespace, {
      prefetch: { reservationIds: [reservationId] },
      run: async (tx) => {
        const record = await this.existingReservation(tx, namespace, reservationId);
        if (record.status === 'released') {
          if (record.releaseReason === 'expired') throw expired(reservationId, record);
          throw new LedgerError(
            'Conflict',
            `reservation "${reservationId}" was released (${record.releaseReason ?? 'unknown'}) at ${iso(record.releasedAt ?? 0)} and cannot be committed; reserve again`,
            { kind: 'reservations', name: reservationId },
          );
        }
        // A commit replaces every older state of the object; an expiry takes its pending changes along.
        if (record.json.object.uid) await tx.loadLiveOf(record.json.object.uid);
        const outcome = decideCommit(tx.current, reservationId, tx.now);
        switch (outcome.kind) {
          case 'AlreadyCommitted':
            return () => ({ view: reservationViewOf(namespace, record), changed: false });
          case 'Expired': {
            tx.append(outcome.events, writeMeta(options));
            const released = await this.existingReservation(tx, namespace, reservationId);
            return () => {
              throw expired(reservationId, released);
            };
          }
          case 'Commit': {
            tx.append(outcome.events, writeMeta(options));
            const committed = await this.existingReservation(tx, namespace, reservationId);
            return () => ({ view: reservationViewOf(namespace, committed), changed: true });
          }
          case 'NotLive':
            throw notFound('reservations', reservationId);
        }
      },
    });
  }

  release(namespace: string, reservationId: string, options: WriteOptions & { readonly reason?: ReleaseReason }): Promise<ReleaseOutcome> {
    return this.batcher.submit<ReleaseOutcome>(namespace, {
      prefetch: { reservationIds: [reservationId] },
      run: async (tx) => {
        const record = await this.existingReservation(tx, namespace, reservationId);
        // Releasing an object's settled state releases its pending changes too.
        if (record.json.object.uid) await tx.loadLiveOf(record.json.object.uid);
        const outcome = decideRelease(tx.current, reservationId, options.reason ?? 'cancelled');
        if (outcome.kind === 'NotLive') return () => ({ view: reservationViewOf(namespace, record), changed: false });
        tx.append(outcome.events, writeMeta(options));
        const released = await this.existingReservation(tx, namespace, reservationId);
        return () => ({ view: reservationViewOf(namespace, released), changed: true });
      },
    });
  }

  /**
   * Appends the reconciler's corrections for one namespace (see decideReconcile): through the
   * same batched compare-and-set on the head as admissions, so two reconcilers working from
   * the same listing release a stale reservation once, and a reservation admitted while the
   * listing ran is judged by the state that includes it.
   */
  reconcile(namespace: string, listing: ReconcileListing, options: WriteOptions & { readonly graceMs: number }): Promise<ReconcileOutcome> {
    return this.batcher.submit<ReconcileOutcome>(namespace, {
      run: async (tx) => {
        if (!tx.known) return () => ({ namespace, version: 0, actions: [], overHard: [], pending: 0 });
        await tx.loadAllLive();
        // Listed objects that no live reservation claims are adoption candidates (few, usually
        // none): unless the listing predates their reservation's release.
        const claimed = new Set([...tx.current.reservations.values()].map((r) => r.object.uid));
        const unclaimed = listing.objects.map((o) => o.uid).filter((uid) => !claimed.has(uid));
        const releasedSinceListing = await tx.uidsReleasedSince(unclaimed, listing.listedAt);
        const decision = decideReconcile(tx.current, { ...listing, now: tx.now, graceMs: options.graceMs, newId: this.newId, releasedSinceListing });
        if (decision.events.length > 0) tx.append(decision.events, writeMeta(options));
        const version = tx.current.version;
        return () => ({ namespace, version, actions: decision.actions, overHard: decision.overHard, pending: decision.pending });
      },
    });
  }

  /** Namespaces with a stream, in name order, paged (the reconciler's fan-out). */
  async namespaces(page: { readonly after?: string; readonly limit: number }): Promise<string[]> {
    const { rows } = await this.pool.query<{ namespace: string }>(
      `SELECT namespace FROM namespace_heads WHERE namespace > $1 ORDER BY namespace LIMIT $2`,
      [page.after ?? '', page.limit],
    );
    return rows.map((row) => row.namespace);
  }

  private async existingReservation(tx: NamespaceTx, namespace: string, id: string): Promise<ReservationRecord> {
    if (!tx.known) throw namespaceNotFound(namespace);
    const record = await tx.reservation(id);
    if (!record) throw notFound('reservations', id);
    return record;
  }

  async getReservation(namespace: string, id: string): Promise<ReservationView | undefined> {
    const { rows } = await this.pool.query<RawReservationRow>(
      `SELECT ${RESERVATION_COLUMNS} FROM reservations WHERE namespace = $1 AND reservation_id = $2`,
      [namespace, id],
    );
    const row = rows[0];
    if (!row) return undefined;
    const record = recordOf(row);
    const history = await this.eventsAt(namespace, record.eventVersions);
    const first = history[0];
    return { ...reservationViewOf(namespace, record), ...(first ? { requester: first.actor } : {}), ...(first?.onBehalfOf ? { onBehalfOf: first.onBehalfOf } : {}), history };
  }

  // ---------------------------------------------------------------- quotas and limit ranges

  putQuota(namespace: string, definition: QuotaDefinition, options: PutOptions): Promise<PutResult<QuotaView>> {
    const uid = this.newId();
    return this.batcher.submit<PutResult<QuotaView>>(namespace, {
      run: async (tx) => {
        const existing = tx.current.quotas.get(definition.name);
        checkExpectedVersion('resourcequotas', definition.name, existing?.version, options.expectedVersion);
        if (!existing) checkRoom('resourcequotas', 'ResourceQuotas', definition.name, namespace, tx.current.quotas.size, this.quotasPerNamespaceMax, 'QUOTAS_PER_NAMESPACE_MAX');
        const stored: QuotaDefinition = {
          name: definition.name,
          spec: canonicalQuotaSpec(definition.spec),
          metadata: {
            ...withoutSystemFields(definition.metadata),
            uid: existing?.definition.metadata?.uid ?? uid,
            creationTimestamp: existing?.definition.metadata?.creationTimestamp ?? iso(tx.now),
          },
        };
        if (existing && deepEqualJson(existing.definition as unknown, stored as unknown)) {
          return () => ({ created: false, changed: false, view: quotaView(namespace, tx, definition.name) });
        }
        await tx.loadAllLive();
        tx.append([{ type: existing ? 'QuotaChanged' : 'QuotaDefined', data: stored }], writeMeta(options));
        const view = quotaView(namespace, tx, definition.name);
        return () => ({ created: !existing, changed: true, view });
      },
    });
  }

  deleteQuota(namespace: string, name: string, options: WriteOptions): Promise<QuotaView> {
    return this.batcher.submit(namespace, {
      run: async (tx) => {
        if (!tx.current.quotas.has(name)) throw notFound('resourcequotas', name);
        const last = quotaView(namespace, tx, name);
        tx.append([{ type: 'QuotaRemoved', data: { name } }], writeMeta(options));
        return () => last;
      },
    });
  }

  putLimitRange(namespace: string, definition: LimitRangeDefinition, options: PutOptions): Promise<PutResult<LimitRangeView>> {
    const uid = this.newId();
    return this.batcher.submit<PutResult<LimitRangeView>>(namespace, {
      run: async (tx) => {
        const existing = tx.current.limitRanges.get(definition.name);
        checkExpectedVersion('limitranges', definition.name, existing?.version, options.expectedVersion);
        if (!existing) checkRoom('limitranges', 'LimitRanges', definition.name, namespace, tx.current.limitRanges.size, this.limitRangesPerNamespaceMax, 'LIMIT_RANGES_PER_NAMESPACE_MAX');
        const stored: LimitRangeDefinition = {
          name: definition.name,
          spec: definition.spec,
          metadata: {
            ...withoutSystemFields(definition.metadata),
            uid: existing?.definition.metadata?.uid ?? uid,
            creationTimestamp: existing?.definition.metadata?.creationTimestamp ?? iso(tx.now),
          },
        };
        if (existing && deepEqualJson(existing.definition as unknown, stored as unknown)) {
          return () => ({ created: false, changed: false, view: limitRangeView(namespace, tx, definition.name) });
        }
        tx.append([{ type: existing ? 'LimitRangeChanged' : 'LimitRangeDefined', data: stored }], writeMeta(options));
        const view = limitRangeView(namespace, tx, definition.name);
        return () => ({ created: !existing, changed: true, view });
      },
    });
  }

  deleteLimitRange(namespace: string, name: string, options: WriteOptions): Promise<LimitRangeView> {
    return this.batcher.submit(namespace, {
      run: async (tx) => {
        if (!tx.current.limitRanges.has(name)) throw notFound('limitranges', name);
        const last = limitRangeView(namespace, tx, name);
        tx.append([{ type: 'LimitRangeRemoved', data: { name } }], writeMeta(options));
        return () => last;
      },
    });
  }

  async getQuota(namespace: string, name: string): Promise<QuotaView | undefined> {
    return (await this.listQuotas(namespace)).find((q) => q.definition.name === name);
  }

  async listQuotas(namespace: string): Promise<QuotaView[]> {
    const head = await this.head(namespace);
    return (head?.state.quotas ?? []).map((q) => quotaViewOf(namespace, q));
  }

  async getLimitRange(namespace: string, name: string): Promise<LimitRangeView | undefined> {
    return (await this.listLimitRanges(namespace)).find((lr) => lr.definition.name === name);
  }

  async listLimitRanges(namespace: string): Promise<LimitRangeView[]> {
    const head = await this.head(namespace);
    return (head?.state.limitRanges ?? []).map((lr) => limitRangeViewOf(namespace, lr));
  }

  /** The namespace's LimitRanges as Kubernetes objects (for the mutating webhook). */
  async limitRanges(namespace: string): Promise<LimitRange[]> {
    const head = await this.head(namespace);
    return (head?.state.limitRanges ?? []).map((lr) => ({
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: lr.definition.name, namespace },
      spec: lr.definition.spec,
    }));
  }

  async namespaceExists(namespace: string): Promise<boolean> {
    return (await this.head(namespace)) !== undefined;
  }

  async usage(namespace: string): Promise<NamespaceUsage | undefined> {
    const { rows } = await this.pool.query<{ version: string; state: HeadJson; position: string | null }>(
      `SELECT h.version, h.state, e.position::text AS position
         FROM namespace_heads h LEFT JOIN ledger_events e ON e.namespace = h.namespace AND e.version = h.version
        WHERE h.namespace = $1`,
      [namespace],
    );
    const row = rows[0];
    if (!row) return undefined;
    return {
      namespace,
      version: Number(row.version),
      position: row.position ?? '0',
      quotas: row.state.quotas.map((q) => ({ name: q.definition.name, hard: q.definition.spec.hard ?? {}, used: q.used })),
    };
  }

  /**
   * Usage per quota as the projection worker has folded it, with how far behind the head it
   * is. Undefined for a namespace without a stream.
   */
  async projectedUsage(namespace: string): Promise<ProjectedUsage | undefined> {
    const { rows } = await this.pool.query<{ head_version: string; version: string | null; projected_at: Date | null; quota: string | null; used: RawQuantities | null }>(
      `SELECT h.version::text AS head_version, p.version::text AS version, p.projected_at, q.quota, q.used
         FROM namespace_heads h
         LEFT JOIN projected_namespaces p ON p.namespace = h.namespace
         LEFT JOIN projected_quota_usage q ON q.namespace = h.namespace
        WHERE h.namespace = $1`,
      [namespace],
    );
    const first = rows[0];
    if (!first) return undefined;
    const used = new Map<string, RawQuantities>();
    for (const row of rows) if (row.quota && row.used) used.set(row.quota, row.used);
    return {
      headVersion: Number(first.head_version),
      version: Number(first.version ?? 0),
      ...(first.projected_at ? { projectedAt: first.projected_at.toISOString() } : {}),
      used,
    };
  }

  /**
   * Usage as it was at an instant (RFC 3339, microsecond precision): the fold of the
   * namespace's events up to the last one recorded at or before it, started from the
   * newest snapshot below that version, so at most a snapshot interval of events is read.
   * Exact whatever the projection's lag: snapshots only shorten the fold.
   */
  async usageAt(namespace: string, at: string): Promise<NamespaceUsageAt | undefined> {
    if (!(await this.namespaceExists(namespace))) return undefined;
    const { rows: targets } = await this.pool.query<{ version: string; position: string }>(
      `SELECT version::text AS version, position::text AS position FROM ledger_events
        WHERE namespace = $1 AND recorded_at <= $2::timestamptz ORDER BY ledger_events.recorded_at DESC, ledger_events.version DESC LIMIT 1`,
      [namespace, at],
    );
    const target = targets[0];
    if (!target) return { namespace, at, version: 0, position: '0', quotas: [] };
    const version = Number(target.version);
    const { rows: snapshots } = await this.pool.query<{ version: string; state: HeadJson; reservations: ReservationJson[] }>(
      `SELECT version::text AS version, state, reservations FROM usage_snapshots WHERE namespace = $1 AND version <= $2 ORDER BY usage_snapshots.version DESC LIMIT 1`,
      [namespace, version],
    );
    const snapshot = snapshots[0];
    const from = snapshot ? stateOf(Number(snapshot.version), snapshot.state, snapshot.reservations.map(reservationFromJson)) : initialState();
    const { rows: events } = await this.pool.query<{ version: string; type: string; data: unknown; at_ms: number }>(
      `SELECT version::text AS version, type, data, (extract(epoch from recorded_at) * 1000)::float8 AS at_ms
         FROM ledger_events WHERE namespace = $1 AND version > $2 AND version <= $3 ORDER BY ledger_events.version`,
      [namespace, from.version, version],
    );
    const state = fold(
      events.map((e) => ({ type: e.type, data: e.data, version: Number(e.version), at: Math.floor(e.at_ms) }) as RecordedEvent),
      from,
    );
    const head = headOf(state);
    return {
      namespace,
      at,
      version,
      position: target.position,
      quotas: head.quotas.map((q) => ({ name: q.definition.name, hard: q.definition.spec.hard ?? {}, used: q.used })),
    };
  }

  /**
   * Usage at `points` evenly spaced instants from `since` to `until` (both included), each
   * exact (as `usageAt`: the newest snapshot before it plus at most SNAPSHOT_EVERY events, so
   * the cost does not grow with the namespace's history; points sharing a snapshot share one
   * fold, see sampleUsage), and the range's limit changes and denials as markers. Undefined
   * when the namespace has no stream.
   */
  async usageSeries(namespace: string, range: { readonly since: string; readonly until: string; readonly points: number }): Promise<UsageSeries | undefined> {
    if (!(await this.namespaceExists(namespace))) return undefined;
    const from = Date.parse(range.since);
    const to = Date.parse(range.until);
    const count = Math.max(2, Math.min(SERIES_POINTS_MAX, Math.floor(range.points)));
    const instants = Array.from({ length: count }, (_, i) => new Date(from + Math.round(((to - from) * i) / (count - 1))).toISOString());
    const points = await sampleUsage(this.pool, namespace, instants);
    const { rows: limits } = await this.pool.query<{ version: string; type: string; quota: string; actor: string; at: Date }>(
      `SELECT version::text AS version, type, data->>'name' AS quota, actor, recorded_at AS at FROM ledger_events
        WHERE namespace = $1 AND recorded_at BETWEEN $2::timestamptz AND $3::timestamptz
          AND type IN ('QuotaDefined', 'QuotaChanged', 'QuotaRemoved')
        ORDER BY ledger_events.recorded_at, ledger_events.version LIMIT ${SERIES_MARKERS_MAX + 1}`,
      [namespace, range.since, range.until],
    );
    const { rows: denials } = await this.pool.query<{ id: string; at: Date; reason: string | null; requester: string; name: string | null; message: string | null }>(
      `SELECT id::text AS id, decided_at AS at, reason, requester, name, result->>'message' AS message FROM admission_decisions
        WHERE namespace = $1 AND NOT allowed AND NOT dry_run AND decided_at BETWEEN $2::timestamptz AND $3::timestamptz
        ORDER BY admission_decisions.id LIMIT ${SERIES_MARKERS_MAX + 1}`,
      [namespace, range.since, range.until],
    );
    const change = { QuotaDefined: 'defined', QuotaChanged: 'changed', QuotaRemoved: 'removed' } as const;
    const markers: UsageMarker[] = [
      ...limits.slice(0, SERIES_MARKERS_MAX).map((r): UsageMarker => ({
        kind: 'limit',
        at: r.at.toISOString(),
        version: Number(r.version),
        quota: r.quota,
        change: change[r.type as keyof typeof change],
        actor: r.actor,
      })),
      ...denials.slice(0, SERIES_MARKERS_MAX).map((r): UsageMarker => ({ kind: 'denial', at: r.at.toISOString(), decisionId: r.id, reason: r.reason, requester: r.requester, name: r.name, message: r.message })),
    ].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
    return { namespace, since: range.since, until: range.until, points, markers, truncated: limits.length > SERIES_MARKERS_MAX || denials.length > SERIES_MARKERS_MAX };
  }

  /**
   * Every change of one ResourceQuota's or LimitRange's definition, oldest first: who, when,
   * and the definition before and after. Undefined when that name never existed there.
   */
  async definitionHistory(namespace: string, kind: 'quota' | 'limitRange', name: string, page: { readonly after?: string; readonly limit: number }): Promise<Page<DefinitionChange> | undefined> {
    const types = kind === 'quota' ? ['QuotaDefined', 'QuotaChanged', 'QuotaRemoved'] : ['LimitRangeDefined', 'LimitRangeChanged', 'LimitRangeRemoved'];
    const limit = Math.min(Math.max(page.limit, 1), 1000);
    const after = page.after ?? '0';
    const { rows } = await this.pool.query<EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM ledger_events
        WHERE namespace = $1 AND type = ANY($2::text[]) AND data->>'name' = $3 AND position > $4::bigint
        ORDER BY ledger_events.position LIMIT ${limit + 1}`,
      [namespace, types, name, after],
    );
    if (rows.length === 0 && after === '0') return undefined;
    // The definition in force before the page starts: the `before` of its first change.
    const { rows: previous } = await this.pool.query<{ data: DefinitionJson | { name: string }; type: string }>(
      `SELECT data, type FROM ledger_events WHERE namespace = $1 AND type = ANY($2::text[]) AND data->>'name' = $3 AND position <= $4::bigint
        ORDER BY ledger_events.position DESC LIMIT 1`,
      [namespace, types, name, after],
    );
    let before: DefinitionJson | null = previous[0] && !previous[0].type.endsWith('Removed') ? (previous[0].data as DefinitionJson) : null;
    const items = rows.slice(0, limit).map((row): DefinitionChange => {
      const event = eventView(row);
      const after = row.type.endsWith('Removed') ? null : (row.data as DefinitionJson);
      const change: DefinitionChange = { ...event, before: before?.spec ?? null, after: after?.spec ?? null, changed: changedKeys(kind, before?.spec, after?.spec) };
      before = after;
      return change;
    });
    const last = items.at(-1);
    return { items, ...(rows.length > limit && last ? { next: last.position } : {}) };
  }

  private async head(namespace: string): Promise<{ version: number; state: HeadJson } | undefined> {
    const { rows } = await this.pool.query<{ version: string; state: HeadJson }>(
      `SELECT version, state FROM namespace_heads WHERE namespace = $1`,
      [namespace],
    );
    const row = rows[0];
    return row ? { version: Number(row.version), state: row.state } : undefined;
  }

  // ---------------------------------------------------------------- audit reads

  async listDecisions(namespace: string, query: DecisionQuery): Promise<Page<DecisionView>> {
    const conditions = ['namespace = $1'];
    const params: unknown[] = [namespace];
    const add = (sql: string, value: unknown): void => {
      params.push(value);
      conditions.push(sql.replace('?', `$${params.length}`));
    };
    if (query.allowed !== undefined) add('allowed = ?', query.allowed);
    if (query.since !== undefined) add('decided_at >= ?::timestamptz', query.since);
    if (query.until !== undefined) add('decided_at < ?::timestamptz', query.until);
    if (query.requester !== undefined) add('requester = ?', query.requester);
    if (query.after !== undefined) add(query.newestFirst ? 'id < ?::bigint' : 'id > ?::bigint', query.after);
    const limit = Math.max(1, Math.min(1000, Math.floor(query.limit)));
    const { rows } = await this.pool.query<DecisionRow>(
      `SELECT ${DECISION_COLUMNS} FROM admission_decisions WHERE ${conditions.join(' AND ')}
        ORDER BY admission_decisions.id ${query.newestFirst ? 'DESC' : 'ASC'} LIMIT ${limit + 1}`,
      params,
    );
    const items = rows.slice(0, limit).map((row) => decisionViewOf(namespace, row));
    const last = items[items.length - 1];
    return rows.length > limit && last ? { items, next: last.id } : { items };
  }

  /** One decision of the log, with its explanation; undefined when the namespace has no such id. */
  async getDecision(namespace: string, id: string): Promise<DecisionView | undefined> {
    const { rows } = await this.pool.query<DecisionRow>(`SELECT ${DECISION_COLUMNS} FROM admission_decisions WHERE namespace = $1 AND id = $2::bigint`, [namespace, id]);
    return rows[0] && decisionViewOf(namespace, rows[0]);
  }

  async readEvents(namespace: string, page: { readonly after?: string; readonly limit: number }): Promise<Page<EventView>> {
    const limit = Math.max(1, Math.min(1000, Math.floor(page.limit)));
    const { rows } = await this.pool.query<EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM ledger_events WHERE namespace = $1 AND position > $2::bigint ORDER BY ledger_events.position LIMIT ${limit + 1}`,
      [namespace, page.after ?? '0'],
    );
    const items = rows.slice(0, limit).map(eventView);
    const last = items[items.length - 1];
    return rows.length > limit && last ? { items, next: last.position } : { items };
  }

  private async eventsAt(namespace: string, versions: readonly number[]): Promise<EventView[]> {
    const { rows } = await this.pool.query<EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM ledger_events WHERE namespace = $1 AND version = ANY($2::bigint[]) ORDER BY ledger_events.version`,
      [namespace, versions],
    );
    return rows.map(eventView);
  }
}

// -------------------------------------------------------------------- helpers

interface EventRow {
  position: string;
  version: string;
  type: string;
  recorded_at: Date;
  actor: string;
  on_behalf_of: string | null;
  request_id: string | null;
  data: unknown;
}

const EVENT_COLUMNS = 'position::text AS position, version, type, recorded_at, actor, on_behalf_of, request_id, data';

function eventView(row: EventRow): EventView {
  return {
    position: row.position,
    version: Number(row.version),
    type: row.type,
    time: row.recorded_at.toISOString(),
    actor: row.actor,
    ...(row.on_behalf_of === null ? {} : { onBehalfOf: row.on_behalf_of }),
    ...(row.request_id === null ? {} : { requestId: row.request_id }),
    data: row.data,
  };
}

function denialJson(denial: QuotaDenial): DenialJson {
  switch (denial.kind) {
    case 'Exceeded': {
      const exceeded = denial.resources.map((r) => ({
        resource: r.resource,
        requested: r.requested.canonical(),
        ...(r.used ? { used: r.used.canonical() } : {}),
        hard: r.hard.canonical(),
      }));
      const first = exceeded[0];
      return { kind: denial.kind, quota: denial.quota, ...(first ?? {}), exceeded };
    }
    case 'MustSpecify':
    case 'StatusUnknown':
      return { kind: denial.kind, quota: denial.quota, resources: denial.resources };
    case 'NegativeUsage':
    case 'InsufficientQuotaToConsume':
      return { kind: denial.kind, resources: denial.resources };
    case 'InsufficientQuotaToMatchScopes':
      return { kind: denial.kind, resources: denial.scopes.map((s) => s.scopeName) };
    case 'OldObjectMissing':
      return { kind: denial.kind };
  }
}

function quotaView(namespace: string, tx: NamespaceTx, name: string): QuotaView {
  const quota = tx.current.quotas.get(name);
  if (!quota) throw notFound('resourcequotas', name);
  return {
    namespace,
    definition: quota.definition,
    version: quota.version,
    createdAt: iso(quota.createdAt),
    updatedAt: iso(quota.updatedAt),
    hard: Resources.canonicalResourceList(quota.hard),
    used: Resources.canonicalResourceList(tx.current.used.get(name) ?? Resources.EMPTY),
  };
}

function quotaViewOf(namespace: string, entry: HeadJson['quotas'][number]): QuotaView {
  const quota = quotaStateOf(entry);
  return {
    namespace,
    definition: entry.definition,
    version: entry.version,
    createdAt: iso(entry.createdAt),
    updatedAt: iso(entry.updatedAt),
    hard: Resources.canonicalResourceList(quota.hard),
    used: entry.used,
  };
}

function limitRangeView(namespace: string, tx: NamespaceTx, name: string): LimitRangeView {
  const lr = tx.current.limitRanges.get(name);
  if (!lr) throw notFound('limitranges', name);
  return { namespace, definition: lr.definition, version: lr.version, createdAt: iso(lr.createdAt), updatedAt: iso(lr.updatedAt) };
}

function limitRangeViewOf(namespace: string, entry: HeadJson['limitRanges'][number]): LimitRangeView {
  return { namespace, definition: entry.definition, version: entry.version, createdAt: iso(entry.createdAt), updatedAt: iso(entry.updatedAt) };
}

function canonicalQuotaSpec(spec: QuotaDefinition['spec']): QuotaDefinition['spec'] {
  return spec.hard ? { ...spec, hard: Resources.canonicalResourceList(Resources.parseResourceList(spec.hard, 'spec.hard')) } : spec;
}

/** Users set labels and annotations; uid and creationTimestamp are the ledger's. */
function withoutSystemFields(metadata: QuotaDefinition['metadata']): QuotaDefinition['metadata'] {
  const { uid: _uid, creationTimestamp: _created, ...rest } = metadata ?? {};
  return rest;
}

function checkExpectedVersion(resource: string, name: string, current: number | undefined, expected: number | undefined): void {
  if (expected === undefined) return;
  if (current === undefined) {
    throw new LedgerError(
      'Conflict',
      `Operation cannot be fulfilled on ${resource} "${name}": the object does not exist; remove metadata.resourceVersion to create it`,
      { kind: resource, name },
    );
  }
  if (current !== expected) {
    throw new LedgerError(
      'Conflict',
      `Operation cannot be fulfilled on ${resource} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
      { kind: resource, name },
    );
  }
}

/** A new definition in a namespace that holds as many as it may already: 403, nothing written. */
function checkRoom(resource: string, kinds: string, name: string, namespace: string, count: number, max: number, variable: string): void {
  if (count < max) return;
  throw new LedgerError('Forbidden', `${resource} "${name}" is forbidden: namespace "${namespace}" already has ${count} ${kinds}, the most it may have (${variable}=${max})`, {
    kind: resource,
    name,
  });
}

function writeMeta(options: WriteOptions): { actor: string; requestId?: string } {
  return { actor: options.actor, ...(options.requestId === undefined ? {} : { requestId: options.requestId }) };
}

/** The answer to an idempotency key sent again with a different request: 409, nothing decided or written. */
function keyReused(namespace: string, requestKey: string, dryRun: boolean): AdmissionResult {
  const [kind, key] = requestKey.startsWith('review:') ? ['the AdmissionReview uid', requestKey.slice(7)] : ['the requestId', requestKey.slice(requestKey.indexOf(':') + 1)];
  return {
    allowed: false,
    code: 409,
    dryRun,
    message: `${kind} ${JSON.stringify(key)} was already used in namespace "${namespace}" for a different request; a new request needs a new ${kind === 'the requestId' ? 'requestId' : 'uid'}`,
  };
}

function notFound(resource: string, name: string): LedgerError {
  return new LedgerError('NotFound', `${resource} "${name}" not found`, { kind: resource, name });
}

function namespaceNotFound(namespace: string): LedgerError {
  return new LedgerError('NamespaceNotFound', `namespaces "${namespace}" not found`, { kind: 'namespaces', name: namespace });
}

function expired(id: string, record: ReservationRecord): LedgerError {
  const at = record.json.expiresAt === undefined ? '' : ` at ${iso(record.json.expiresAt)}`;
  return new LedgerError('Expired', `reservation "${id}" expired${at} before it was committed and has been released; reserve again`, {
    kind: 'reservations',
    name: id,
  });
}

export type { LedgerEvent };

interface DefinitionJson {
  readonly name: string;
  readonly spec: Record<string, unknown>;
}

/**
 * What a change changed: for a quota, the hard resources whose limit differs (plus `scopes`
 * or `scopeSelector` when those changed); for a limit range, the limit types that differ.
 */
export function changedKeys(kind: 'quota' | 'limitRange', before: Record<string, unknown> | undefined, after: Record<string, unknown> | undefined): string[] {
  if (kind === 'quota') {
    const hardBefore = (before?.['hard'] ?? {}) as Record<string, string>;
    const hardAfter = (after?.['hard'] ?? {}) as Record<string, string>;
    const names = [...new Set([...Object.keys(hardBefore), ...Object.keys(hardAfter)])].sort();
    const changed = names.filter((n) => hardBefore[n] !== hardAfter[n]);
    for (const field of ['scopes', 'scopeSelector']) {
      if (JSON.stringify(before?.[field] ?? null) !== JSON.stringify(after?.[field] ?? null)) changed.push(field);
    }
    return changed;
  }
  const byType = (spec: Record<string, unknown> | undefined) =>
    new Map(((spec?.['limits'] ?? []) as { type: string }[]).map((l) => [l.type, JSON.stringify(l)] as const));
  const a = byType(before);
  const b = byType(after);
  return [...new Set([...a.keys(), ...b.keys()])].sort().filter((t) => a.get(t) !== b.get(t));
}

const DECISION_COLUMNS = 'id::text AS id, decided_at, source, request_key, operation, resource, kind, name, object_uid, requester, on_behalf_of, dry_run, allowed, result';

interface DecisionRow {
  id: string;
  decided_at: Date;
  source: DecisionView['source'];
  request_key: string | null;
  operation: string;
  resource: string;
  kind: string | null;
  name: string | null;
  object_uid: string | null;
  requester: string;
  on_behalf_of: string | null;
  dry_run: boolean;
  allowed: boolean;
  result: AdmissionResult;
}

function decisionViewOf(namespace: string, r: DecisionRow): DecisionView {
  return {
    id: r.id,
    namespace,
    time: r.decided_at.toISOString(),
    source: r.source,
    ...(r.request_key === null ? {} : { requestKey: r.request_key }),
    operation: r.operation,
    resource: r.resource,
    ...(r.kind === null ? {} : { kind: r.kind }),
    ...(r.name === null ? {} : { name: r.name }),
    ...(r.object_uid === null ? {} : { objectUid: r.object_uid }),
    requester: r.requester,
    ...(r.on_behalf_of === null ? {} : { onBehalfOf: r.on_behalf_of }),
    dryRun: r.dry_run,
    allowed: r.allowed,
    result: r.result,
  };
}
