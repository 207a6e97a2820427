import { applyDecorators, Inject, Injectable, SetMetadata, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { INTERCEPTORS_METADATA } from '@nestjs/common/constants.js';
import { Reflector } from '@nestjs/core';
import type { AppConfig } from '@quota/config';
import type { Request, Response } from 'express';
import { Observable, type Subscription } from 'rxjs';
import { APP_CONFIG } from '../config/app-config.module.js';
import { ENDPOINT_KEY, noteAnswer } from '../observability/admission-timing.js';
import type { AdmissionEndpoint } from '../observability/metrics.js';
import { BODY_KEY, type BodyKind, JsonBodyReader } from './json-body.js';

/**
 * The one interceptor of the handlers that take a JSON body (`@JsonBody`) or answer admissions
 * (`@TimedAdmission`); other handlers have none. Nest runs each interceptor through rxjs
 * operators and an async scope of its own, about 25 µs of CPU per interceptor per request
 * (more than reading and parsing an AdmissionReview), so the body read and the note of what an
 * admission answered share one, written as a single Observable. The admission is timed by the
 * first middleware (observability/admission-timing.ts), which sees every answer, those sent
 * before any handler runs too; from here it only learns a webhook's denial, an HTTP 200.
 */
@Injectable()
export class HandlerInterceptor implements NestInterceptor {
  private readonly bodies: JsonBodyReader;

  constructor(
    @Inject(Reflector) private readonly reflector: Reflector,
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
    return new Observable<unknown>((subscriber) => {
      let inner: Subscription | undefined;
      let closed = false;
      const handle = (): void => {
        if (closed) return;
        inner = next.handle().subscribe({
          next: (body) => {
            if (endpoint) noteAnswer(response, body);
            subscriber.next(body);
          },
          error: (error: unknown) => subscriber.error(error),
          complete: () => subscriber.complete(),
        });
      };
      if (kind) this.bodies.read(kind, request, response).then(handle, (error: unknown) => subscriber.error(error));
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

/** The handler answers admissions of this endpoint: quota_ledger_admission_duration_seconds counts them, labelled by what the answer was. */
export const TimedAdmission = (endpoint: AdmissionEndpoint): MethodDecorator => applyDecorators(SetMetadata(ENDPOINT_KEY, endpoint), useHandlerInterceptor());
