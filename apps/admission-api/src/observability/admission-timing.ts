import { type CallHandler, type ExecutionContext, HttpException, Inject, Injectable, type NestInterceptor, SetMetadata } from '@nestjs/common';
import { DomainError } from '@quota/domain';
import { LedgerError } from '@quota/ledger';
import { Reflector } from '@nestjs/core';
import type { Response } from 'express';
import { type Observable, tap } from 'rxjs';
import { type AdmissionEndpoint, type AdmissionOutcome, Metrics } from './metrics.js';

const ENDPOINT_KEY = 'quota-ledger:admission-endpoint';

/** Marks a handler whose latency goes into quota_ledger_admission_duration_seconds. */
export const TimedAdmission = (endpoint: AdmissionEndpoint): MethodDecorator => SetMetadata(ENDPOINT_KEY, endpoint);

function outcomeOf(body: unknown, statusCode: number): AdmissionOutcome {
  if (statusCode >= 500) return 'error';
  if (statusCode === 403) return 'denied';
  if (statusCode >= 400) return 'rejected';
  const review = (body as { response?: { allowed?: unknown } } | undefined)?.response;
  return review?.allowed === false ? 'denied' : 'allowed';
}

function failureOutcome(error: unknown): AdmissionOutcome {
  if (error instanceof HttpException) return error.getStatus() >= 500 ? 'error' : 'rejected';
  if (error instanceof DomainError) return 'rejected';
  if (error instanceof LedgerError) return error.code === 'Unavailable' ? 'error' : 'rejected';
  return 'error';
}

/** Times the marked handlers from the guard to the answer, labelled by what the answer was. */
@Injectable()
export class AdmissionTiming implements NestInterceptor {
  constructor(
    @Inject(Reflector) private readonly reflector: Reflector,
    @Inject(Metrics) private readonly metrics: Metrics,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const endpoint = this.reflector.get<AdmissionEndpoint | undefined>(ENDPOINT_KEY, context.getHandler());
    if (!endpoint) return next.handle();
    const started = process.hrtime.bigint();
    const seconds = (): number => Number(process.hrtime.bigint() - started) / 1e9;
    const response = context.switchToHttp().getResponse<Response>();
    return next.handle().pipe(
      tap({
        next: (body) => this.metrics.observeAdmission(endpoint, outcomeOf(body, response.statusCode), seconds()),
        error: (error: unknown) => this.metrics.observeAdmission(endpoint, failureOutcome(error), seconds()),
      }),
    );
  }
}
