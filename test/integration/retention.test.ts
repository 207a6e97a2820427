import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fold, Resources, type Pod, type RecordedEvent } from '@quota/domain';
import {
  archiveLedger,
  buildDataSourceOptions,
  ClusterWriter,
  ensureLedgerPartitions,
  horizonState,
  isBeforeHorizon,
  retentionHorizon,
  runMigrationsLocked,
  SharedUsageQueries,
  UsageProjection,
  type AdmitCommand,
  type ArchivedEvent,
} from '@quota/ledger';
import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../../migrations/index.js';
import { Ledger } from '../support/ledger.js';
import { createMigratedDatabase, createTestDatabase, TEST_PG_ADMIN_URL, type TestDatabase } from '../support/database.js';

/**
 * Retention (migrations/1795900001000): ledger_events partitioned by month, the
 * partitions made ahead, the archive path, and the migration itself on a ledger with history.
 */

type Db = TestDatabase & { dataSource: DataSource };

const insertAt = (ds: DataSource, namespace: string, version: number, at: string): Promise<{ position: string; partition: string }[]> =>
  ds.query(
    `INSERT INTO ledger_events (namespace, version, type, schema_version, data, actor, recorded_at) VALUES ($1, $2, 'Reserved', 1, '{"n": 1}', 'test', $3)
     RETURNING position::text AS position, tableoid::regclass::text AS partition`,
    [namespace, version, at],
  );

const partitionsOf = async (ds: DataSource): Promise<string[]> =>
  ((await ds.query(`SELECT partition FROM ledger_event_partitions ORDER BY range_start`)) as { partition: string }[]).map(
    (r) => r.partition,
  );

/** The UTC month `offset` months from the database's current one, as its partition's suffix and first instant. */
async function monthOf(ds: DataSource, offset: number): Promise<{ suffix: string; start: string; mid: string }> {
  const [row] = (await ds.query(
    `SELECT to_char(m, 'YYYYMM') AS suffix, to_char(m, 'YYYY-MM-DD"T"00:00:00"Z"') AS start, to_char(m + interval '14 days', 'YYYY-MM-DD"T"12:00:00"Z"') AS mid
       FROM (SELECT date_trunc('month', now() AT TIME ZONE 'UTC') + make_interval(months => $1) AS m) AS x`,
    [offset],
  )) as { suffix: string; start: string; mid: string }[];
  if (!row) throw new Error('no month');
  return row;
}

/** Every row of a table of events as text, column by column (recorded_at at full precision), by position. */
const allRowsSql = (table: string): string =>
  `SELECT position::text, namespace, version::text, type, schema_version::text, data::text, request_id, actor,
          to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS recorded_at, transaction_id::text, on_behalf_of
     FROM ${table} AS e ORDER BY e.position`;

const allRows = (ds: DataSource): Promise<Record<string, string | null>[]> => ds.query(allRowsSql('ledger_events'));

const indexesOf = (ds: DataSource): Promise<{ indexname: string; indexdef: string }[]> =>
  ds.query(`SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'ledger_events' ORDER BY indexname`);

/** The README's restore of an archive's lines (loaded into archive_lines) into a migrated database's ledger. */
const RESTORE_SQL = `
  INSERT INTO ledger_events (position, namespace, version, type, schema_version, data, request_id, actor, on_behalf_of, recorded_at, transaction_id)
  OVERRIDING SYSTEM VALUE
  SELECT (line->>'position')::bigint, line->>'namespace', (line->>'version')::bigint, line->>'type', (line->>'schemaVersion')::smallint,
         line->'data', line->>'requestId', line->>'actor', line->>'onBehalfOf', (line->>'time')::timestamptz, (line->>'transactionId')::xid8
    FROM archive_lines ORDER BY (line->>'position')::bigint`;

/** The README's head rows of a read-only audit database: the API answers a namespace it has a head for. */
const RESTORE_HEADS_SQL = `
  INSERT INTO namespace_heads (namespace, version, state)
  SELECT namespace, max(version), '{"quotas": [], "limitRanges": [], "releasedCount": 0}' FROM ledger_events
   WHERE position('/' IN namespace) = 0 GROUP BY namespace`;

async function refusesRewrites(ds: DataSource, table = 'ledger_events'): Promise<void> {
  await expect(ds.query(`UPDATE ${table} SET actor = 'x'`)).rejects.toThrow(/append-only: UPDATE/);
  await expect(ds.query(`DELETE FROM ${table}`)).rejects.toThrow(/append-only: DELETE/);
  await expect(ds.query(`TRUNCATE ${table}`)).rejects.toThrow(/append-only: TRUNCATE/);
}

