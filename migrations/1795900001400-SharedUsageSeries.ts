import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A shared quota's usage over time as a read model of its own (libs/ledger/src/shared-usage-series.ts).
 * `usage/series` of a ClusterResourceQuota or HierarchicalResourceQuota summed, at every point,
 * what each namespace it covered in the range then contributed: one read of the usage read model
 * per namespace and point. After churn (a quota that had covered ~1,500 namespaces), a read of
 * 500 points took ~30 s and two running at once raised admission p50 4.7×. The projection now
 * also writes each shared quota's total at every instant where a namespace's contribution changed
 * (`projected_shared_usage`, up to 32 such instants per row, keyed by the row's first), so a
 * point is one descent of the primary key, whatever the namespaces.
 *
 * `projected_shared_unordered` names the shared quotas whose total cannot be kept so (an event
 * recorded earlier than the event before it in the same namespace, which only an injected clock
 * writes): their series is summed per namespace, as before.
 *
 * The rows must cover every event the projection has passed, so the projection starts over: its
 * read models are emptied and its checkpoint reset, and the worker replays the ledger. Until it
 * has, a series sums the namespaces the projection has not reached yet, as before (exact, slower).
 */
export class SharedUsageSeries1795900001400 implements MigrationInterface {
  readonly name = 'SharedUsageSeries1795900001400';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE projected_shared_usage (
        key     text          NOT NULL,
        at      timestamptz   NOT NULL,
        ats     timestamptz[] NOT NULL,
        totals  jsonb         NOT NULL,
        PRIMARY KEY (key, at)
      )`);
    await queryRunner.query(`CREATE TABLE projected_shared_unordered (key text PRIMARY KEY)`);
    await queryRunner.query(
      `TRUNCATE projected_namespaces, projected_definitions, projected_reservations, usage_snapshots, projected_used_versions, projected_quota_versions`,
    );
    await queryRunner.query(
      `UPDATE projection_checkpoints SET transaction_id = '0'::xid8, position = 0, events_applied = 0, last_event_at = NULL, updated_at = clock_timestamp()`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE projected_shared_unordered`);
    await queryRunner.query(`DROP TABLE projected_shared_usage`);
  }
}
