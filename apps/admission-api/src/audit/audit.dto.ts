import { Transform } from 'class-transformer';
import { IsBoolean, IsInt, IsISO8601, IsOptional, IsString, Length, Matches, Max, Min } from 'class-validator';

const toBoolean = ({ value }: { value: unknown }): unknown => (value === 'true' ? true : value === 'false' ? false : value);
const toInteger = ({ value }: { value: unknown }): unknown => (typeof value === 'string' && /^[0-9]{1,7}$/.test(value) ? Number(value) : value);

/** `GET /v1/namespaces/{ns}/decisions` query. */
export class DecisionsQueryDto {
  @IsOptional()
  @Transform(toBoolean)
  @IsBoolean({ message: 'allowed must be true or false' })
  allowed?: boolean;

  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'since must be an RFC 3339 time' })
  since?: string;

  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'until must be an RFC 3339 time' })
  until?: string;

  @IsOptional()
  @IsString()
  @Length(1, 253)
  requester?: string;

  @IsOptional()
  @Matches(/^[0-9]{1,19}$/, { message: 'after must be the `next` of a previous page' })
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
  @Matches(/^[0-9]{1,19}$/, { message: 'after must be a position' })
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
  @Matches(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/, { message: 'at must be an RFC 3339 time with a zone, e.g. 2026-11-23T14:03:00Z' })
  @IsISO8601({ strict: true }, { message: 'at must be an RFC 3339 time with a zone, e.g. 2026-11-23T14:03:00Z' })
  at?: string;
}

/** `GET /v1/namespaces/{ns}/events/export` query: positions after `after`, up to `until` (inclusive). */
export class ExportQueryDto {
  @IsOptional()
  @Matches(/^[0-9]{1,19}$/, { message: 'after must be a position' })
  after?: string;

  @IsOptional()
  @Matches(/^[0-9]{1,19}$/, { message: 'until must be a position' })
  until?: string;
}
