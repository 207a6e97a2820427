import { applyDecorators, Inject, Injectable, SetMetadata, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { INTERCEPTORS_METADATA } from '@nestjs/common/constants.js';
import { Reflector } from '@nestjs/core';
import type { AppConfig } from '@quota/config';
import type { Request, Response } from 'express';
import { Observable, type Subscription } from 'rxjs';
import { APP_CONFIG } from '../config/app-config.module.js';
import { ENDPOINT_KEY, failureOutcome, outcomeOf } from '../observability/admission-timing.js';
import { type AdmissionEndpoint, type AdmissionOutcome, Metrics } from '../observability/metrics.js';
import { BODY_KEY, type BodyKind, JsonBodyReader } from './json-body.js';

/**
 * The one interceptor of the handlers that take a JSON body (`@JsonBody`) or are timed
 * (`@TimedAdmission`); other handlers have none. Nest runs each interceptor through rxjs
 * operators and an async scope of its own, about 25 µs of CPU per interceptor per request
 * (more than reading and parsing an AdmissionReview), so the timing and the body read share
 * one, written as a single Observable. The timing wraps the body read: an admission is timed
 * from its guard to its answer, and a body refused (400, 413, 415, 429) counts as rejected.
 */
@Injectable()
export class HandlerInterceptor implements NestInterceptor {
  private readonly bodies: JsonBodyReader;

  constructor(
    @Inject(Reflector) private readonly reflector: Reflector,
    @Inject(Metrics) private readonly metrics: Metrics,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.bodies = new JsonBodyReader(config);
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const handler = context.getHandler();
    const kind = this.reflector.get<BodyKind | undefined>(BODY_KEY, handler);
    const endpoint = this.reflector.get<AdmissionEndpoint | undefined>(ENDPOINT_KEY, handler);
    if (!kind && !endpoint) return next.handle();
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    const started = process.hrtime.bigint();
    const observe = (outcome: AdmissionOutcome): void => {
      if (endpoint) this.metrics.observeAdmission(endpoint, outcome, Number(process.hrtime.bigint() - started) / 1e9);
    };
    return new Observable<unknown>((subscriber) => {
      let inner: Subscription | undefined;
      let closed = false;
      const fail = (error: unknown): void => {
        observe(failureOutcome(error));
        subscriber.error(error);
      };
      const handle = (): void => {
        if (closed) return;
        inner = next.handle().subscribe({
          next: (body) => {
            observe(outcomeOf(body, response.statusCode));
            subscriber.next(body);
          },
          error: fail,
          complete: () => subscriber.complete(),
        });
      };
      if (kind) this.bodies.read(kind, request, response).then(handle, fail);
      else handle();
      return () => {
        closed = true;
        inner?.unsubscribe();
      };
    });
  }
}

/** Adds the HandlerInterceptor to a handler once, whichever of its decorators asks first. */
function useHandlerInterceptor(): MethodDecorator {
  return (_target, _key, descriptor) => {
    const handler = descriptor.value as object;
    const interceptors = (Reflect.getMetadata(INTERCEPTORS_METADATA, handler) as unknown[] | undefined) ?? [];
    if (!interceptors.includes(HandlerInterceptor)) Reflect.defineMetadata(INTERCEPTORS_METADATA, [...interceptors, HandlerInterceptor], handler);
    return descriptor;
  };
}

/** The handler takes a JSON body of this kind, read after its guard (json-body.ts). */
export const JsonBody = (kind: BodyKind): MethodDecorator => applyDecorators(SetMetadata(BODY_KEY, kind), useHandlerInterceptor());

/** The handler's latency goes into quota_ledger_admission_duration_seconds, labelled by what the answer was. */
export const TimedAdmission = (endpoint: AdmissionEndpoint): MethodDecorator => applyDecorators(SetMetadata(ENDPOINT_KEY, endpoint), useHandlerInterceptor());
