import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Response } from 'express';
import { type AuthenticatedRequest, Authenticator, forbidden, unauthorized } from './authenticator.js';
import { NAMESPACE_IN_BODY_KEY, NO_NAMESPACE_KEY, ROLES_KEY } from './roles.decorator.js';
import type { Role } from './tokens.js';

/**
 * Every handler that names roles (`@Allow`) needs a principal holding one of them and, for a
 * namespace-scoped principal, a namespace in its scope: the path's `:namespace`, or the body's
 * when the handler says so (the webhook). Cluster-wide reads refuse scoped principals.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    @Inject(Reflector) private readonly reflector: Reflector,
    @Inject(Authenticator) private readonly authenticator: Authenticator,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const roles = this.reflector.getAllAndOverride<Role[] | undefined>(ROLES_KEY, [context.getHandler(), context.getClass()]);
    if (!roles) return true;
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    // Normally settled already, before the rate limit (app.ts); idempotent.
    const principal = this.authenticator.identify(request);
    if (!principal) {
      context.switchToHttp().getResponse<Response>().setHeader('WWW-Authenticate', 'Bearer realm="quota-ledger"');
      throw unauthorized(request.authFailure ?? 'authentication required');
    }
    const what = `${request.method} ${request.path}`;
    if (!roles.some((role) => principal.roles.has(role))) {
      throw forbidden(
        `"${principal.name}" (roles: ${[...principal.roles].join(', ')}) cannot ${what}: it needs the role ${roles.join(' or ')}`,
      );
    }
    if (principal.namespaces === 'all') return true;
    const namespace = request.params['namespace'];
    if (typeof namespace === 'string') {
      if (principal.namespaces.has(namespace)) return true;
      throw forbidden(
        `"${principal.name}" may act only in namespace${principal.namespaces.size > 1 ? 's' : ''} ${[...principal.namespaces].join(', ')}; ${what} is in namespace "${namespace}"`,
      );
    }
    if (this.reflector.get<boolean | undefined>(NAMESPACE_IN_BODY_KEY, context.getHandler())) return true;
    if (this.reflector.get<boolean | undefined>(NO_NAMESPACE_KEY, context.getHandler())) return true;
    throw forbidden(`"${principal.name}" is limited to some namespaces and cannot ${what}, which reads every namespace`);
  }
}
