import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The head of each namespace's stream: its version and the state admission decides on
 * (quota definitions with their running usage, limit ranges), kept current by every append
 * in the same transaction. Admission reads this one row by primary key instead of summing
 * events, so its SERIALIZABLE transaction's read set stays one tuple.
 */
export class CreateNamespaceHeads1795365243712 implements MigrationInterface {
  readonly name = 'CreateNamespaceHeads1795365243712';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE namespace_heads (
        namespace   text        PRIMARY KEY CHECK (namespace <> ''),
        version     bigint      NOT NULL CHECK (version > 0),
        state       jsonb       NOT NULL,
        updated_at  timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE namespace_heads`);
  }
}