describe('ledger_events partitioned by month', () => {
  let db: Db;
  beforeAll(async () => {
    db = await createMigratedDatabase('qlpart');
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('has this month and the next two as partitions, and sends each event to its month', async () => {
    const months = await Promise.all([0, 1, 2].map((offset) => monthOf(db.dataSource, offset)));
    expect(await partitionsOf(db.dataSource)).toEqual(months.map((m) => `ledger_events_p${m.suffix}`));
    for (const [i, month] of months.entries()) {
      const [row] = await insertAt(db.dataSource, 'routed', i + 1, month.mid);
      expect(row?.partition).toBe(`ledger_events_p${month.suffix}`);
    }
    const [now] = await db.dataSource.query(
      `INSERT INTO ledger_events (namespace, version, type, schema_version, data, actor) VALUES ('routed', 4, 'Reserved', 1, '{}', 'test') RETURNING tableoid::regclass::text AS partition`,
    );
    expect(now.partition).toBe(`ledger_events_p${months[0]?.suffix}`);
  });

  it('keeps an event far in the future or the past in DEFAULT, and refuses nothing for want of a partition', async () => {
    const rows = [
      ...(await insertAt(db.dataSource, 'far', 1, '2199-05-01T00:00:00Z')),
      ...(await insertAt(db.dataSource, 'far', 2, '1999-01-01T00:00:00Z')),
    ];
    expect(rows.map((r) => r.partition)).toEqual(['ledger_events_default', 'ledger_events_default']);
    expect(BigInt(rows[1]?.position ?? 0)).toBeGreaterThan(BigInt(rows[0]?.position ?? 0));
  });

  it('refuses a second event at a stream version within a partition, under a name the write path reads as a lost race', async () => {
    const month = await monthOf(db.dataSource, 0);
    await insertAt(db.dataSource, 'twice', 1, month.mid);
    await expect(insertAt(db.dataSource, 'twice', 1, month.start)).rejects.toMatchObject({
      code: '23505',
      constraint: `ledger_events_stream_version_p${month.suffix}`,
    });
  });

  it('keeps refusing UPDATE, DELETE and TRUNCATE, of the ledger and of each partition by name', async () => {
    await refusesRewrites(db.dataSource);
    for (const partition of [...(await partitionsOf(db.dataSource)), 'ledger_events_default'])
      await refusesRewrites(db.dataSource, partition);
  });

  it('makes the months ahead even when DEFAULT holds their rows, moving those rows to them with their positions', async () => {
    const ds = db.dataSource;
    const [next, afterNext] = await Promise.all([monthOf(ds, 1), monthOf(ds, 2)]);
    // Two months ahead missing (as if nothing had made them), and events of theirs arrived meanwhile.
    for (const month of [next, afterNext]) {
      await ds.query(`ALTER TABLE ledger_events DETACH PARTITION ledger_events_p${month?.suffix}`);
      await ds.query(`DROP TABLE ledger_events_p${month?.suffix}`);
    }
    const waiting = [...(await insertAt(ds, 'early', 1, next?.mid ?? '')), ...(await insertAt(ds, 'early', 2, afterNext?.mid ?? ''))];
    expect(waiting.map((r) => r.partition)).toEqual(['ledger_events_default', 'ledger_events_default']);
    const before = await allRows(ds);

    expect(await ensureLedgerPartitions(ds)).toEqual([`ledger_events_p${next?.suffix}`, `ledger_events_p${afterNext?.suffix}`]);
    expect(await ensureLedgerPartitions(ds)).toEqual([]);
    const placed = (await ds.query(
      `SELECT position::text AS position, tableoid::regclass::text AS partition FROM ledger_events WHERE namespace IN ('early', 'far') ORDER BY ledger_events.position`,
    )) as {
      position: string;
      partition: string;
    }[];
    expect(placed).toEqual([
      { position: expect.any(String), partition: 'ledger_events_default' },
      { position: expect.any(String), partition: 'ledger_events_default' },
      { position: waiting[0]?.position, partition: `ledger_events_p${next?.suffix}` },
      { position: waiting[1]?.position, partition: `ledger_events_p${afterNext?.suffix}` },
    ]);
    expect(await allRows(ds)).toEqual(before);
    // The DEFAULT made again carries what every partition carries.
    await refusesRewrites(ds, 'ledger_events_default');
    await expect(insertAt(ds, 'far', 1, '2199-06-01T00:00:00Z')).rejects.toMatchObject({
      constraint: 'ledger_events_stream_version_default',
    });
  });

  it('makes the months missed since the newest partition when their rows wait in DEFAULT, and leaves older rows there', async () => {
    const ds = db.dataSource;
    const [old, gap, older] = await Promise.all([monthOf(ds, -4), monthOf(ds, -2), monthOf(ds, -7)]);
    await ds.query(`SELECT ledger_events_add_partition($1)`, [old?.start]);
    const [gapRow] = await insertAt(ds, 'paused', 1, gap?.mid ?? '');
    const [olderRow] = await insertAt(ds, 'paused', 2, older?.mid ?? '');
    expect([gapRow?.partition, olderRow?.partition]).toEqual(['ledger_events_default', 'ledger_events_default']);

    expect(await ensureLedgerPartitions(ds)).toEqual([`ledger_events_p${gap?.suffix}`]);
    const placed = (await ds.query(
      `SELECT version::int AS version, tableoid::regclass::text AS partition FROM ledger_events WHERE namespace = 'paused' ORDER BY version`,
    )) as {
      version: number;
      partition: string;
    }[];
    expect(placed).toEqual([
      { version: 1, partition: `ledger_events_p${gap?.suffix}` },
      { version: 2, partition: 'ledger_events_default' },
    ]);
  });
});

const pod = (name: string, cpu = '100m'): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, uid: `uid-${name}` },
  spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu }, limits: { cpu } } }] },
});

