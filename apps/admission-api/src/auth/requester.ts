import type { Request } from 'express';

/**
 * Who is asking. Until bearer tokens exist (a later issue), the caller may name itself in
 * `X-Remote-User` (as an authenticating proxy would); otherwise it is `anonymous`.
 */
export function requesterOf(request: Request): string {
  const header = request.headers['x-remote-user'];
  const name = Array.isArray(header) ? header[0] : header;
  return name && name.length <= 253 ? name : 'anonymous';
}
