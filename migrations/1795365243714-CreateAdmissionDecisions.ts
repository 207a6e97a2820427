import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The decisions log: every admission answer, allowed or denied, with its explanation. It is
 * written in the deciding transaction but is not part of the namespace's stream, so denials
 * never take a stream version. The unique request key makes a repeated AdmissionReview uid
 * or REST requestId return the first answer.
 */
export class CreateAdmissionDecisions1795365243714 implements MigrationInterface {
  readonly name = 'CreateAdmissionDecisions1795365243714';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE admission_decisions (
        id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        namespace       text        NOT NULL,
        request_key     text,
        source          text        NOT NULL CHECK (source IN ('webhook', 'rest')),
        operation       text        NOT NULL,
        resource        text        NOT NULL,
        kind            text,
        name            text,
        object_uid      text,
        requester       text        NOT NULL,
        dry_run         boolean     NOT NULL,
        allowed         boolean     NOT NULL,
        code            smallint    NOT NULL,
        reason          text,
        reservation_id  text,
        result          jsonb       NOT NULL,
        decided_at      timestamptz NOT NULL
      )`);
    await queryRunner.query(`
      CREATE UNIQUE INDEX admission_decisions_request_key ON admission_decisions (namespace, request_key)
        WHERE request_key IS NOT NULL`);
    await queryRunner.query(`CREATE INDEX admission_decisions_by_namespace ON admission_decisions (namespace, id)`);
    await queryRunner.query(`CREATE INDEX admission_decisions_denied ON admission_decisions (namespace, id) WHERE NOT allowed`);
    await queryRunner.query(`
      CREATE FUNCTION admission_decisions_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'admission_decisions is append-only: % is not allowed', TG_OP
          USING ERRCODE = 'restrict_violation';
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER admission_decisions_no_update_delete BEFORE UPDATE OR DELETE ON admission_decisions
        FOR EACH ROW EXECUTE FUNCTION admission_decisions_append_only()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE admission_decisions`);
    await queryRunner.query(`DROP FUNCTION admission_decisions_append_only()`);
  }
}
