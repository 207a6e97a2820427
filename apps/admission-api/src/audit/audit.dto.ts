import { Transform } from 'class-transformer';
import { IsBoolean, IsInt, IsISO8601, IsOptional, IsString, Length, Matches, Max, Min } from 'class-validator';
import { POSITION, RFC3339, rfc3339Message } from '../common/query-formats.js';

const toBoolean = ({ value }: { value: unknown }): unknown => (value === 'true' ? true : value === 'false' ? false : value);
const toInteger = ({ value }: { value: unknown }): unknown => (typeof value === 'string' && /^[0-9]{1,7}$/.test(value) ? Number(value) : value);

/** `GET /v1/namespaces/{ns}/decisions` query. */
export class DecisionsQueryDto {
  @IsOptional()
  @Transform(toBoolean)
  @IsBoolean({ message: 'allowed must be true or false' })
  allowed?: boolean;

  @IsOptional()
  @Matches(RFC3339, { message: rfc3339Message('since') })
  @IsISO8601({ strict: true }, { message: rfc3339Message('since') })
  since?: string;

  @IsOptional()
  @Matches(RFC3339, { message: rfc3339Message('until') })
  @IsISO8601({ strict: true }, { message: rfc3339Message('until') })
  until?: string;

  @IsOptional()
  @IsString()
  @Length(1, 253)
  requester?: string;

  @IsOptional()
  @Matches(POSITION, { message: 'after must be the `next` of a previous page' })
  after?: string;

  @IsOptional()
  @Transform(toInteger)
  @IsInt({ message: 'limit must be a whole number' })
  @Min(1)
  @Max(1000)
  limit?: number;
}

/** `GET /v1/namespaces/{ns}/events` query. */
export class EventsQueryDto {
  @IsOptional()
  @Matches(POSITION, { message: 'after must be a position' })
  after?: string;

  @IsOptional()
  @Transform(toInteger)
  @IsInt({ message: 'limit must be a whole number' })
  @Min(1)
  @Max(1000)
  limit?: number;
}

/** `GET /v1/namespaces/{ns}/usage` query: `at` asks for usage as it was at that instant. */
export class UsageQueryDto {
  @IsOptional()
  @Matches(RFC3339, { message: rfc3339Message('at') })
  @IsISO8601({ strict: true }, { message: rfc3339Message('at') })
  at?: string;
}

/** `GET /v1/namespaces/{ns}/events/export` query: positions after `after`, up to `until` (inclusive). */
export class ExportQueryDto {
  @IsOptional()
  @Matches(POSITION, { message: 'after must be a position' })
  after?: string;

  @IsOptional()
  @Matches(POSITION, { message: 'until must be a position' })
  until?: string;
}

/** `GET /v1/namespaces` query. */
export class NamespacesQueryDto {
  @IsOptional()
  @Matches(/^[a-z0-9-]{1,63}$/, { message: 'contains must be part of a namespace name: lower-case letters, digits and -, at most 63' })
  contains?: string;

  @IsOptional()
  @Matches(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, { message: 'after must be the `next` of a previous page (a namespace name)' })
  after?: string;

  @IsOptional()
  @Transform(toInteger)
  @IsInt({ message: 'limit must be a whole number' })
  @Min(1)
  @Max(1000)
  limit?: number;
}

/** `GET /v1/namespaces/{ns}/usage/series` query: the range (default the last 24 hours) and how many samples. */
export class UsageSeriesQueryDto {
  @IsOptional()
  @Matches(RFC3339, { message: rfc3339Message('since') })
  @IsISO8601({ strict: true }, { message: rfc3339Message('since') })
  since?: string;

  @IsOptional()
  @Matches(RFC3339, { message: rfc3339Message('until') })
  @IsISO8601({ strict: true }, { message: rfc3339Message('until') })
  until?: string;

  @IsOptional()
  @Transform(toInteger)
  @IsInt({ message: 'points must be a whole number' })
  @Min(2)
  @Max(500)
  points?: number;
}
