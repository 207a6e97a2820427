import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The projection worker's read models and its checkpoint. The worker reads the ledger in
 * (transaction_id, position) order, only below the oldest running transaction, so an event
 * whose transaction commits late is never skipped; its checkpoint is written in the same
 * transaction as the read models it moved. Everything here can be dropped and rebuilt from
 * `ledger_events` (`npm run projections:rebuild`).
 */
export class CreateProjections1795500000000 implements MigrationInterface {
  readonly name = 'CreateProjections1795500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // The feed order: every event of a finished transaction sorts below every event of a
    // transaction still running.
    await queryRunner.query(`CREATE INDEX ledger_events_feed ON ledger_events (transaction_id, position)`);
    // The history of one quota's or limit range's definition, by name, without a scan.
    await queryRunner.query(`
      CREATE INDEX ledger_events_definitions ON ledger_events (namespace, (data->>'name'), position)
        WHERE type IN ('QuotaDefined', 'QuotaChanged', 'QuotaRemoved', 'LimitRangeDefined', 'LimitRangeChanged', 'LimitRangeRemoved')`);
    await queryRunner.query(`
      CREATE TABLE projection_checkpoints (
        name            text        PRIMARY KEY,
        transaction_id  xid8        NOT NULL DEFAULT '0'::xid8,
        position        bigint      NOT NULL DEFAULT 0,
        events_applied  bigint      NOT NULL DEFAULT 0,
        last_event_at   timestamptz,
        updated_at      timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    // A namespace as the projection has folded it: quotas with usage, limit ranges.
    await queryRunner.query(`
      CREATE TABLE projected_namespaces (
        namespace      text        PRIMARY KEY,
        version        bigint      NOT NULL,
        position       bigint      NOT NULL,
        state          jsonb       NOT NULL,
        last_event_at  timestamptz,
        projected_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
        snapshot_version bigint    NOT NULL DEFAULT 0
      )`);
    // Wake the projection worker when events are appended (once per writing statement; the
    // worker also polls, so a lost notification only delays it).
    await queryRunner.query(`
      CREATE FUNCTION ledger_events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('quota_ledger_events', '');
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER ledger_events_notify AFTER INSERT ON ledger_events
        FOR EACH STATEMENT EXECUTE FUNCTION ledger_events_notify()`);
    // Live reservations as the projection has folded them (what Committed/Released need).
    await queryRunner.query(`
      CREATE TABLE projected_reservations (
        namespace       text   NOT NULL,
        reservation_id  text   NOT NULL,
        data            jsonb  NOT NULL,
        PRIMARY KEY (namespace, reservation_id)
      )`);
    // Usage per namespace and quota: what the admin API shows as status.used.
    await queryRunner.query(`
      CREATE TABLE projected_quota_usage (
        namespace     text        NOT NULL,
        quota         text        NOT NULL,
        hard          jsonb       NOT NULL,
        used          jsonb       NOT NULL,
        version       bigint      NOT NULL,
        position      bigint      NOT NULL,
        projected_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (namespace, quota)
      )`);
    // Full folded states at some versions, so that usage as of any instant folds at most a
    // snapshot interval of events.
    await queryRunner.query(`
      CREATE TABLE usage_snapshots (
        namespace      text        NOT NULL,
        version        bigint      NOT NULL,
        position       bigint      NOT NULL,
        last_event_at  timestamptz NOT NULL,
        state          jsonb       NOT NULL,
        reservations   jsonb       NOT NULL,
        PRIMARY KEY (namespace, version)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE usage_snapshots`);
    await queryRunner.query(`DROP TABLE projected_quota_usage`);
    await queryRunner.query(`DROP TABLE projected_reservations`);
    await queryRunner.query(`DROP TABLE projected_namespaces`);
    await queryRunner.query(`DROP TABLE projection_checkpoints`);
    await queryRunner.query(`DROP TRIGGER ledger_events_notify ON ledger_events`);
    await queryRunner.query(`DROP FUNCTION ledger_events_notify()`);
    await queryRunner.query(`DROP INDEX ledger_events_definitions`);
    await queryRunner.query(`DROP INDEX ledger_events_feed`);
  }
}
