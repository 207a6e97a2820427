import { HttpException } from '@nestjs/common';
import { DomainError } from '@quota/domain';
import { LedgerError } from '@quota/ledger';
import type { AdmissionOutcome } from './metrics.js';

/** Metadata of a handler whose latency goes into quota_ledger_admission_duration_seconds (`@TimedAdmission`, handler-interceptor.ts). */
export const ENDPOINT_KEY = 'quota-ledger:admission-endpoint';

/** What a handler's answer was, from its body and status. */
export function outcomeOf(body: unknown, statusCode: number): AdmissionOutcome {
  if (statusCode >= 500) return 'error';
  if (statusCode === 403) return 'denied';
  if (statusCode >= 400) return 'rejected';
  const review = (body as { response?: { allowed?: unknown } } | undefined)?.response;
  return review?.allowed === false ? 'denied' : 'allowed';
}

/** What a handler's failure was. */
export function failureOutcome(error: unknown): AdmissionOutcome {
  if (error instanceof HttpException) return error.getStatus() >= 500 ? 'error' : 'rejected';
  if (error instanceof DomainError) return 'rejected';
  if (error instanceof LedgerError) return error.code === 'Unavailable' ? 'error' : 'rejected';
  return 'error';
}
