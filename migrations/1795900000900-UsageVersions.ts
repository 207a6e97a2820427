import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Usage at every version (issue 20): `usage?at=` and usage series folded a namespace's events
 * in Node from the newest snapshot, up to a snapshot interval of events per instant (p99 52–67 ms
 * on a 1,000,000-event history, a 500-point series in seconds). The projection now writes, at
 * each version where they change, a namespace's usage per quota (and what it contributes to
 * each shared quota covering it) and its quotas' hard limits
 * (libs/ledger/src/usage-versions.ts); an instant is answered by two primary-key descents.
 *
 * The rows must cover every version the projection has passed, so the projection starts over:
 * its read models are emptied and its checkpoint reset, and the worker replays the ledger. Until
 * it has, as-of and series answer by folding, as before (exact, slower).
 */
export class UsageVersions1795900000900 implements MigrationInterface {
  readonly name = 'UsageVersions1795900000900';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE projected_used_versions (
        namespace  text    NOT NULL,
        version    bigint  NOT NULL,
        versions   bigint[] NOT NULL,
        used       jsonb   NOT NULL,
        shared     jsonb,
        PRIMARY KEY (namespace, version)
      )`);
    await queryRunner.query(`
      CREATE TABLE projected_quota_versions (
        namespace  text    NOT NULL,
        version    bigint  NOT NULL,
        quotas     jsonb   NOT NULL,
        PRIMARY KEY (namespace, version)
      )`);
    // The projection's state of a namespace did not keep the shared quotas covering it (what it
    // contributes to each is now read at every version) nor its Namespace object: a Namespace
    // change folded in a later step than the object's definition failed the fold's invariant.
    await queryRunner.query(`ALTER TABLE projected_namespaces ADD COLUMN head_rest jsonb`);
    // The feed follows namespaces' versions since issue 20's first part (projection.ts): nothing
    // reads events by transaction id any more, and every admission paid an index entry for it.
    await queryRunner.query(`DROP INDEX ledger_events_feed`);
    await replay(queryRunner);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX ledger_events_feed ON ledger_events (transaction_id, position)`);
    await queryRunner.query(`ALTER TABLE projected_namespaces DROP COLUMN head_rest`);
    await queryRunner.query(`DROP TABLE projected_quota_versions`);
    await queryRunner.query(`DROP TABLE projected_used_versions`);
  }
}

/** Empties the usage projection's read models and resets its checkpoint: the worker replays the ledger. */
async function replay(queryRunner: QueryRunner): Promise<void> {
  await queryRunner.query(`TRUNCATE projected_namespaces, projected_definitions, projected_reservations, usage_snapshots`);
  await queryRunner.query(
    `UPDATE projection_checkpoints SET transaction_id = '0'::xid8, position = 0, events_applied = 0, last_event_at = NULL, updated_at = clock_timestamp()`,
  );
}
