import type { INestApplication } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';

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
