import { SetMetadata } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import type { AdmissionEndpoint, AdmissionOutcome, Metrics } from './metrics.js';

/** Metadata of a handler answering an admission (`@TimedAdmission`): the endpoint its answers are counted under. */
export const ENDPOINT_KEY = 'quota-ledger:admission-endpoint';

/**
 * The handler answers admissions of this endpoint: quota_ledger_admission_duration_seconds counts
 * them, labelled by what the answer was. The timing itself is the first middleware's
 * (timeAdmissions), which finds the endpoint from the path; this marks the handlers so that
 * admission-timing.spec.ts can check the two agree.
 */
export const TimedAdmission = (endpoint: AdmissionEndpoint): MethodDecorator => SetMetadata(ENDPOINT_KEY, endpoint);

/**
 * The admission routes as Express matches them (any case, one trailing slash), for the answers
 * sent before routing (the rate limit's 429) as well as after. admission-timing.spec.ts checks
 * that they agree with the routes of the handlers that carry `@TimedAdmission`.
 */
export const ADMISSION_PATHS: Readonly<Record<AdmissionEndpoint, RegExp>> = {
  validate: /^\/v1\/admission\/validate\/?$/i,
  mutate: /^\/v1\/admission\/mutate\/?$/i,
  reserve: /^\/v1\/namespaces\/[^/]+\/reservations\/?$/i,
};
const ENDPOINTS = Object.entries(ADMISSION_PATHS).map(([endpoint, pattern]) => [pattern, endpoint as AdmissionEndpoint] as const);

/** Which admission endpoint a request is for, if any. */
export function admissionEndpointOf(method: string, path: string): AdmissionEndpoint | undefined {
  if (method !== 'POST') return undefined;
  return ENDPOINTS.find(([pattern]) => pattern.test(path))?.[1];
}

/** A webhook's denial is an HTTP 200 whose body says `allowed: false`: the handler notes it here. */
const deniedInBody = new WeakSet<Response>();

/** Called by the webhook's handlers with the review they answer: a denial in the body counts as one. */
export function noteAnswer<T extends { readonly response?: { readonly allowed?: unknown } }>(response: Response, body: T): T {
  if (body.response?.allowed === false) deniedInBody.add(response);
  return body;
}

/** What an answer was: error = 5xx, denied = 403 or a review that says so, rejected = any other 4xx. */
export function outcomeOf(statusCode: number, denied: boolean): AdmissionOutcome {
  if (statusCode >= 500) return 'error';
  if (statusCode === 403 || denied) return 'denied';
  if (statusCode >= 400) return 'rejected';
  return 'allowed';
}

/**
 * Times every answer of the admission endpoints, from the first middleware to the last byte
 * handed to the socket, whoever sent it: the handler, a guard (401, 403), the body reader
 * (400, 413, 415, 429), the rate limit (429) or the error filter (5xx). A request whose client
 * went away before any answer was sent is not counted: nothing was answered.
 */
export function timeAdmissions(metrics: Metrics) {
  return (request: Request, response: Response, next: NextFunction): void => {
    const endpoint = admissionEndpointOf(request.method, request.path);
    if (endpoint) {
      const started = process.hrtime.bigint();
      response.once('finish', () => {
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        metrics.observeAdmission(endpoint, outcomeOf(response.statusCode, deniedInBody.has(response)), response.statusCode, seconds);
      });
    }
    next();
  };
}