const admitPod = (namespace: string, object: Pod): AdmitCommand => ({
  namespace,
  source: 'webhook',
  request: { operation: 'CREATE', groupResource: { group: '', resource: 'pods' }, namespace, name: object.metadata?.name ?? '', object },
  dryRun: false,
  requester: 'alice',
});

describe('archiving a month', () => {
  let db: Db;
  let directory: string;
  let now = Date.parse('2025-01-10T10:00:00Z');
  let ledger: Ledger;
  const JANUARY = 'ledger_events_p202501';
  const HORIZON = '2025-02-01T00:00:00.000Z';
  const JANUARY_INSTANTS = ['2025-01-10T10:00:03Z', '2025-01-10T10:00:05.5Z', '2025-01-20T00:00:00Z', '2025-01-31T23:59:59Z'];
  /** Usage at instants of January, read before the archive. */
  const januaryUsage = new Map<string, Record<string, Record<string, string>>>();
  /** A ClusterResourceQuota defined in January over "arch", never changed since: its stream is idle from the horizon on. */
  const BLUE = 'clusterresourcequotas/blue';
  const SHARED_INSTANTS = ['2025-02-01T00:00:00Z', '2025-02-03T10:00:01Z', '2025-02-25T00:00:00Z', '2025-03-06T00:00:00Z'];
  /** The shared quota's usage at those instants, read before the archive. */
  const sharedBefore = new Map<string, unknown>();

  beforeAll(async () => {
    db = await createMigratedDatabase('qlarchive');
    directory = await mkdtemp(path.join(tmpdir(), 'ql-archive-'));
    ledger = new Ledger(db.dataSource, { clock: () => (now += 1000), retryBaseMs: 1 });
  });
  afterAll(async () => {
    await ledger?.close();
    await db?.drop();
    if (directory) await rm(directory, { recursive: true, force: true });
  });

  const projectAll = async (): Promise<void> => {
    const projection = new UsageProjection(db.dataSource);
    await projection.catchUp();
  };
  const tableExists = async (name: string): Promise<boolean> =>
    ((await db.dataSource.query(`SELECT to_regclass($1) IS NOT NULL AS present`, [name])) as { present: boolean }[])[0]?.present === true;

  /** Usage per quota at an instant, by the fold of the retained events from the stream's horizon state (what usage?at= must answer from the horizon on). */
  async function usageFromHorizon(namespace: string, at: string): Promise<Record<string, Record<string, string>>> {
    const [target] = (await db.dataSource.query(
      `SELECT version::int AS version FROM ledger_events WHERE namespace = $1 AND recorded_at <= $2::timestamptz ORDER BY recorded_at DESC, version DESC LIMIT 1`,
      [namespace, at],
    )) as { version: number }[];
    const base = await horizonState(db.dataSource, namespace, target?.version);
    const version = target?.version ?? base?.version ?? 0;
    const rows = (await db.dataSource.query(
      `SELECT version::int AS version, type, data, (extract(epoch from recorded_at) * 1000)::float8 AS at_ms FROM ledger_events
        WHERE namespace = $1 AND version > $2 AND version <= $3 ORDER BY version`,
      [namespace, base?.version ?? 0, version],
    )) as { version: number; type: string; data: unknown; at_ms: number }[];
    const state = fold(
      rows.map((r) => ({ type: r.type, data: r.data, version: r.version, at: Math.floor(r.at_ms) }) as RecordedEvent),
      base?.state,
    );
    return Object.fromEntries(
      [...state.quotas.keys()].sort().map((name) => [name, Resources.canonicalResourceList(state.used.get(name) ?? Resources.EMPTY)]),
    );
  }

  const usageNow = async (namespace: string, at: string): Promise<Record<string, Record<string, string>>> => {
    const usage = await ledger.usageAt(namespace, at);
    return Object.fromEntries((usage?.quotas ?? []).map((q) => [q.name, q.used]).sort());
  };

  it('records a month of history, its reservations released after it (retention-live.test.ts archives months with live ones)', async () => {
    await db.dataSource.query(
      `SELECT ledger_events_add_partition('2025-01-01T00:00:00Z'), ledger_events_add_partition('2025-02-01T00:00:00Z')`,
    );
    await ledger.putQuota('arch', { name: 'compute', spec: { hard: { pods: '10', 'requests.cpu': '2' } } }, { actor: 'admin' });
    const cluster = new ClusterWriter(db.dataSource, { clock: () => (now += 1000) });
    await cluster.putNamespace({ name: 'arch', metadata: { labels: { team: 'blue' } } }, { actor: 'admin' });
    await cluster.putSharedQuota(
      {
        ref: { kind: 'ClusterResourceQuota', name: 'blue' },
        spec: { hard: { pods: '10' } },
        selector: { labels: { matchLabels: { team: 'blue' } } },
      },
      { actor: 'admin' },
    );
    await cluster.close();
    await ledger.putQuota('idle', { name: 'compute', spec: { hard: { pods: '3' } } }, { actor: 'admin' });
    // Never written to again: its usage from the horizon on comes from its horizon state alone.
    await ledger.putQuota('quiet', { name: 'compute', spec: { hard: { pods: '5' } } }, { actor: 'admin' });
    const a1 = await ledger.admit(admitPod('arch', pod('a1', '300m')));
    const a2 = await ledger.admit(admitPod('arch', pod('a2', '200m')));
    await ledger.admit(admitPod('idle', pod('i1')));
    now = Date.parse('2025-02-03T10:00:00Z');
    await ledger.release('arch', a1.result.reservationId ?? '', { actor: 'ops' });
    await projectAll();
    now = Date.parse('2025-02-04T10:00:00Z');
    await ledger.release('arch', a2.result.reservationId ?? '', { actor: 'ops' });
    await ledger.release('idle', (await ledger.audit.listReservations('idle', { limit: 10 })).items[0]?.id ?? '', { actor: 'ops' });
    await ledger.admit(admitPod('arch', pod('a3', '500m')));
    now = Date.parse('2025-02-20T10:00:00Z');
    await ledger.admit(admitPod('arch', pod('a4', '100m')));
    now = Date.parse('2025-03-05T10:00:00Z');
    await ledger.putQuota('arch', { name: 'compute', spec: { hard: { pods: '20', 'requests.cpu': '4' } } }, { actor: 'admin' });
  });

  it('refuses a month the projection has not applied', async () => {
    await projectAll();
    // A writer whose clock was still in January.
    now = Date.parse('2025-01-31T23:00:00Z');
    await ledger.putQuota('late', { name: 'compute', spec: { hard: { pods: '1' } } }, { actor: 'admin' });
    // A shared quota's stream (never projected, never folded) with a number no JavaScript number holds.
    await db.dataSource.query(
      `INSERT INTO ledger_events (namespace, version, type, schema_version, data, actor, recorded_at)
       VALUES ('clusterresourcequotas/big', 1, 'SharedQuotaDefined', 1, '{"n": 123456789012345678901234567890}', 'admin', '2025-01-31T23:30:00Z')`,
    );
    now = Date.parse('2025-03-05T12:00:00Z');
    await expect(archiveLedger(db.dataSource, { before: HORIZON, directory })).rejects.toThrow(
      /projection has not applied all of it \(1 namespaces behind, e\.g\. "late"/,
    );
    await projectAll();
    const shared = new SharedUsageQueries(db.dataSource);
    for (const at of SHARED_INSTANTS) sharedBefore.set(at, await shared.usageAt(BLUE, at));
    // What the checks after the archive compare with: defined, and charged by arch's pods.
    expect(sharedBefore.get('2025-02-03T10:00:01Z')).toMatchObject({ defined: true, hard: { pods: '10' }, used: { pods: '1' } });
  });

  it('exports exactly the partition’s rows as NDJSON, detaches it and records the horizon; the ledger stays append-only', async () => {
    const ds = db.dataSource;
    const instants = [
      '2025-02-01T00:00:00Z',
      '2025-02-03T10:00:01Z',
      '2025-02-04T12:00:00Z',
      '2025-02-25T00:00:00Z',
      '2025-03-06T00:00:00Z',
      '2026-01-01T00:00:00Z',
    ];
    const expected = new Map<string, Record<string, Record<string, string>>>();
    const namespaces = ['arch', 'idle', 'quiet', 'late'];
    for (const namespace of namespaces) for (const at of instants) expected.set(`${namespace}@${at}`, await usageNow(namespace, at));
    for (const namespace of namespaces)
      for (const at of JANUARY_INSTANTS) januaryUsage.set(`${namespace}@${at}`, await usageNow(namespace, at));
    const january = (await ds.query(
      `SELECT position::text AS position, namespace, version::int AS version, type, schema_version AS "schemaVersion",
              to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS time, actor, on_behalf_of, request_id, data, transaction_id::text AS "transactionId"
         FROM ${JANUARY} AS e ORDER BY e.position`,
    )) as (ArchivedEvent & { on_behalf_of: string | null; request_id: string | null })[];
    expect(january.length).toBeGreaterThan(4);
    expect(await retentionHorizon(ds)).toBeUndefined();

    const dry = await archiveLedger(ds, { before: HORIZON, directory, dryRun: true });
    expect(dry.planned).toEqual([
      { partition: JANUARY, rangeStart: '2025-01-01T00:00:00.000Z', rangeEnd: HORIZON, events: january.length },
    ]);
    expect(await partitionsOf(ds)).toContain(JANUARY);

    const report = await archiveLedger(ds, { before: HORIZON, directory });
    expect(report.archived).toEqual([
      expect.objectContaining({
        partition: JANUARY,
        rangeEnd: HORIZON,
        events: january.length,
        file: path.join(directory, `${JANUARY}.ndjson`),
        streams: namespaces.length + 2,
      }),
    ]);
    expect(report.horizon).toBe(HORIZON);

    const lines = (await readFile(path.join(directory, `${JANUARY}.ndjson`), 'utf8')).split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.find((line) => line.includes('clusterresourcequotas/big'))).toMatch(
      /"data":\{"n": 123456789012345678901234567890\},"transactionId":"\d+"\}$/,
    );
    expect(lines.map((line) => JSON.parse(line) as ArchivedEvent)).toEqual(
      january.map(({ on_behalf_of, request_id, ...event }) => ({
        ...event,
        ...(on_behalf_of === null ? {} : { onBehalfOf: on_behalf_of }),
        ...(request_id === null ? {} : { requestId: request_id }),
      })),
    );

    expect(await partitionsOf(ds)).not.toContain(JANUARY);
    expect(Number((await ds.query(`SELECT count(*) FROM ledger_events WHERE recorded_at < $1`, [HORIZON]))[0].count)).toBe(0);
    expect(await ds.query(`SELECT partition, events::int AS events, detached_as, dropped_at FROM ledger_retention`)).toEqual([
      { partition: JANUARY, events: january.length, detached_as: `archived_${JANUARY}`, dropped_at: null },
    ]);
    expect(await retentionHorizon(ds)).toBe(HORIZON);
    expect(isBeforeHorizon('2025-01-31T23:59:59.999999Z', HORIZON)).toBe(true);
    expect(isBeforeHorizon(HORIZON, HORIZON)).toBe(false);

    // Nothing leaves the ledger row by row, and the detached table is as immutable until dropped.
    await refusesRewrites(ds);
    await refusesRewrites(ds, `archived_${JANUARY}`);
    // Appends go on: positions continue past the archived ones.
    now = Date.parse('2025-03-06T10:00:00Z');
    await ledger.admit(admitPod('arch', pod('a5', '100m')));
    const [last] = (await ds.query(`SELECT max(position)::text AS position FROM ledger_events`)) as { position: string }[];
    expect(BigInt(last?.position ?? 0)).toBeGreaterThan(BigInt(january.at(-1)?.position ?? 0));

    // Usage at any instant from the horizon on is what it was before the archive, for a busy
    // namespace and for those idle since January (a5 came after, in arch only).
    for (const namespace of namespaces) {
      for (const at of instants) {
        if (namespace === 'arch' && at === instants.at(-1)) continue;
        expect(await usageFromHorizon(namespace, at), `${namespace} at ${at}`).toEqual(expected.get(`${namespace}@${at}`));
        // And usage?at= answers it: from the read model of usage at every version, the target
        // being the horizon state's version for a namespace idle since before the horizon.
        expect(await usageNow(namespace, at), `usageAt of ${namespace} at ${at}`).toEqual(expected.get(`${namespace}@${at}`));
      }
      // Before the horizon: 410 Expired, naming the horizon, for an instant and for a series' start.
      await expect(ledger.usageAt(namespace, '2025-01-15T00:00:00Z')).rejects.toMatchObject({
        code: 'Archived',
        message: expect.stringContaining(HORIZON),
      });
      await expect(ledger.usageSeries(namespace, { since: '2025-01-15T00:00:00Z', until: HORIZON, points: 3 })).rejects.toMatchObject({
        code: 'Archived',
      });
    }
  });

  const NAMESPACES = ['arch', 'idle', 'quiet', 'late'];
  const RETAINED_INSTANTS = [
    HORIZON,
    '2025-02-03T10:00:01Z',
    '2025-02-04T12:00:00Z',
    '2025-02-25T00:00:00Z',
    '2025-03-06T00:00:00Z',
    '2025-03-06T10:00:01Z',
  ];
  const SERIES_RANGE = { since: HORIZON, until: '2025-03-06T10:00:01Z', points: 7 };

  /** What usage?at= and a series answer for every namespace from the horizon on (read while the projection has caught up). */
  async function retainedAnswers(): Promise<Map<string, unknown>> {
    const answers = new Map<string, unknown>();
    for (const namespace of NAMESPACES) {
      for (const at of RETAINED_INSTANTS) answers.set(`${namespace}@${at}`, await usageNow(namespace, at));
      answers.set(`${namespace} series`, (await ledger.usageSeries(namespace, SERIES_RANGE))?.points);
    }
    return answers;
  }

  it('reads a shared quota idle since before the horizon as before the archive (definition and members from their horizon states), and 410 before it', async () => {
    const shared = new SharedUsageQueries(db.dataSource);
    for (const at of SHARED_INSTANTS) expect(await shared.usageAt(BLUE, at), at).toEqual(sharedBefore.get(at));
    const series = await shared.usageSeries(BLUE, { since: HORIZON, until: '2025-03-06T00:00:00Z', points: 4 });
    expect(series?.points.map((p) => p.defined)).toEqual([true, true, true, true]);
    await expect(shared.usageAt(BLUE, '2025-01-20T00:00:00Z')).rejects.toMatchObject({
      code: 'Archived',
      message: expect.stringContaining(HORIZON),
    });
    await expect(shared.usageSeries(BLUE, { since: '2025-01-20T00:00:00Z', until: HORIZON, points: 3 })).rejects.toMatchObject({
      code: 'Archived',
    });
  });

  it('folds usage?at= and series from the horizon states while the projection has not reached them (no snapshot, no read model)', async () => {
    const expected = await retainedAnswers();
    expect(expected.get('arch@2025-02-03T10:00:01Z')).toEqual({ compute: { pods: '1', 'requests.cpu': '200m' } });
    // The projection emptied: every answer is a fold, which must start at the horizon state.
    await new UsageProjection(db.dataSource).reset();
    expect(await db.dataSource.query(`SELECT count(*)::int AS n FROM usage_snapshots`)).toEqual([{ n: 0 }]);
    expect(await retainedAnswers()).toEqual(expected);
  });

  it('rebuilds the projection after the archive, each namespace from its horizon state, in steps taken by fresh workers', async () => {
    const projection = new UsageProjection(db.dataSource);
    await projection.catchUp();
    const expected = await retainedAnswers();
    await projection.reset();
    // One event per step, each step a new worker (nothing remembered): a2, live at the horizon
    // (its Reserved event archived), is read back from the horizon state by the step after the
    // one that started arch there, when a2's release comes.
    let steps = 0;
    while ((await new UsageProjection(db.dataSource, { batchSize: 1 }).step(1, 'force')) > 0) steps++;
    expect(steps).toBeGreaterThan(3);
    expect(await retainedAnswers()).toEqual(expected);
    for (const namespace of NAMESPACES) {
      const head = await ledger.usage(namespace);
      const projected = await ledger.projectedUsage(namespace);
      expect(projected?.version, namespace).toBe(head?.version);
      expect(Object.fromEntries(projected?.used ?? []), namespace).toEqual(
        Object.fromEntries((head?.quotas ?? []).map((q) => [q.name, q.used])),
      );
    }
    const shared = new SharedUsageQueries(db.dataSource);
    for (const at of SHARED_INSTANTS) expect(await shared.usageAt(BLUE, at), at).toEqual(sharedBefore.get(at));
    // And it goes on from there: a new admission and a release are projected as usual.
    now = Date.parse('2025-03-07T10:00:00Z');
    const a6 = await ledger.admit(admitPod('arch', pod('a6', '100m')));
    await ledger.release('arch', a6.result.reservationId ?? '', { actor: 'ops' });
    await projectAll();
    expect((await ledger.projectedUsage('arch'))?.version).toBe((await ledger.usage('arch'))?.version);
  });

  it('restores into a separate database, where the archived month reads as it did (README, "Retention and archiving")', async () => {
    const audit = await createMigratedDatabase('qlaudit');
    try {
      const lines = (await readFile(path.join(directory, `${JANUARY}.ndjson`), 'utf8')).split('\n').filter((line) => line !== '');
      // What the README's psql recipe runs, with the lines as one parameter instead of \copy.
      await audit.dataSource.query(`SELECT ledger_events_add_partition('2025-01-01T00:00:00Z')`);
      await audit.dataSource.query(`CREATE TABLE archive_lines (line jsonb)`);
      await audit.dataSource.query(`INSERT INTO archive_lines SELECT unnest($1::jsonb[])`, [lines]);
      await audit.dataSource.query(RESTORE_SQL);
      await audit.dataSource.query(RESTORE_HEADS_SQL);
      const restored = await allRows(audit.dataSource);
      const archived = await db.dataSource.query(`SELECT * FROM (${allRowsSql(`archived_${JANUARY}`)}) AS a`);
      expect(restored).toEqual(archived);
      expect(januaryUsage.get('arch@2025-01-20T00:00:00Z')).toEqual({ compute: { pods: '2', 'requests.cpu': '500m' } });
      const usage = new Ledger(audit.dataSource);
      for (const [key, expected] of januaryUsage) {
        const [namespace, at] = key.split('@') as [string, string];
        const read = await usage.usageAt(namespace, at);
        expect(Object.fromEntries((read?.quotas ?? []).map((q) => [q.name, q.used]).sort()), key).toEqual(expected);
      }
      await usage.close();
    } finally {
      await audit.drop();
    }
  });

  it('migrates down no more once a month was archived', async () => {
    // Down to the first migration whose tables say what was archived, which refuses as the
    // partitioning does; those above it (an index) go, and come back after.
    let refused: Error | undefined;
    for (let undone = 0; !refused && undone < 5; undone++)
      refused = await db.dataSource.undoLastMigration().then(
        () => undefined,
        (error: Error) => error,
      );
    expect(refused?.message).toMatch(/were archived/);
    expect(await tableExists('ledger_event_partitions')).toBe(true);
    await db.dataSource.runMigrations();
  });

  it('drops the detached table only once its file reads back as recorded', async () => {
    const file = path.join(directory, `${JANUARY}.ndjson`);
    const original = await readFile(file, 'utf8');
    await writeFile(file, original.replace(/"actor":"admin"/, '"actor":"someone"'));
    await expect(archiveLedger(db.dataSource, { before: HORIZON, directory, drop: true })).rejects.toThrow(
      /is not dropped: .* holds \d+ lines \(sha256/,
    );
    expect(await tableExists(`archived_${JANUARY}`)).toBe(true);

    await writeFile(file, original);
    const report = await archiveLedger(db.dataSource, { before: HORIZON, directory, drop: true });
    expect(report).toMatchObject({ archived: [], dropped: [`archived_${JANUARY}`], horizon: HORIZON });
    expect(await tableExists(`archived_${JANUARY}`)).toBe(false);
    expect((await db.dataSource.query(`SELECT dropped_at FROM ledger_retention`))[0].dropped_at).toBeInstanceOf(Date);
  });

  it('never archives the month being written', async () => {
    await expect(archiveLedger(db.dataSource, { before: '2999-01-01T00:00:00Z', directory })).rejects.toThrow(
      /after the start of the current month/,
    );
  });
});

