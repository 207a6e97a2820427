import { BadRequestException, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { kubeStatus } from '../../errors/kube-status.js';

/**
 * Query strings PostgreSQL cannot store or compare (NUL; unpaired UTF-16 surrogates) are
 * refused before any handler runs. Found by fuzzing (test/e2e/fuzz.test.ts): each used to be
 * a 500. Bodies get the same check, and depth and size bounds, where they are read
 * (json-body.ts). Express's query parser makes flat values (strings or lists of strings),
 * and the URL is bounded by Node's header limit, so this walk is small.
 *
 * A guard after the AuthGuard (as an interceptor it ran at the same point, after every guard,
 * but an interceptor costs each request an rxjs pipeline and an async scope); a URL without a
 * query string is not parsed for one (Express parses `request.query` anew on every read).
 */
// eslint-disable-next-line no-control-regex -- NUL is exactly what this looks for
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function queryProblem(query: unknown): string | undefined {
  if (typeof query !== 'object' || query === null) return undefined;
  for (const [key, value] of Object.entries(query)) {
    if (UNSTORABLE.test(key)) return 'query has a key with NUL (\\u0000) or an unpaired UTF-16 surrogate';
    const values: unknown[] = Array.isArray(value) ? value : [value];
    if (values.some((v) => typeof v === 'string' && UNSTORABLE.test(v)))
      return `query.${key} must not contain NUL (\\u0000) or an unpaired UTF-16 surrogate`;
  }
  return undefined;
}

@Injectable()
export class JsonHygiene implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<Request>();
    if (!request.url.includes('?')) return true;
    const problem = queryProblem(request.query);
    if (problem) {
      const field = problem.split(' ')[0] as string;
      throw new BadRequestException(kubeStatus(400, problem, { causes: [{ reason: 'FieldValueInvalid', field, message: problem }] }));
    }
    return true;
  }
}
