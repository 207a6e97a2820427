import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every reservation and where it stands, written in the same transaction as its events:
 * commit, release and UPDATE admission look a reservation up by key (id, or the object's
 * uid) instead of scanning the stream. Released rows stay, so a late commit can be told
 * "released" rather than "never existed".
 */
export class CreateReservations1795365243713 implements MigrationInterface {
  readonly name = 'CreateReservations1795365243713';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE reservations (
        namespace       text        NOT NULL,
        reservation_id  text        NOT NULL,
        object_uid      text,
        status          text        NOT NULL CHECK (status IN ('reserved', 'committed', 'released')),
        version         bigint      NOT NULL CHECK (version > 0),
        data            jsonb       NOT NULL,
        request_id      text,
        reserved_at     timestamptz NOT NULL,
        committed_at    timestamptz,
        released_at     timestamptz,
        release_reason  text,
        expires_at      timestamptz,
        event_versions  bigint[]    NOT NULL,
        PRIMARY KEY (namespace, reservation_id),
        CHECK ((status = 'released') = (released_at IS NOT NULL))
      )`);
    await queryRunner.query(`
      CREATE INDEX reservations_live_by_uid ON reservations (namespace, object_uid, version)
        WHERE status <> 'released' AND object_uid IS NOT NULL`);
    await queryRunner.query(`
      CREATE INDEX reservations_live_by_age ON reservations (namespace, reserved_at)
        WHERE status <> 'released'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE reservations`);
  }
}