describe('the migration, on a ledger with history', () => {
  const at = MIGRATIONS.findIndex((m) => m.name === 'PartitionLedgerEvents1795900001000');
  const partitioning = MIGRATIONS[at];
  let database: TestDatabase;
  let dataSource: DataSource;
  const role = `ql_reader_${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    expect(partitioning?.name).toBe('PartitionLedgerEvents1795900001000');
    database = await createTestDatabase('qlpartmig');
    dataSource = await new DataSource({
      ...buildDataSourceOptions({ url: database.url, poolSize: 2 }),
      migrations: MIGRATIONS.slice(0, at),
    }).initialize();
    await runMigrationsLocked(dataSource);
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
    // Roles belong to the server, not the database.
    const admin = new pg.Client({ connectionString: TEST_PG_ADMIN_URL });
    await admin.connect();
    await admin.query(`DROP ROLE IF EXISTS ${role}`).finally(() => admin.end());
  });

  it('keeps every row and position, continues the identity, and goes down and up again', async () => {
    const plain = dataSource;
    for (const [namespace, version, at] of [
      ['hist-a', 1, '2025-03-02T08:00:00.123456Z'],
      ['hist-b', 1, '2025-03-31T23:59:59.999999Z'],
      ['hist-a', 2, '2025-04-01T00:00:00Z'],
      ['hist-a', 3, '2199-01-01T00:00:00Z'],
    ] as const) {
      await plain.query(
        `INSERT INTO ledger_events (namespace, version, type, schema_version, data, request_id, actor, on_behalf_of, recorded_at)
         VALUES ($1, $2, 'QuotaDefined', 1, '{"name": "q"}', $3, 'admin', 'kube:alice', $4)`,
        [namespace, version, `req-${version}`, at],
      );
    }
    await plain.query(
      `INSERT INTO ledger_events (namespace, version, type, schema_version, data, actor) VALUES ('hist-now', 1, 'Reserved', 1, '{}', 'test')`,
    );
    // A position drawn and never committed: the new table must not draw it again either.
    await plain
      .transaction(async (manager) => {
        await manager.query(
          `INSERT INTO ledger_events (namespace, version, type, schema_version, data, actor) VALUES ('hist-now', 2, 'Reserved', 1, '{}', 'test')`,
        );
        throw new Error('roll back');
      })
      .catch(() => undefined);
    await plain.query(`CREATE ROLE ${role}`);
    await plain.query(`GRANT SELECT ON ledger_events TO ${role}`);
    const before = await allRows(plain);
    const indexesBefore = await indexesOf(plain);
    await plain.destroy();

    dataSource = await new DataSource({
      ...buildDataSourceOptions({ url: database.url, poolSize: 2 }),
      migrations: MIGRATIONS.slice(0, at + 1),
    }).initialize();
    expect(await runMigrationsLocked(dataSource)).toEqual(['PartitionLedgerEvents1795900001000']);
    expect(await allRows(dataSource)).toEqual(before);
    const partitions = await partitionsOf(dataSource);
    expect(partitions.slice(0, 2)).toEqual(['ledger_events_p202503', 'ledger_events_p202504']);
    const [thisMonth] = await Promise.all([monthOf(dataSource, 0)]);
    expect(partitions).toContain(`ledger_events_p${thisMonth?.suffix}`);
    const placed = (await dataSource.query(
      `SELECT namespace, version::int AS version, tableoid::regclass::text AS partition FROM ledger_events WHERE namespace LIKE 'hist-_' ORDER BY ledger_events.position`,
    )) as {
      partition: string;
    }[];
    expect(placed.map((r) => r.partition)).toEqual([
      'ledger_events_p202503',
      'ledger_events_p202503',
      'ledger_events_p202504',
      'ledger_events_default',
    ]);
    const [{ relkind } = { relkind: undefined }] = (await dataSource.query(
      `SELECT relkind FROM pg_class WHERE oid = 'ledger_events'::regclass`,
    )) as { relkind: string }[];
    expect(relkind).toBe('p');
    const [{ allowed } = { allowed: undefined }] = (await dataSource.query(
      `SELECT has_table_privilege($1, 'ledger_events', 'SELECT') AS allowed`,
      [role],
    )) as { allowed: boolean }[];
    expect(allowed).toBe(true);

    const lastBefore = BigInt(before.at(-1)?.position ?? 0);
    const [next] = (await dataSource.query(
      `INSERT INTO ledger_events (namespace, version, type, schema_version, data, actor) VALUES ('hist-now', 2, 'Reserved', 1, '{}', 'test') RETURNING position::text AS position`,
    )) as { position: string }[];
    // The rolled-back insert drew lastBefore + 1.
    expect(BigInt(next?.position ?? 0)).toBe(lastBefore + 2n);
    await refusesRewrites(dataSource);

    const after = await allRows(dataSource);
    await dataSource.undoLastMigration();
    const [{ kind } = { kind: undefined }] = (await dataSource.query(
      `SELECT relkind AS kind FROM pg_class WHERE oid = 'ledger_events'::regclass`,
    )) as { kind: string }[];
    expect(kind).toBe('r');
    expect(await allRows(dataSource)).toEqual(after);
    expect(await dataSource.query(`SELECT to_regclass('ledger_retention') AS t, to_regclass('ledger_events_default') AS d`)).toEqual([
      { t: null, d: null },
    ]);
    // The indexes of the table as it was, under their names and definitions.
    expect(await indexesOf(dataSource)).toEqual(indexesBefore);
    expect(indexesBefore.map((i) => i.indexname)).toContain('ledger_events_stream_version');
    const [again] = (await dataSource.query(
      `INSERT INTO ledger_events (namespace, version, type, schema_version, data, actor) VALUES ('hist-now', 3, 'Reserved', 1, '{}', 'test') RETURNING position::text AS position`,
    )) as { position: string }[];
    expect(BigInt(again?.position ?? 0)).toBe(lastBefore + 3n);
    await expect(
      dataSource.query(
        `INSERT INTO ledger_events (namespace, version, type, schema_version, data, actor, recorded_at) VALUES ('hist-a', 1, 'Reserved', 1, '{}', 'x', '2030-01-01')`,
      ),
    ).rejects.toMatchObject({ constraint: 'ledger_events_stream_version' });
    await refusesRewrites(dataSource);
    const [{ kept } = { kept: undefined }] = (await dataSource.query(`SELECT has_table_privilege($1, 'ledger_events', 'SELECT') AS kept`, [
      role,
    ])) as { kept: boolean }[];
    expect(kept).toBe(true);

    expect(await runMigrationsLocked(dataSource)).toEqual(['PartitionLedgerEvents1795900001000']);
    expect((await allRows(dataSource)).length).toBe(after.length + 1);
  });
});
