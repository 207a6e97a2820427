import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Two identities per write (issue 15): `actor` / `requester` is the authenticated principal
 * (a token's or client certificate's name); `on_behalf_of` is the Kubernetes user an
 * AdmissionReview names in `userInfo`, recorded only when the principal is trusted to relay
 * users' requests (the kube-apiserver). Null for everything else, and for rows written before.
 */
export class AddOnBehalfOf1795900000100 implements MigrationInterface {
  name = 'AddOnBehalfOf1795900000100';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE ledger_events ADD COLUMN on_behalf_of text`);
    await queryRunner.query(`ALTER TABLE admission_decisions ADD COLUMN on_behalf_of text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE admission_decisions DROP COLUMN on_behalf_of`);
    await queryRunner.query(`ALTER TABLE ledger_events DROP COLUMN on_behalf_of`);
  }
}
