import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A shared quota's stream at the retention horizon: its last archived event's type and data
 * (`definition`), so that a ClusterResourceQuota or HierarchicalResourceQuota idle since before
 * the horizon still reads as defined, with its limits, at every instant from the horizon on
 * (shared-usage-queries.ts). A namespace's stream keeps `state` and `reservations` as before;
 * `definition` is null for it.
 */
export class HorizonDefinitions1795900001100 implements MigrationInterface {
  readonly name = 'HorizonDefinitions1795900001100';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE ledger_horizon_states ADD COLUMN definition jsonb`);
    await queryRunner.query(
      `ALTER TABLE ledger_horizon_states ADD CONSTRAINT ledger_horizon_states_one_kind CHECK (definition IS NULL OR state IS NULL)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const [kept] = (await queryRunner.query(`SELECT count(*)::int AS count FROM ledger_horizon_states WHERE definition IS NOT NULL`)) as {
      count: number;
    }[];
    if ((kept?.count ?? 0) > 0) {
      throw new Error(
        `ledger_horizon_states.definition cannot go: it holds ${kept?.count} shared quotas' definitions whose events were archived, and nothing else in the ledger has them (README, "Retention and archiving")`,
      );
    }
    await queryRunner.query(`ALTER TABLE ledger_horizon_states DROP CONSTRAINT ledger_horizon_states_one_kind`);
    await queryRunner.query(`ALTER TABLE ledger_horizon_states DROP COLUMN definition`);
  }
}
