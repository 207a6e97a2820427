import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An idempotency key remembers what it was used for (issue 15): the SHA-256 of the request's
 * canonical form, so the same key sent with a different request is a conflict instead of the
 * first answer. Null for decisions written before, which keep answering as they did.
 */
export class AddRequestDigest1795900000200 implements MigrationInterface {
  name = 'AddRequestDigest1795900000200';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE admission_decisions ADD COLUMN request_digest text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE admission_decisions DROP COLUMN request_digest`);
  }
}
