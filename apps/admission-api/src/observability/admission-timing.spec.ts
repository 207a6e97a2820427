import 'reflect-metadata';
import { RequestMethod, type Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { loadConfig } from '@quota/config';
import { describe, expect, it } from 'vitest';
import { AdmissionApiModule } from '../admission-api.module.js';
import { admissionEndpointOf, ENDPOINT_KEY, outcomeOf } from './admission-timing.js';

interface Route {
  readonly method: string;
  readonly path: string;
  /** The endpoint its handler's @TimedAdmission names, if any. */
  readonly endpoint: string | undefined;
}

/** Every route of the API, as Nest will register it, with a sample value in each parameter. */
function routes(): Route[] {
  const controllers = (AdmissionApiModule.forRoot(loadConfig({})).controllers ?? []) as Type[];
  return controllers.flatMap((controller) => {
    const base = String(Reflect.getMetadata(PATH_METADATA, controller) ?? '');
    const prototype = controller.prototype as Record<string, unknown>;
    return Object.getOwnPropertyNames(prototype)
      .map((key) => prototype[key])
      .filter((handler): handler is object => typeof handler === 'function' && Reflect.hasMetadata(PATH_METADATA, handler))
      .map((handler) => {
        const path =
          `/${[base, String(Reflect.getMetadata(PATH_METADATA, handler))].filter((p) => p !== '' && p !== '/').join('/')}`.replace(
            /:[A-Za-z]+/g,
            'team-a',
          );
        return {
          method: RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod],
          path,
          endpoint: Reflect.getMetadata(ENDPOINT_KEY, handler) as string | undefined,
        };
      });
  });
}

describe('admission timing', () => {
  it('finds, from the path alone, the endpoint of every handler that answers admissions, and of no other route', () => {
    const all = routes();
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
