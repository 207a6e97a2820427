import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Smaller projection writes (issue 17): the projection wrote ~1.9 KB of WAL per admission when
 * each of its steps touched a namespace once, more than the admission itself
 * (`npm run bench:writes -- --namespaces=2000`). What it wrote that no reader needs:
 *
 * - `projected_reservations.data`, the whole reservation (~800 bytes per admission). The
 *   projection itself is its only reader, and the reservation is its Reserved (or Adopted)
 *   event plus, once committed, the instant of its commit: the row now keeps the event's
 *   version and `committed_at` (epoch ms), and the projection folds the event again.
 * - `projected_namespaces.state`, the whole folded head (definitions with usage, limit ranges)
 *   rewritten on every step that touched the namespace. Usage per quota is now the small
 *   `used` map and `released_count`; the definitions (quotas without usage, limit ranges)
 *   move to `projected_definitions`, written only by the steps that change them.
 * - `projected_quota_usage`, every quota row of a touched namespace deleted and inserted again
 *   on every step (a delete, an insert and an index entry per quota), now a view of the two
 *   tables above with the same columns.
 *
 * Rows are converted in place; nothing needs a rebuild. `down` restores the old tables empty
 * and resets the checkpoint, so the worker replays the ledger.
 */
export class SlimProjections1795900000500 implements MigrationInterface {
  readonly name = 'SlimProjections1795900000500';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE projected_definitions (
        namespace  text   PRIMARY KEY,
        state      jsonb  NOT NULL
      )`);
    await queryRunner.query(`
      INSERT INTO projected_definitions (namespace, state)
      SELECT namespace, jsonb_build_object(
               'quotas', coalesce((SELECT jsonb_agg(q - 'used' ORDER BY n) FROM jsonb_array_elements(state->'quotas') WITH ORDINALITY AS x(q, n)), '[]'::jsonb),
               'limitRanges', coalesce(state->'limitRanges', '[]'::jsonb))
        FROM projected_namespaces`);
    await queryRunner.query(`
      ALTER TABLE projected_namespaces
        ADD COLUMN used            jsonb   NOT NULL DEFAULT '{}',
        ADD COLUMN released_count  bigint  NOT NULL DEFAULT 0`);
    await queryRunner.query(`
      UPDATE projected_namespaces
         SET used = coalesce((SELECT jsonb_object_agg(q->'definition'->>'name', q->'used') FROM jsonb_array_elements(state->'quotas') AS x(q)), '{}'::jsonb),
             released_count = coalesce((state->>'releasedCount')::bigint, 0)`);
    await queryRunner.query(`ALTER TABLE projected_namespaces DROP COLUMN state`);
    // Room on each page for the next version of a row: its update stays on the page (HOT),
    // with no new index entry.
    await queryRunner.query(`ALTER TABLE projected_namespaces SET (fillfactor = 50)`);

    await queryRunner.query(`DROP TABLE projected_quota_usage`);
    await queryRunner.query(`
      CREATE VIEW projected_quota_usage AS
      SELECT p.namespace, q.value->'definition'->>'name' AS quota,
             coalesce(q.value->'definition'->'spec'->'hard', '{}'::jsonb) AS hard,
             coalesce(p.used->(q.value->'definition'->>'name'), '{}'::jsonb) AS used,
             p.version, p.position, p.projected_at
        FROM projected_namespaces p
        JOIN projected_definitions d ON d.namespace = p.namespace
       CROSS JOIN LATERAL jsonb_array_elements(d.state->'quotas') AS q(value)`);

    await queryRunner.query(`
      ALTER TABLE projected_reservations
        ADD COLUMN version       bigint,
        ADD COLUMN committed_at  bigint`);
    await queryRunner.query(`
      UPDATE projected_reservations
         SET version = (data->>'version')::bigint,
             committed_at = CASE WHEN data->>'operation' <> 'ADOPT' AND data->>'status' = 'committed' THEN (data->>'committedAt')::bigint END`);
    await queryRunner.query(`ALTER TABLE projected_reservations ALTER COLUMN version SET NOT NULL`);
    await queryRunner.query(`ALTER TABLE projected_reservations DROP COLUMN data`);
    await queryRunner.query(`ALTER TABLE projected_reservations SET (fillfactor = 80)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP VIEW projected_quota_usage`);
    await queryRunner.query(`DROP TABLE projected_definitions`);
    await queryRunner.query(`TRUNCATE projected_namespaces, projected_reservations, usage_snapshots`);
    await queryRunner.query(`ALTER TABLE projected_namespaces RESET (fillfactor)`);
    await queryRunner.query(
      `ALTER TABLE projected_namespaces DROP COLUMN used, DROP COLUMN released_count, ADD COLUMN state jsonb NOT NULL`,
    );
    await queryRunner.query(`ALTER TABLE projected_reservations RESET (fillfactor)`);
    await queryRunner.query(
      `ALTER TABLE projected_reservations DROP COLUMN version, DROP COLUMN committed_at, ADD COLUMN data jsonb NOT NULL`,
    );
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
    // The read models are empty: the worker replays the ledger from the first event.
    await queryRunner.query(
      `UPDATE projection_checkpoints SET transaction_id = '0'::xid8, position = 0, events_applied = 0, last_event_at = NULL, updated_at = clock_timestamp()`,
    );
  }
}
