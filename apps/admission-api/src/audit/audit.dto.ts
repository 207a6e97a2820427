import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsOptional, IsString, Length, Matches } from 'class-validator';
import { OptionalRfc3339, OptionalWholeNumber, POSITION, ReadAfterQuery } from '../common/kube/query-formats.js';

const toBoolean = ({ value }: { value: unknown }): unknown => (value === 'true' ? true : value === 'false' ? false : value);
/** `GET /v1/namespaces/{ns}/decisions` query. */
export class DecisionsQueryDto extends ReadAfterQuery {
  @IsOptional()
  @Transform(toBoolean)
  @IsBoolean({ message: 'allowed must be true or false' })
  allowed?: boolean;

  /** `true`: only dry runs and what-ifs (nothing was reserved); `false`: only decisions that counted. */
  @IsOptional()
  @Transform(toBoolean)
  @IsBoolean({ message: 'dryRun must be true or false' })
  dryRun?: boolean;

  @OptionalRfc3339('since')
  since?: string;

  @OptionalRfc3339('until')
  until?: string;

  @IsOptional()
  @IsString()
  @Length(1, 253)
  requester?: string;

  @IsOptional()
  @Matches(POSITION, { message: 'after must be the `next` of a previous page' })
  after?: string;

  /** `oldest` first (the default, as the export) or `newest` first (a log read from the top). */
  @IsOptional()
  @IsIn(['oldest', 'newest'], { message: 'order must be oldest or newest' })
  order?: 'oldest' | 'newest';

  @OptionalWholeNumber('limit', 1, 1000)
  limit?: number;
}

/** `GET /v1/namespaces/{ns}/events` query. */
export class EventsQueryDto extends ReadAfterQuery {
  @IsOptional()
  @Matches(POSITION, { message: 'after must be a position' })
  after?: string;

  @OptionalWholeNumber('limit', 1, 1000)
  limit?: number;
}

/** `GET /v1/namespaces/{ns}/usage` query: `at` asks for usage as it was at that instant. */
export class UsageQueryDto extends ReadAfterQuery {
  @OptionalRfc3339('at')
  at?: string;
}

/** `GET /v1/namespaces/{ns}/events/export` query: positions after `after`, up to `until` (inclusive). */
export class ExportQueryDto extends ReadAfterQuery {
  @IsOptional()
  @Matches(POSITION, { message: 'after must be a position' })
  after?: string;

  @IsOptional()
  @Matches(POSITION, { message: 'until must be a position' })
  until?: string;
}

/** `GET /v1/namespaces` query. */
export class NamespacesQueryDto extends ReadAfterQuery {
  @IsOptional()
  @Matches(/^[a-z0-9-]{1,63}$/, { message: 'contains must be part of a namespace name: lower-case letters, digits and -, at most 63' })
  contains?: string;

  @IsOptional()
  @Matches(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, { message: 'after must be the `next` of a previous page (a namespace name)' })
  after?: string;

  @OptionalWholeNumber('limit', 1, 1000)
  limit?: number;
}

/** `GET /v1/namespaces/{ns}/usage/series` query: the range (default the last 24 hours) and how many samples. */
export class UsageSeriesQueryDto extends ReadAfterQuery {
  @OptionalRfc3339('since')
  since?: string;

  @OptionalRfc3339('until')
  until?: string;

  @OptionalWholeNumber('points', 2, 500)
  points?: number;
}
