import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The apps may run as a role that owns nothing (DATABASE_RUNTIME_ROLE, libs/ledger
 * runtime-role.ts), but the projection worker makes the months ahead of `ledger_events`, which
 * takes the owner's DDL (CREATE TABLE, ATTACH PARTITION). `ledger_events_make_partitions` becomes
 * SECURITY DEFINER: whoever may call it makes partitions as the owner, and can do nothing else
 * with the owner's rights (its months are bounded, its statements fixed; `search_path` is pinned
 * so that nothing the caller creates is found first). EXECUTE on the partition functions is taken
 * from PUBLIC: the migration grants the one the runtime role needs by name.
 */
export class SecurePartitionFunctions1795900001700 implements MigrationInterface {
  readonly name = 'SecurePartitionFunctions1795900001700';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER FUNCTION ledger_events_make_partitions(integer) SECURITY DEFINER SET search_path = public, pg_temp`);
    for (const fn of FUNCTIONS) await queryRunner.query(`REVOKE EXECUTE ON FUNCTION ${fn} FROM PUBLIC`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const fn of FUNCTIONS) await queryRunner.query(`GRANT EXECUTE ON FUNCTION ${fn} TO PUBLIC`);
    await queryRunner.query(`ALTER FUNCTION ledger_events_make_partitions(integer) SECURITY INVOKER RESET search_path`);
  }
}

const FUNCTIONS = [
  'ledger_events_make_partitions(integer)',
  'ledger_events_add_partition(timestamptz)',
  'ledger_events_add_default()',
  'ledger_events_guard_partition(regclass, text)',
];
