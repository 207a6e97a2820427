import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsISO8601, IsOptional, Matches, Max, Min } from 'class-validator';

const toInteger = ({ value }: { value: unknown }): unknown => (typeof value === 'string' && /^[0-9]{1,7}$/.test(value) ? Number(value) : value);

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
const RFC3339_MESSAGE = (field: string): string => `${field} must be an RFC 3339 time with a zone, e.g. 2026-11-23T14:03:00Z`;

export const RESERVATION_STATES = ['reserved', 'committed', 'released'] as const;

/** `GET /v1/namespaces/{ns}/reservations` query. */
export class ReservationsQueryDto {
  @IsOptional()
  @IsIn(RESERVATION_STATES, { message: 'state must be one of reserved, committed, released' })
  state?: (typeof RESERVATION_STATES)[number];

  @IsOptional()
  @Matches(RFC3339, { message: RFC3339_MESSAGE('olderThan') })
  @IsISO8601({ strict: true }, { message: RFC3339_MESSAGE('olderThan') })
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
