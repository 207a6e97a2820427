import 'reflect-metadata';
import { RequestMethod } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { declaredRoute } from '../common/direct-routes.js';
import { admissionEndpointOf } from '../observability/admission-timing.js';
import { WEBHOOK_ROUTES } from './webhook-routes.js';

describe('the webhook routes served without Nest’s router', () => {
  it.each(WEBHOOK_ROUTES.map((route) => [route.handler, route] as const))('%s: matches exactly the path and method its handler declares, as Express spells them', (_name, route) => {
    const declared = declaredRoute(route.controller, route.handler);
    expect(declared.method).toBe(RequestMethod.POST);
    for (const spelling of [declared.path, `${declared.path}/`, declared.path.toUpperCase()]) {
      expect(route.path.test(spelling), spelling).toBe(true);
      expect(admissionEndpointOf('POST', spelling)).toBe(route.handler);
    }
    for (const other of [`${declared.path}x`, `/x${declared.path}`, `${declared.path}//`]) expect(route.path.test(other), other).toBe(false);
  });
});
