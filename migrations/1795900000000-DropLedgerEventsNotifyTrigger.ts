import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The projection worker is woken by the ledger after a batch commits (AppendNotifier), no
 * longer by a trigger: a transaction that notifies holds a database-wide lock through its
 * commit's WAL flush, so the trigger made every admission commit wait for the previous one
 * to reach disk (issue 6's benchmark).
 */
export class DropLedgerEventsNotifyTrigger1795900000000 implements MigrationInterface {
  name = 'DropLedgerEventsNotifyTrigger1795900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER ledger_events_notify ON ledger_events`);
    await queryRunner.query(`DROP FUNCTION ledger_events_notify()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION ledger_events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('quota_ledger_events', '');
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER ledger_events_notify AFTER INSERT ON ledger_events
        FOR EACH STATEMENT EXECUTE FUNCTION ledger_events_notify()`);
  }
}
