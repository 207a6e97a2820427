import 'reflect-metadata';
import { NestFactory, Reflector } from '@nestjs/core';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { loadConfig } from '@quota/config';
import { beforeAll, describe, expect, it } from 'vitest';
import { AdmissionApiModule } from '../admission-api.module.js';
import { handlersOf } from '../openapi/handlers.js';
import { operationIdOf } from '../openapi/routes.js';
import { admissionEndpointOf, ENDPOINT_KEY, outcomeOf } from './admission-timing.js';

interface Route {
  readonly method: string;
  readonly path: string;
  /** The endpoint its handler's @TimedAdmission names, if any. */
  readonly endpoint: string | undefined;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/**
 * Every route of the API, as the framework registers it (the OpenAPI document @nestjs/swagger
 * builds from the controllers: every route is in it, which test/e2e/openapi.test.ts holds), with a
 * sample value in each parameter, and the endpoint its handler's @TimedAdmission names (read with
 * Nest's Reflector).
 */
async function apiRoutes(): Promise<Route[]> {
  const app = await NestFactory.create(AdmissionApiModule.forRoot(loadConfig({})), { preview: true, logger: false, abortOnError: false });
  try {
    const document = SwaggerModule.createDocument(app, new DocumentBuilder().build());
    const handlers = new Map(handlersOf(app).map((handler) => [operationIdOf(handler.controller, handler.method), handler]));
    const reflector = new Reflector();
    return Object.entries(document.paths).flatMap(([path, item]) =>
      METHODS.filter((method) => item[method]).map((method) => {
        const handler = handlers.get(item[method]?.operationId ?? '');
        const fn = handler ? (handler.controller.prototype as Record<string, () => unknown>)[handler.method] : undefined;
        return {
          method: method.toUpperCase(),
          path: path.replace(/\{[A-Za-z]+\}/g, 'team-a'),
          endpoint: fn ? reflector.get<string | undefined>(ENDPOINT_KEY, fn) : undefined,
        };
      }),
    );
  } finally {
    await app.close();
  }
}

let all: Route[] = [];
beforeAll(async () => {
  all = await apiRoutes();
});
describe('admission timing', () => {
  it('finds, from the path alone, the endpoint of every handler that answers admissions, and of no other route', () => {
    expect(all.length).toBeGreaterThan(40);
    expect(
      all
        .filter((r) => r.endpoint)
        .map((r) => r.endpoint)
        .sort(),
    ).toEqual(['mutate', 'reserve', 'validate']);
    for (const route of all) expect(admissionEndpointOf(route.method, route.path), `${route.method} ${route.path}`).toBe(route.endpoint);
  });

  it.each([
    ['/v1/admission/validate', 'validate'],
    ['/V1/Admission/VALIDATE/', 'validate'],
    ['/v1/admission/mutate', 'mutate'],
    ['/v1/namespaces/team-a/reservations', 'reserve'],
    ['/v1/namespaces/team-a/reservations/', 'reserve'],
    ['/v1/namespaces/team-a/reservations/r1/commit', undefined],
    ['/v1/admission/validate/x', undefined],
    ['/v1/admission', undefined],
  ])('counts a POST to %s as %s, as Express routes it (any case, one trailing slash)', (path, endpoint) => {
    expect(admissionEndpointOf('POST', path)).toBe(endpoint);
  });

  it.each([
    [200, false, 'allowed'],
    [201, false, 'allowed'],
    [200, true, 'denied'],
    [403, false, 'denied'],
    [400, false, 'rejected'],
    [401, false, 'rejected'],
    [413, false, 'rejected'],
    [429, false, 'rejected'],
    [500, false, 'error'],
    [503, false, 'error'],
  ])('names an answer %i (a denial in its body: %s) %s', (status, denied, outcome) => {
    expect(outcomeOf(status, denied)).toBe(outcome);
  });
});
