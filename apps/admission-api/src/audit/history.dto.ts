import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsISO8601, IsOptional, Matches, Max, Min } from 'class-validator';
import { RFC3339, rfc3339Message } from '../common/query-formats.js';

const toInteger = ({ value }: { value: unknown }): unknown => (typeof value === 'string' && /^[0-9]{1,7}$/.test(value) ? Number(value) : value);


export const RESERVATION_STATES = ['reserved', 'committed', 'released'] as const;

/** `GET /v1/namespaces/{ns}/reservations` query. */
export class ReservationsQueryDto {
  @IsOptional()
  @IsIn(RESERVATION_STATES, { message: 'state must be one of reserved, committed, released' })
  state?: (typeof RESERVATION_STATES)[number];

  @IsOptional()
  @Matches(RFC3339, { message: rfc3339Message('olderThan') })
  @IsISO8601({ strict: true }, { message: rfc3339Message('olderThan') })
  olderThan?: string;

  /** Opaque: checked by decoding it (see decodeReservationCursor). */
  @IsOptional()
  @Matches(/^[A-Za-z0-9_-]{1,1024}$/, { message: 'after must be the `next` of a previous page' })
  after?: string;

  @IsOptional()
  @Transform(toInteger)
  @IsInt({ message: 'limit must be a whole number' })
  @Min(1)
  @Max(1000)
  limit?: number;
}
