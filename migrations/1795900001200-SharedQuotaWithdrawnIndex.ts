import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Which namespaces a shared quota covered at an instant, without a scan (issue 33): those whose
 * last SharedQuotaApplied or SharedQuotaWithdrawn for it, up to the instant, is an Applied. The
 * Applied events are indexed already (1795900000700); this indexes the Withdrawn ones alike, so
 * that a shared quota's usage?at= and series read the namespaces it covered in their range, not
 * every namespace that ever carried it. Partial: a Withdrawn is written only when a namespace
 * leaves a quota (relabelled, deleted, the quota removed), so admissions pay nothing for it.
 */
export class SharedQuotaWithdrawnIndex1795900001200 implements MigrationInterface {
  readonly name = 'SharedQuotaWithdrawnIndex1795900001200';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX ledger_events_shared_withdrawn ON ledger_events ((data->>'key'), recorded_at, namespace) WHERE type = 'SharedQuotaWithdrawn'`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX ledger_events_shared_withdrawn`);
  }
}
