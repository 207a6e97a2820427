import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth, ApiExtension } from '@nestjs/swagger';
import type { Role } from './tokens.js';

export const ROLES_KEY = 'quota-ledger:roles';
export const NAMESPACE_IN_BODY_KEY = 'quota-ledger:namespace-in-body';
export const NO_NAMESPACE_KEY = 'quota-ledger:no-namespace';

/** Roles that may call the handler (any one suffices). A handler without it is open to every caller, authenticated or not. */
export const Allow = (...roles: Role[]): MethodDecorator & ClassDecorator =>
  // The OpenAPI document at /docs shows the same roles, read from this one decorator.
  applyDecorators(SetMetadata(ROLES_KEY, roles), ApiBearerAuth(), ApiExtension('x-quota-ledger-roles', roles));

/**
 * The handler's namespace is in the body, not the path (the webhook's AdmissionReview): the
 * guard lets a namespace-scoped principal through and the handler checks the namespace with
 * `assertNamespaceAllowed` once it has parsed the body.
 */
export const NamespaceInBody = (): MethodDecorator => SetMetadata(NAMESPACE_IN_BODY_KEY, true);

/**
 * The handler reads no namespace's data (it answers about the caller itself), so a
 * namespace-scoped principal may call it like any other.
 */
export const ReadsNoNamespace = (): MethodDecorator => SetMetadata(NO_NAMESPACE_KEY, true);
