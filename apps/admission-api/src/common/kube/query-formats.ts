import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsInt, IsISO8601, IsOptional, Matches, Max, Min } from 'class-validator';

/**
 * The formats the audit queries accept, checked before PostgreSQL sees them (it would answer
 * a 500 for a value the API let through: found by fuzzing).
 */

/** RFC 3339 with a zone; offsets up to ±15:59, what PostgreSQL's timestamptz takes. */
export const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-](0\d|1[0-5]):[0-5]\d)$/;
export const rfc3339Message = (field: string): string =>
  `${field} must be an RFC 3339 time with a zone (offset at most ±15:59), e.g. 2026-11-23T14:03:00Z`;

/** A ledger position or page cursor: a bigint, kept to 18 digits so it always fits one. */
export const POSITION = /^[0-9]{1,18}$/;

const toInteger = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && /^[0-9]{1,7}$/.test(value) ? Number(value) : value;

/** An optional query parameter holding an RFC 3339 time with a zone. */
export const OptionalRfc3339 = (field: string): PropertyDecorator =>
  applyDecorators(
    IsOptional(),
    Matches(RFC3339, { message: rfc3339Message(field) }),
    IsISO8601({ strict: true }, { message: rfc3339Message(field) }),
  );

/** An optional query parameter holding a whole number from `min` to `max` (`limit`, `points`). */
export const OptionalWholeNumber = (field: string, min: number, max: number): PropertyDecorator =>
  applyDecorators(IsOptional(), Transform(toInteger), IsInt({ message: `${field} must be a whole number` }), Min(min), Max(max));

/**
 * `?minPosition=`, accepted by every history read: it must see the ledger at least up to the
 * event at this position (a read replica waits to replay it, or the primary answers; see
 * libs/ledger read-path.ts and common/ledger/read-after.ts, which acts on it).
 */
export class ReadAfterQuery {
  @IsOptional()
  @Matches(POSITION, { message: "minPosition must be the position of an event (e.g. /usage's position), 1 to 18 digits" })
  minPosition?: string;
}
