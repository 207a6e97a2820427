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
