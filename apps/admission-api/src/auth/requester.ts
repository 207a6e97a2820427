import type { Request } from 'express';
import type { AuthenticatedRequest } from './authenticator.js';

/**
 * Who is asking, as recorded in the ledger: the authenticated token's or certificate's name.
 * Without tokens (development) an authenticating proxy's `X-Remote-User` names the caller.
 */
export function requesterOf(request: Request): string {
  const principal = (request as AuthenticatedRequest).principal;
  if (principal) return principal.name;
  const header = request.headers['x-remote-user'];
  const name = Array.isArray(header) ? header[0] : header;
  return name && name.length <= 253 ? name : 'anonymous';
}

/** The namespaces the caller may read; undefined when it may read every one (unscoped, or development without tokens). */
export function namespaceScopeOf(request: Request): ReadonlySet<string> | undefined {
  const principal = (request as AuthenticatedRequest).principal;
  return principal && principal.namespaces !== 'all' ? principal.namespaces : undefined;
}

/**
 * The user a request says it relays (an AdmissionReview's `userInfo.username`), recorded as
 * "on behalf of" only when the principal is trusted to speak for users (`trustUserInfo`: the
 * kube-apiserver); from anyone else it is a claim we do not record.
 */
export function onBehalfOf(request: Request, claimed: string | undefined): { onBehalfOf?: string } {
  const principal = (request as AuthenticatedRequest).principal;
  return claimed && principal?.trustUserInfo ? { onBehalfOf: claimed } : {};
}
