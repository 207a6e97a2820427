import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Which namespaces ever carried a shared quota (issue 18), without a scan: a shared quota's
 * usage at a past instant is the sum of what those namespaces then contributed, so `usage?at=`
 * and the usage series of a ClusterResourceQuota or HierarchicalResourceQuota start here. Only
 * SharedQuotaApplied events are indexed (written when a quota is made or changed and when a
 * namespace joins one), never an admission's, so the write path pays nothing for it.
 */
export class SharedQuotaAppliedIndex1795900000700 implements MigrationInterface {
  name = 'SharedQuotaAppliedIndex1795900000700';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX ledger_events_shared_applied ON ledger_events ((data->>'key'), recorded_at, namespace) WHERE type = 'SharedQuotaApplied'`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX ledger_events_shared_applied`);
  }
}
