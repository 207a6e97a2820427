import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One row of the append-only ledger (see migrations/…-CreateLedgerEvents). The
 * `transaction_id` (xid8) column is read by the feed with plain SQL; TypeORM has no type for it.
 */
@Entity({ name: 'ledger_events' })
export class LedgerEventEntity {
  /** bigint comes back from pg as a string: exact, never a float. */
  @PrimaryColumn({ type: 'bigint', generatedIdentity: 'ALWAYS' })
  position!: string;

  @Column({ type: 'text' })
  namespace!: string;

  @Column({ type: 'bigint' })
  version!: string;

  @Column({ type: 'text' })
  type!: string;

  @Column({ name: 'schema_version', type: 'smallint' })
  schemaVersion!: number;

  @Column({ type: 'jsonb' })
  data!: unknown;

  @Column({ name: 'request_id', type: 'text', nullable: true })
  requestId!: string | null;

  @Column({ type: 'text' })
  actor!: string;

  @Column({ name: 'on_behalf_of', type: 'text', nullable: true })
  onBehalfOf!: string | null;

  @Column({ name: 'recorded_at', type: 'timestamptz' })
  recordedAt!: Date;
}
