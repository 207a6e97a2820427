import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Terminal objects (issue 19): a Terminated event cuts a committed reservation down to its
 * object count. The projection keeps each live reservation as the version of the event that made
 * it and its commit instant, and folds them again when it needs the reservation; it now also
 * keeps the version of its Terminated event, so the reservation it folds again counts what
 * the ledger's does. Nothing to convert: no Terminated event was written before this.
 */
export class ProjectedTerminations1795900000800 implements MigrationInterface {
  name = 'ProjectedTerminations1795900000800';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE projected_reservations ADD COLUMN terminated_version bigint`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE projected_reservations DROP COLUMN terminated_version`);
  }
}
