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
