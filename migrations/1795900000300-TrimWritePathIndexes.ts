import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Fewer index entries per admission (issue 17): every allowed admission wrote 11 index entries,
 * two of which no query needs (`npm run bench:writes` counts them from the WAL).
 *
 * - `ledger_events_request_id` (namespace, request_id): no query has ever filtered events by
 *   request id; idempotency is `admission_decisions_request_key`. One entry (~100 WAL bytes) per
 *   Reserved event, dropped.
 * - `admission_decisions_pkey` (id) and `admission_decisions_by_namespace` (namespace, id):
 *   every query of the decisions log names its namespace (the keyed read by request key, the
 *   listing by id, one decision by namespace and id, the usage chart's denials), so one unique
 *   (namespace, id) index, the primary key, serves them all; ids stay unique by their identity.
 *
 * The new primary key is built under the table's lock. On a large log, build it beforehand
 * without blocking admissions, and this migration adopts it:
 *   CREATE UNIQUE INDEX CONCURRENTLY admission_decisions_namespace_id ON admission_decisions (namespace, id);
 */
export class TrimWritePathIndexes1795900000300 implements MigrationInterface {
  name = 'TrimWritePathIndexes1795900000300';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX ledger_events_request_id`);
    const [prebuilt] = (await queryRunner.query(`SELECT to_regclass('admission_decisions_namespace_id') IS NOT NULL AS present`)) as {
      present: boolean;
    }[];
    await queryRunner.query(`ALTER TABLE admission_decisions DROP CONSTRAINT admission_decisions_pkey`);
    await queryRunner.query(`DROP INDEX admission_decisions_by_namespace`);
    await queryRunner.query(
      prebuilt?.present
        ? `ALTER TABLE admission_decisions ADD CONSTRAINT admission_decisions_pkey PRIMARY KEY USING INDEX admission_decisions_namespace_id`
        : `ALTER TABLE admission_decisions ADD CONSTRAINT admission_decisions_pkey PRIMARY KEY (namespace, id)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE admission_decisions DROP CONSTRAINT admission_decisions_pkey`);
    await queryRunner.query(`ALTER TABLE admission_decisions ADD CONSTRAINT admission_decisions_pkey PRIMARY KEY (id)`);
    await queryRunner.query(`CREATE INDEX admission_decisions_by_namespace ON admission_decisions (namespace, id)`);
    await queryRunner.query(`CREATE INDEX ledger_events_request_id ON ledger_events (namespace, request_id) WHERE request_id IS NOT NULL`);
  }
}
