import { IsIn, IsOptional, Matches } from 'class-validator';
import { OptionalRfc3339, OptionalWholeNumber, ReadAfterQuery } from '../common/kube/query-formats.js';

export const RESERVATION_STATES = ['reserved', 'committed', 'released'] as const;

/** `GET /v1/namespaces/{ns}/reservations` query. */
export class ReservationsQueryDto extends ReadAfterQuery {
  @IsOptional()
  @IsIn(RESERVATION_STATES, { message: 'state must be one of reserved, committed, released' })
  state?: (typeof RESERVATION_STATES)[number];

  @OptionalRfc3339('olderThan')
  olderThan?: string;

  /** Opaque: checked by decoding it (see decodeReservationCursor). */
  @IsOptional()
  @Matches(/^[A-Za-z0-9_-]{1,1024}$/, { message: 'after must be the `next` of a previous page' })
  after?: string;

  @OptionalWholeNumber('limit', 1, 1000)
  limit?: number;
}
