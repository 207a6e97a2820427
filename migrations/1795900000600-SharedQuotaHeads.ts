import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The heads of quotas over several namespaces (issue 18: ClusterResourceQuota,
 * HierarchicalResourceQuota). One row per shared quota, keyed like its stream in ledger_events
 * (`clusterresourcequotas/<name>`, `hierarchicalresourcequotas/<namespace>/<name>`): its
 * definition, the stream version of its last definition event (`version`), and what each
 * namespace it covers contributes to its usage. Every admission in a covered namespace moves
 * it, in the same transaction as the namespace's head, with a compare-and-set on `revision`
 * (which grows with every write; `version` only with the definition's events). A removed
 * quota keeps its row (definition null), so that its stream's versions continue if it is made
 * again. Fillfactor 50, as namespace_heads: a hot row updated by every admission stays HOT.
 */
export class SharedQuotaHeads1795900000600 implements MigrationInterface {
  name = 'SharedQuotaHeads1795900000600';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE shared_quota_heads (
        key         text        PRIMARY KEY CHECK (key LIKE '%/%'),
        revision    bigint      NOT NULL CHECK (revision > 0),
        version     bigint      NOT NULL CHECK (version >= 0),
        state       jsonb       NOT NULL,
        updated_at  timestamptz NOT NULL DEFAULT clock_timestamp()
      ) WITH (fillfactor = 50)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE shared_quota_heads`);
  }
}
