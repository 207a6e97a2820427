import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The ledger: one append-only table of events, one stream per namespace. `position` orders
 * the global feed; `(namespace, version)` is the optimistic-concurrency guard; the writing
 * transaction's id lets a projection read only below the oldest running transaction, so it
 * never skips one that commits late.
 */
export class CreateLedgerEvents1795293483763 implements MigrationInterface {
  readonly name = 'CreateLedgerEvents1795293483763';

  async up(queryRunner: QueryRunner): Promise<void> {
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
        CONSTRAINT ledger_events_stream_version UNIQUE (namespace, version)
      )`);
    await queryRunner.query(`CREATE INDEX ledger_events_request_id ON ledger_events (namespace, request_id) WHERE request_id IS NOT NULL`);
    await queryRunner.query(`CREATE INDEX ledger_events_recorded_at ON ledger_events (namespace, recorded_at)`);
    // Events are facts: nothing may rewrite or remove them, whichever client connects.
    await queryRunner.query(`
      CREATE FUNCTION ledger_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'ledger_events is append-only: % is not allowed', TG_OP
          USING ERRCODE = 'restrict_violation';
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER ledger_events_no_update_delete BEFORE UPDATE OR DELETE ON ledger_events
        FOR EACH ROW EXECUTE FUNCTION ledger_events_append_only()`);
    await queryRunner.query(`
      CREATE TRIGGER ledger_events_no_truncate BEFORE TRUNCATE ON ledger_events
        FOR EACH STATEMENT EXECUTE FUNCTION ledger_events_append_only()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE ledger_events`);
    await queryRunner.query(`DROP FUNCTION ledger_events_append_only()`);
  }
}
