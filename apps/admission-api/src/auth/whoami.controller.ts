import { Controller, Get, Req } from '@nestjs/common';
import type { AuthenticatedRequest } from './authenticator.js';
import { Allow, ReadsNoNamespace } from './roles.decorator.js';
import { ROLES } from './tokens.js';

export interface WhoAmI {
  readonly apiVersion: 'quota-ledger.io/v1';
  readonly kind: 'WhoAmI';
  readonly name: string;
  readonly roles: readonly string[];
  /** `"*"` for every namespace, else the namespaces the caller may act in. */
  readonly namespaces: '*' | readonly string[];
}

/**
 * Who the credentials belong to and what they may do (as `kubectl auth whoami`), so that a
 * client such as the dashboard can check a token once and offer only what its roles allow.
 */
@Controller('v1/whoami')
export class WhoAmIController {
  @Allow(...ROLES)
  @ReadsNoNamespace()
  @Get()
  whoami(@Req() request: AuthenticatedRequest): WhoAmI {
    // The guard put the principal there: every role may call this handler.
    const principal = request.principal!;
    return {
      apiVersion: 'quota-ledger.io/v1',
      kind: 'WhoAmI',
      name: principal.name,
      roles: [...principal.roles].sort(),
      namespaces: principal.namespaces === 'all' ? '*' : [...principal.namespaces].sort(),
    };
  }
}
