import { IsBoolean, IsIn, IsInt, IsObject, IsOptional, IsString, Length, Matches, Max, Min } from 'class-validator';
import { OmitType } from '@nestjs/swagger';

/** The body of `POST /v1/namespaces/{ns}/reservations` (see api.md). */
export class ReserveDto {
  /** Idempotency key: a repeated one returns the first answer. */
  @IsOptional()
  @IsString()
  @Length(1, 253)
  requestId?: string;

  @IsString()
  @Length(1, 63)
  @Matches(/^[A-Za-z][A-Za-z0-9]*$/, { message: 'kind must be a Kubernetes kind such as Pod' })
  kind!: string;

  @IsOptional()
  @IsString()
  @Length(1, 253)
  apiVersion?: string;

  /** `plural` or `plural.group`; overrides the resource of `kind`. */
  @IsOptional()
  @IsString()
  @Matches(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, {
    message: 'resource must be a plural resource name, optionally with its group (deployments.apps)',
  })
  @Length(1, 253)
  resource?: string;

  @IsOptional()
  @IsString()
  @Length(1, 253)
  name?: string;

  @IsOptional()
  @IsIn(['CREATE', 'UPDATE'])
  operation?: 'CREATE' | 'UPDATE';

  @IsOptional()
  @IsObject()
  object?: Record<string, unknown>;

  @IsOptional()
  @IsObject()
  oldObject?: Record<string, unknown>;

  @IsOptional()
  @IsObject()
  resources?: Record<string, unknown>;

  @IsOptional()
  @IsBoolean()
  dryRun?: boolean;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(365 * 24 * 3600)
  ttlSeconds?: number;

  /**
   * Wait in the namespace's queue when it does not fit, instead of a 403:
   * `{"seconds": 1..QUEUE_WAIT_MAX_SECONDS, "priority": -1000..1000 (default 0, higher first)}`.
   * Resource lists only. Answered 202 while it waits.
   */
  @IsOptional()
  @IsObject()
  wait?: Record<string, unknown>;
}

/**
 * The body of `POST /v1/namespaces/{ns}/whatif`: what a reserve would admit, without the
 * fields that only matter when something is written (idempotency key, dry-run flag).
 */
export class WhatIfDto extends OmitType(ReserveDto, ['requestId', 'dryRun', 'wait'] as const) {}
