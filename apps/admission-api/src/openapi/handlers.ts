import type { INestApplication } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import { ModulesContainer } from '@nestjs/core';
import type { SchemaObject } from '@nestjs/swagger';
import { NamespacePipe, ObjectNamePipe } from '../common/kube/path-params.js';
import { ReservationIdPipe } from '../reservations/reservations.controller.js';
import { NAMESPACE_NAME_SCHEMA, OBJECT_NAME_SCHEMA, RESERVATION_ID_SCHEMA } from './schemas.js';

/** A route handler: its controller class and method, as @nestjs/swagger names its operation. */
export interface Handler {
  readonly controller: abstract new (...args: never[]) => object;
  readonly method: string;
}

/** Every method of every controller the application registered (routes or not: callers filter). */
export function handlersOf(app: INestApplication): Handler[] {
  const handlers: Handler[] = [];
  for (const module of app.get(ModulesContainer).values()) {
    for (const { metatype } of module.controllers.values()) {
      if (typeof metatype !== 'function') continue;
      const controller = metatype as Handler['controller'];
      for (const method of Object.getOwnPropertyNames(controller.prototype)) {
        if (method !== 'constructor') handlers.push({ controller, method });
      }
    }
  }
  return handlers;
}

/** The classes of a handler's parameters, as TypeScript emitted them. */
export function parameterTypes({ controller, method }: Handler): unknown[] {
  return (Reflect.getMetadata('design:paramtypes', controller.prototype, method) ?? []) as unknown[];
}

/** What each path-parameter pipe accepts: the pipe is the check, this its description. */
const PIPE_SCHEMAS = new Map<unknown, SchemaObject>([
  [NamespacePipe, NAMESPACE_NAME_SCHEMA],
  [ObjectNamePipe, OBJECT_NAME_SCHEMA],
  [ReservationIdPipe, RESERVATION_ID_SCHEMA],
]);

/** The schemas of a handler's path parameters, by name, from the pipes that check them (`@Param('name', Pipe)`). */
export function pathParameterSchemas({ controller, method }: Handler): Record<string, SchemaObject> {
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, method) ?? {}) as Record<
    string,
    { data?: unknown; pipes?: unknown[] }
  >;
  const schemas: Record<string, SchemaObject> = {};
  for (const [key, arg] of Object.entries(args)) {
    if (Number(key.split(':')[0]) !== RouteParamtypes.PARAM || typeof arg.data !== 'string') continue;
    const schema = (arg.pipes ?? []).map((pipe) => PIPE_SCHEMAS.get(pipe)).find((s) => s !== undefined);
    if (schema) schemas[arg.data] = schema;
  }
  return schemas;
}
