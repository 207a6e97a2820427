import { Inject, Injectable, SetMetadata, type CanActivate, type ExecutionContext, type OnApplicationShutdown } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { AppConfig } from '@quota/config';
import type { Request, Response } from 'express';
import { APP_CONFIG } from '../../config/app-config.module.js';
import type { FieldSelection } from '@quota/domain';
import { BODY_KEY, type BodyKind, type BodySpec, JsonBodyReader } from './json-body.js';

/**
 * The handler takes a JSON body of this kind, read after the caller is authorized (JsonBodyGuard);
 * with a selection, only the selected fields are ever parsed (the body is a ScannedBody).
 */
export const JsonBody = (kind: BodyKind, selection?: FieldSelection): MethodDecorator =>
  SetMetadata(BODY_KEY, { kind, ...(selection ? { selection } : {}) } satisfies BodySpec);

/**
 * Reads the body of a `@JsonBody` handler, the last of the guards: after the AuthGuard (no body
 * is read for a caller without a token or role) and the query's hygiene. It was an interceptor,
 * and Nest runs each interceptor through an rxjs pipeline and an async scope of its own on every
 * request (docs/benchmarks.md, "The API against its floor"); a guard is a plain awaited
 * call, and errors reach the same KubeStatusFilter. Handlers without a body cost one lookup.
 */
@Injectable()
export class JsonBodyGuard implements CanActivate, OnApplicationShutdown {
  private readonly bodies: JsonBodyReader;

  constructor(
    @Inject(Reflector) private readonly reflector: Reflector,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.bodies = new JsonBodyReader(config);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.bodies.close();
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const spec = this.reflector.get<BodySpec | undefined>(BODY_KEY, context.getHandler());
    if (!spec) return true;
    const http = context.switchToHttp();
    await this.bodies.read(spec, http.getRequest<Request>(), http.getResponse<Response>());
    return true;
  }
}
