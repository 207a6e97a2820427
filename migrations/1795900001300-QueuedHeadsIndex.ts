import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The namespaces with queued reservations (issue 41), found without reading every head. The
 * queue's reads (the QUEUE_TOTAL_MAX check of every reserve that may wait, a shared quota's fair
 * drain after every write that frees room under it, the sweep) filtered `state ? 'queue'`, a scan
 * of every head's state: 11 ms at 10,000 namespaces, per call. `queued` is stored beside the state
 * and indexed where true: 0.1 ms.
 *
 * Why a stored boolean and not an index on the state, or the queue's length: a head is rewritten by
 * every admission, and stays a HOT update only while no indexed column changes (HeadsFillfactor
 * says why that matters under SERIALIZABLE). `queued` changes only when a namespace's first waiter
 * arrives or its last one leaves; every other admission leaves it, and HOT, as they were.
 *
 * Adding a stored column rewrites namespace_heads under an exclusive lock: admissions wait for it
 * (one row of about 1 KB per namespace; not measured at scale).
 */
export class QueuedHeadsIndex1795900001300 implements MigrationInterface {
  readonly name = 'QueuedHeadsIndex1795900001300';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE namespace_heads ADD COLUMN queued boolean NOT NULL
         GENERATED ALWAYS AS (CASE WHEN jsonb_typeof(state->'queue') = 'array' THEN jsonb_array_length(state->'queue') > 0 ELSE false END) STORED`,
    );
    await queryRunner.query(`CREATE INDEX namespace_heads_queued ON namespace_heads (namespace) WHERE queued`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX namespace_heads_queued`);
    await queryRunner.query(`ALTER TABLE namespace_heads DROP COLUMN queued`);
  }
}
