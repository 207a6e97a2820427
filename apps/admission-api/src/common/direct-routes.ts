import { ForbiddenException, type CanActivate, type ExceptionFilter, type ExecutionContext, type Type } from '@nestjs/common';
import { HTTP_CODE_METADATA, METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * A handler of a Nest controller that is also served without Nest's router: its path and
 * method as Express would match them, and how to call it with the request.
 */
export interface DirectRoute<C = unknown> {
  readonly controller: Type<C>;
  /** The handler's method name: its decorators (roles, body kind, HTTP code) are read from it. */
  readonly handler: string;
  readonly method: 'POST';
  /** The path as Express matches the handler's: any case, one optional trailing slash. */
  readonly path: RegExp;
  readonly call: (controller: C, request: Request) => Promise<unknown>;
}

/** The ExecutionContext Nest would build for the handler: what the guards and the filter read. */
function httpContext(controller: Type, handler: (...args: unknown[]) => unknown, request: Request, response: Response, next: NextFunction): ExecutionContext {
  const args = [request, response, next];
  const http = { getRequest: () => request, getResponse: () => response, getNext: () => next } as ReturnType<ExecutionContext['switchToHttp']>;
  const unsupported = (): never => {
    throw new Error('a direct route is HTTP only');
  };
  return {
    getClass: () => controller,
    getHandler: () => handler,
    getArgs: () => args,
    getArgByIndex: (index: number) => args[index],
    getType: () => 'http',
    switchToHttp: () => http,
    switchToRpc: unsupported,
    switchToWs: unsupported,
  } as ExecutionContext;
}

/**
 * The admission webhook's handlers, dispatched as plain functions before Nest's router: Nest's
 * router runs every request through its route layers, a per-handler execution context,
 * parameter factories and an rxjs pipeline for the answer, about a fifth of the API's CPU per
 * admission on the kube-apiserver's hottest path (docs/benchmarks.md, "The API against its
 * floor"). Here the same guard instances run in the same order with an ExecutionContext of the
 * same handler (roles, namespace scope, query hygiene, body limits: read from the handler's
 * decorators, so one declaration serves both ways), the same controller instance answers, with
 * the handler's `@HttpCode`, and the same exception filter turns errors into a Status. Every
 * other route goes on to Nest.
 */
export function directRoutes(routes: readonly DirectRoute[], instances: (controller: Type) => unknown, guards: readonly CanActivate[], filter: ExceptionFilter): RequestHandler {
  const resolved = routes.map((route) => {
    const handler = (route.controller.prototype as Record<string, (...args: unknown[]) => unknown>)[route.handler];
    if (typeof handler !== 'function' || !Reflect.hasMetadata(PATH_METADATA, handler)) throw new Error(`${route.controller.name}.${route.handler} is not a route handler`);
    const status = (Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined) ?? 201;
    return { route, handler, status, instance: instances(route.controller) };
  });
  return (request, response, next) => {
    const match = request.method === 'POST' ? resolved.find(({ route }) => route.path.test(request.path)) : undefined;
    if (!match) return next();
    const context = httpContext(match.route.controller, match.handler, request, response, next);
    void (async () => {
      try {
        for (const guard of guards) {
          // As Nest's GuardsConsumer: a guard that answers false (none of ours does; they throw) is a 403.
          if (!(await guard.canActivate(context))) throw new ForbiddenException('Forbidden resource');
        }
        const body = await match.route.call(match.instance, request);
        response.status(match.status).json(body);
      } catch (error) {
        filter.catch(error, context);
      }
    })().catch(next);
  };
}

/** Whether one of `routes` serves a request with this method and path (the front door's test, before Express). */
export function servedDirectly(routes: readonly DirectRoute[]): (method: string, path: string) => boolean {
  return (method, path) => routes.some((route) => route.method === method && route.path.test(path));
}

/** The method and path a handler's decorators declare (for tests that compare a route with its handler). */
export function declaredRoute(controller: Type, handler: string): { readonly method: number; readonly path: string } {
  const fn = (controller.prototype as Record<string, unknown>)[handler] as object;
  const base = String(Reflect.getMetadata(PATH_METADATA, controller) ?? '');
  return { method: Reflect.getMetadata(METHOD_METADATA, fn) as number, path: `/${[base, String(Reflect.getMetadata(PATH_METADATA, fn))].join('/')}` };
}
