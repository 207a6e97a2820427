import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Retention (issue 20): `ledger_events` partitioned by month of `recorded_at` (UTC), so that old
 * months can leave the ledger whole — exported as NDJSON, then detached — instead of row by row,
 * which the append-only triggers refuse and always will (`npm run ledger:archive`, README
 * "Retention and archiving").
 *
 * - Monthly RANGE partitions `ledger_events_pYYYYMM` and a DEFAULT partition, so an insert never
 *   fails for want of a partition (an injected test clock, a clock that jumped): such rows wait
 *   in DEFAULT until their month gets a partition.
 * - `ledger_events_make_partitions(months_ahead)` makes the current month's partition and the
 *   next ones (`npm run migrate` and the projection worker call it; one is made two months before
 *   it is needed), and, after a pause longer than that, the months since the newest partition
 *   whose rows wait in DEFAULT. Attaching a month whose rows already sit in DEFAULT is refused by
 *   PostgreSQL, so then it detaches DEFAULT, makes the months, puts back an empty DEFAULT and
 *   inserts the old DEFAULT's rows again through the parent (they land in their months;
 *   positions kept), all in its transaction under the table's lock. Usually DEFAULT is empty and
 *   a month is made with CREATE TABLE and ATTACH PARTITION, which admissions' inserts do not
 *   wait for (it locks the parent only against other DDL); reads of the whole ledger wait while
 *   it checks DEFAULT.
 * - Uniqueness of `(namespace, version)`: a unique index on a partitioned table must include the
 *   partition key, and `(namespace, version, recorded_at)` would refuse nothing a race produces
 *   (two writers' clocks differ). Each partition gets its own unique index on
 *   `(namespace, version)`, `ledger_events_stream_version_<partition>`: it refuses a second event
 *   at a version within a month (the error names that index; postgres-errors.ts reads the prefix
 *   as a lost race), but not across two months. It was never the guard the write path relies on:
 *   every writer of ledger_events — admissions, commits, releases, reconciles, quota and limit
 *   range definitions (ledger-commands.ts through group-commit.ts), Namespace objects and shared
 *   quotas (cluster-writer.ts) — writes through flushWorks' one statement, whose events are inserted
 *   only for streams whose head (namespace_heads, or shared_quota_heads' revision) the same
 *   statement moved from the version read (flush-statement.ts HEAD_MOVED), under SERIALIZABLE.
 *   Nothing else inserts events.
 * - The primary key is `(position, recorded_at)`: positions stay unique by their identity
 *   sequence, which continues where the old table's stopped.
 * - The other indexes are built again as they were, on every partition. Reads by
 *   `(namespace, version)` now probe each partition's index (one per retained month).
 * - The append-only triggers: UPDATE and DELETE per row on the parent (PostgreSQL clones them
 *   to each partition, and removes the clone when a partition is detached), TRUNCATE on the
 *   parent and on each partition (statement triggers are not cloned, and TRUNCATE of a partition
 *   by name would otherwise empty it).
 * - `ledger_retention` records each archived partition (range, row count, file, digest, when
 *   and by whom; `max(range_end)` is the retention horizon), and `ledger_horizon_states` the
 *   state of each stream at its last archived event, so usage at any instant from the horizon
 *   on stays exact (libs/ledger/src/retention.ts).
 *
 * The rows are copied into the new table under its lock: admissions wait for the copy, once.
 * `down` copies them back; it refuses once a partition was archived (the old table cannot say
 * that its history is incomplete).
 */
export class PartitionLedgerEvents1795900001000 implements MigrationInterface {
  readonly name = 'PartitionLedgerEvents1795900001000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // Every index but the keys is built again as it is (whatever earlier migrations made).
    const indexes = await secondaryIndexes(queryRunner, 'ledger_events', ['ledger_events_pkey', 'ledger_events_stream_version']);
    for (const index of indexes) await queryRunner.query(`DROP INDEX ${quote(index.name)}`);
    await queryRunner.query(`ALTER TABLE ledger_events DROP CONSTRAINT ledger_events_stream_version`);
    await queryRunner.query(`ALTER TABLE ledger_events DROP CONSTRAINT ledger_events_pkey`);
    await queryRunner.query(`ALTER TABLE ledger_events RENAME TO ledger_events_unpartitioned`);
    await queryRunner.query(`ALTER SEQUENCE ledger_events_position_seq RENAME TO ledger_events_unpartitioned_position_seq`);

    await queryRunner.query(`
      CREATE TABLE ledger_events (
        position        bigint      GENERATED ALWAYS AS IDENTITY,
        namespace       text        NOT NULL CHECK (namespace <> ''),
        version         bigint      NOT NULL CHECK (version > 0),
        type            text        NOT NULL,
        schema_version  smallint    NOT NULL CHECK (schema_version > 0),
        data            jsonb       NOT NULL,
        request_id      text,
        actor           text        NOT NULL,
        recorded_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
        transaction_id  xid8        NOT NULL DEFAULT pg_current_xact_id(),
        on_behalf_of    text,
        CONSTRAINT ledger_events_pkey PRIMARY KEY (position, recorded_at)
      ) PARTITION BY RANGE (recorded_at)`);
    await appendOnly(queryRunner);
    await queryRunner.query(PARTITIONS_VIEW);
    for (const sql of PARTITION_FUNCTIONS) await queryRunner.query(sql);
    await queryRunner.query(`SELECT ledger_events_add_default()`);

    // A partition for every month that holds events (up to the months made ahead; later ones
    // wait in DEFAULT), then this month and the next two.
    await queryRunner.query(`
      SELECT ledger_events_add_partition(m.month AT TIME ZONE 'UTC')
        FROM (SELECT DISTINCT date_trunc('month', recorded_at AT TIME ZONE 'UTC') AS month FROM ledger_events_unpartitioned) AS m
       WHERE m.month <= date_trunc('month', now() AT TIME ZONE 'UTC') + interval '2 months'
       ORDER BY m.month`);
    await queryRunner.query(`SELECT ledger_events_make_partitions(2)`);

    await queryRunner.query(`
      INSERT INTO ledger_events (${COLUMNS}) OVERRIDING SYSTEM VALUE
      SELECT ${COLUMNS} FROM ledger_events_unpartitioned ORDER BY position`);
    await sameRows(queryRunner, 'ledger_events_unpartitioned', 'ledger_events');
    await continueSequence(queryRunner, 'ledger_events_unpartitioned', 'ledger_events');
    // Built after the copy (once per partition, then attached to the parent's), not row by row.
    for (const index of indexes) await queryRunner.query(index.definition);
    await copyGrants(queryRunner, 'ledger_events_unpartitioned', 'ledger_events');
    await queryRunner.query(`DROP TABLE ledger_events_unpartitioned`);

    await queryRunner.query(`
      CREATE TABLE ledger_retention (
        partition       text        PRIMARY KEY,
        range_start     timestamptz NOT NULL,
        range_end       timestamptz NOT NULL CHECK (range_end > range_start),
        events          bigint      NOT NULL CHECK (events >= 0),
        first_position  bigint,
        last_position   bigint,
        file            text        NOT NULL,
        sha256          text        NOT NULL,
        detached_as     text        NOT NULL,
        archived_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
        archived_by     text        NOT NULL DEFAULT session_user,
        dropped_at      timestamptz
      )`);
    // A stream's state at its last archived event: what a fold of its retained events starts
    // from. `state` and `reservations` as usage_snapshots holds them; null for a shared quota's
    // stream, which holds only its definitions (its usage lives in the namespaces' states).
    await queryRunner.query(`
      CREATE TABLE ledger_horizon_states (
        namespace     text        NOT NULL,
        version       bigint      NOT NULL CHECK (version > 0),
        position      bigint      NOT NULL,
        recorded_at   timestamptz NOT NULL,
        state         jsonb,
        reservations  jsonb,
        horizon       timestamptz NOT NULL,
        PRIMARY KEY (namespace, version)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const [archived] = (await queryRunner.query(`SELECT count(*)::int AS count FROM ledger_retention`)) as { count: number }[];
    if ((archived?.count ?? 0) > 0) {
      throw new Error(
        `ledger_events cannot go back to one table: ${archived?.count} partitions were archived (ledger_retention), and the old table has no way to say that its history starts later. Restore the archives first (README, "Retention and archiving").`,
      );
    }
    await queryRunner.query(`DROP TABLE ledger_horizon_states`);
    await queryRunner.query(`DROP TABLE ledger_retention`);
    await queryRunner.query(`DROP FUNCTION ledger_events_make_partitions(integer)`);
    await queryRunner.query(`DROP FUNCTION ledger_events_add_partition(timestamptz)`);
    await queryRunner.query(`DROP FUNCTION ledger_events_add_default()`);
    await queryRunner.query(`DROP FUNCTION ledger_events_guard_partition(regclass, text)`);
    await queryRunner.query(`DROP VIEW ledger_event_partitions`);

    const indexes = await secondaryIndexes(queryRunner, 'ledger_events', ['ledger_events_pkey']);
    for (const index of indexes) await queryRunner.query(`DROP INDEX ${quote(index.name)}`);
    await queryRunner.query(`ALTER TABLE ledger_events DROP CONSTRAINT ledger_events_pkey`);
    await queryRunner.query(`ALTER TABLE ledger_events RENAME TO ledger_events_partitioned`);
    await queryRunner.query(`ALTER SEQUENCE ledger_events_position_seq RENAME TO ledger_events_partitioned_position_seq`);
    await queryRunner.query(`
      CREATE TABLE ledger_events (
        position        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        namespace       text        NOT NULL CHECK (namespace <> ''),
        version         bigint      NOT NULL CHECK (version > 0),
        type            text        NOT NULL,
        schema_version  smallint    NOT NULL CHECK (schema_version > 0),
        data            jsonb       NOT NULL,
        request_id      text,
        actor           text        NOT NULL,
        recorded_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
        transaction_id  xid8        NOT NULL DEFAULT pg_current_xact_id(),
        on_behalf_of    text,
        CONSTRAINT ledger_events_stream_version UNIQUE (namespace, version)
      )`);
    await queryRunner.query(`
      INSERT INTO ledger_events (${COLUMNS}) OVERRIDING SYSTEM VALUE
      SELECT ${COLUMNS} FROM ledger_events_partitioned ORDER BY position`);
    await sameRows(queryRunner, 'ledger_events_partitioned', 'ledger_events');
    await continueSequence(queryRunner, 'ledger_events_partitioned', 'ledger_events');
    for (const index of indexes) await queryRunner.query(index.definition);
    await appendOnly(queryRunner);
    await copyGrants(queryRunner, 'ledger_events_partitioned', 'ledger_events');
    // Drops the partitions with it.
    await queryRunner.query(`DROP TABLE ledger_events_partitioned`);
  }
}

/** Every column, in the table's order (on_behalf_of was added last). */
const COLUMNS = 'position, namespace, version, type, schema_version, data, request_id, actor, recorded_at, transaction_id, on_behalf_of';

/** The attached monthly partitions and their ranges, read from their names (which only ledger_events_add_partition gives). */
const PARTITIONS_VIEW = `
  CREATE VIEW ledger_event_partitions AS
  SELECT c.relname::text AS partition,
         to_date(substr(c.relname, 16, 6), 'YYYYMM')::timestamp AT TIME ZONE 'UTC' AS range_start,
         (to_date(substr(c.relname, 16, 6), 'YYYYMM') + interval '1 month') AT TIME ZONE 'UTC' AS range_end
    FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
   WHERE i.inhparent = 'ledger_events'::regclass AND c.relname ~ '^ledger_events_p[0-9]{6}$'`;

/**
 * The partition maintenance, in the database so that the migration, `npm run migrate`, the
 * projection worker and an operator's psql all make partitions the same way.
 */
const PARTITION_FUNCTIONS = [
  // What every partition carries beside what it inherits: its own unique (namespace, version)
  // index and the TRUNCATE trigger (statement triggers are not cloned to partitions).
  `CREATE FUNCTION ledger_events_guard_partition(partition regclass, suffix text) RETURNS void LANGUAGE plpgsql AS $$
   BEGIN
     EXECUTE format('CREATE UNIQUE INDEX %I ON %s (namespace, version)', 'ledger_events_stream_version_' || suffix, partition);
     EXECUTE format('CREATE TRIGGER ledger_events_no_truncate BEFORE TRUNCATE ON %s FOR EACH STATEMENT EXECUTE FUNCTION ledger_events_append_only()', partition);
   END $$`,
  `CREATE FUNCTION ledger_events_add_default() RETURNS text LANGUAGE plpgsql AS $$
   BEGIN
     CREATE TABLE ledger_events_default PARTITION OF ledger_events DEFAULT;
     PERFORM ledger_events_guard_partition('ledger_events_default', 'default');
     RETURN 'ledger_events_default';
   END $$`,
  // One UTC month's partition, made as a table of its own and then attached: ATTACH PARTITION
  // locks the parent only against other DDL, so admissions' inserts do not wait (CREATE TABLE
  // ... PARTITION OF would lock the whole ledger). It locks DEFAULT, scanning it for rows of the
  // month (it fails if there are any): reads of the whole ledger wait for that.
  `CREATE FUNCTION ledger_events_add_partition(month_start timestamptz) RETURNS text LANGUAGE plpgsql AS $$
   DECLARE
     month timestamp := date_trunc('month', month_start AT TIME ZONE 'UTC');
     suffix text := 'p' || to_char(month, 'YYYYMM');
     partition text := 'ledger_events_' || suffix;
   BEGIN
     IF month AT TIME ZONE 'UTC' <> month_start THEN
       RAISE EXCEPTION 'a ledger_events partition starts at the beginning of a UTC month, and % does not', month_start;
     END IF;
     EXECUTE format('CREATE TABLE %I (LIKE ledger_events INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', partition);
     PERFORM ledger_events_guard_partition(partition::regclass, suffix);
     EXECUTE format('ALTER TABLE ledger_events ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',
                    partition, month AT TIME ZONE 'UTC', (month + interval '1 month') AT TIME ZONE 'UTC');
     RETURN partition;
   END $$`,
  `CREATE FUNCTION ledger_events_make_partitions(months_ahead integer DEFAULT 2) RETURNS SETOF text LANGUAGE plpgsql AS $$
   DECLARE
     this_month timestamp := date_trunc('month', now() AT TIME ZONE 'UTC');
     from_month timestamp;
     wanted timestamp[];
     month timestamp;
     columns text;
     moving bigint;
     moved bigint;
   BEGIN
     IF months_ahead NOT BETWEEN 0 AND 24 THEN
       RAISE EXCEPTION 'months_ahead must be between 0 and 24, not %', months_ahead;
     END IF;
     -- Two workers (or a worker and a deploy) at once make each month once.
     PERFORM pg_advisory_xact_lock(7165430219812346);
     -- This month and the next ones, and the months since the newest partition that began
     -- before this one whose rows wait in DEFAULT (the months missed while nothing made
     -- partitions). Older rows in DEFAULT stay there: their months may have been archived.
     SELECT max(range_end) AT TIME ZONE 'UTC' INTO from_month FROM ledger_event_partitions WHERE range_start < this_month AT TIME ZONE 'UTC';
     from_month := least(coalesce(from_month, this_month), this_month);
     SELECT array_agg(w.m ORDER BY w.m) INTO wanted
       FROM (SELECT m FROM generate_series(this_month, this_month + make_interval(months => months_ahead), interval '1 month') AS m
             UNION
             SELECT date_trunc('month', recorded_at AT TIME ZONE 'UTC') FROM ledger_events_default
              WHERE recorded_at >= from_month AT TIME ZONE 'UTC' AND recorded_at < this_month AT TIME ZONE 'UTC') AS w(m)
      WHERE NOT EXISTS (SELECT 1 FROM ledger_event_partitions p WHERE p.range_start = w.m AT TIME ZONE 'UTC');
     IF wanted IS NULL THEN
       RETURN;
     END IF;
     -- DEFAULT never holds rows of an attached month (attaching it would have failed), so one
     -- range check from the first wanted month to the last covers them all.
     IF NOT EXISTS (SELECT 1 FROM ledger_events_default
                     WHERE recorded_at >= wanted[1] AT TIME ZONE 'UTC'
                       AND recorded_at < (wanted[array_upper(wanted, 1)] + interval '1 month') AT TIME ZONE 'UTC') THEN
       FOREACH month IN ARRAY wanted LOOP
         RETURN NEXT ledger_events_add_partition(month AT TIME ZONE 'UTC');
       END LOOP;
       RETURN;
     END IF;
     -- Some of those months' rows wait in DEFAULT, and the append-only triggers forbid deleting
     -- them: DEFAULT is detached whole, the months and an empty DEFAULT are made, and its rows
     -- go in again through the parent, to their months or to the new DEFAULT, keeping their
     -- positions. The old DEFAULT is dropped only once every row is back.
     ALTER TABLE ledger_events DETACH PARTITION ledger_events_default;
     ALTER TABLE ledger_events_default RENAME TO ledger_events_default_moving;
     ALTER INDEX ledger_events_stream_version_default RENAME TO ledger_events_stream_version_default_moving;
     FOREACH month IN ARRAY wanted LOOP
       RETURN NEXT ledger_events_add_partition(month AT TIME ZONE 'UTC');
     END LOOP;
     PERFORM ledger_events_add_default();
     -- The columns the table has now, so a column added later moves too.
     SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) INTO columns
       FROM pg_attribute WHERE attrelid = 'ledger_events'::regclass AND attnum > 0 AND NOT attisdropped;
     EXECUTE format('INSERT INTO ledger_events (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM ledger_events_default_moving', columns, columns);
     GET DIAGNOSTICS moved = ROW_COUNT;
     EXECUTE 'SELECT count(*) FROM ledger_events_default_moving' INTO moving;
     IF moved <> moving THEN
       RAISE EXCEPTION 'moving DEFAULT''s rows to their months inserted % of %', moved, moving;
     END IF;
     DROP TABLE ledger_events_default_moving;
   END $$`,
];

/** The append-only triggers of migrations/1795293483763, on the (parent) table. */
async function appendOnly(queryRunner: QueryRunner): Promise<void> {
  await queryRunner.query(`
    CREATE TRIGGER ledger_events_no_update_delete BEFORE UPDATE OR DELETE ON ledger_events
      FOR EACH ROW EXECUTE FUNCTION ledger_events_append_only()`);
  await queryRunner.query(`
    CREATE TRIGGER ledger_events_no_truncate BEFORE TRUNCATE ON ledger_events
      FOR EACH STATEMENT EXECUTE FUNCTION ledger_events_append_only()`);
}

/** The table's indexes other than `keep`, each with the statement that makes it on the table of that name again. */
async function secondaryIndexes(
  queryRunner: QueryRunner,
  table: string,
  keep: readonly string[],
): Promise<{ name: string; definition: string }[]> {
  const rows = (await queryRunner.query(
    `SELECT c.relname AS name, pg_get_indexdef(c.oid) AS definition
       FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE i.indrelid = $1::regclass AND NOT (c.relname = ANY($2::text[]))
      ORDER BY c.relname`,
    [table, keep],
  )) as { name: string; definition: string }[];
  // A partitioned table's index reads "ON ONLY <table>"; made on a plain table, or on the new
  // partitioned one (to be built on every partition), it is "ON <table>".
  return rows.map((r) => ({ name: r.name, definition: r.definition.replace(/ ON ONLY /, ' ON ') }));
}

async function sameRows(queryRunner: QueryRunner, from: string, to: string): Promise<void> {
  const [row] = (await queryRunner.query(
    `SELECT (SELECT count(*) FROM ${quote(from)})::bigint::text AS source, (SELECT count(*) FROM ${quote(to)})::bigint::text AS target`,
  )) as {
    source: string;
    target: string;
  }[];
  if (!row || row.source !== row.target) throw new Error(`copying ${from} into ${to}: ${row?.target} rows of ${row?.source}`);
}

/** The new table's identity goes on from where the old one's sequence stood, so no position is ever drawn twice. */
async function continueSequence(queryRunner: QueryRunner, from: string, to: string): Promise<void> {
  const [sequences] = (await queryRunner.query(
    `SELECT pg_get_serial_sequence($1, 'position') AS source, pg_get_serial_sequence($2, 'position') AS target`,
    [from, to],
  )) as {
    source: string;
    target: string;
  }[];
  if (!sequences?.source || !sequences.target) throw new Error(`no identity sequence on ${from} or ${to}`);
  const [state] = (await queryRunner.query(`SELECT last_value::text AS last_value, is_called FROM ${sequences.source}`)) as {
    last_value: string;
    is_called: boolean;
  }[];
  if (!state) throw new Error(`cannot read ${sequences.source}`);
  await queryRunner.query(`SELECT setval($1::regclass, $2::bigint, $3)`, [sequences.target, state.last_value, state.is_called]);
}

/** The privileges other roles held on the table, granted again on its successor (none in this repository's own setup). */
async function copyGrants(queryRunner: QueryRunner, from: string, to: string): Promise<void> {
  const grants = (await queryRunner.query(
    `SELECT a.privilege_type, CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(r.rolname) END AS grantee, a.is_grantable
       FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) AS a LEFT JOIN pg_roles r ON r.oid = a.grantee
      WHERE c.oid = $1::regclass AND a.grantee <> c.relowner`,
    [from],
  )) as { privilege_type: string; grantee: string; is_grantable: boolean }[];
  for (const grant of grants) {
    await queryRunner.query(
      `GRANT ${grant.privilege_type} ON ${quote(to)} TO ${grant.grantee}${grant.is_grantable ? ' WITH GRANT OPTION' : ''}`,
    );
  }
}

const quote = (identifier: string): string => `"${identifier.replace(/"/g, '""')}"`;
