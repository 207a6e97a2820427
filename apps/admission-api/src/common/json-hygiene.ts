import { BadRequestException, Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Request } from 'express';
import type { Observable } from 'rxjs';
import { kubeStatus } from '../errors/kube-status.js';

/**
 * Query strings PostgreSQL cannot store or compare (NUL; unpaired UTF-16 surrogates) are
 * refused before any handler runs. Found by fuzzing (test/e2e/fuzz.test.ts): each used to be
 * a 500. Bodies get the same check, and depth and size bounds, where they are read
 * (json-body.ts). Express's query parser makes flat values (strings or lists of strings),
 * and the URL is bounded by Node's header limit, so this walk is small.
 */
// eslint-disable-next-line no-control-regex -- NUL is exactly what this looks for
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function queryProblem(query: unknown): string | undefined {
  if (typeof query !== 'object' || query === null) return undefined;
  for (const [key, value] of Object.entries(query)) {
    if (UNSTORABLE.test(key)) return 'query has a key with NUL (\\u0000) or an unpaired UTF-16 surrogate';
    const values: unknown[] = Array.isArray(value) ? value : [value];
    if (values.some((v) => typeof v === 'string' && UNSTORABLE.test(v))) return `query.${key} must not contain NUL (\\u0000) or an unpaired UTF-16 surrogate`;
  }
  return undefined;
}

@Injectable()
export class JsonHygiene implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const problem = queryProblem(context.switchToHttp().getRequest<Request>().query);
    if (problem) {
      const field = problem.split(' ')[0] as string;
      throw new BadRequestException(kubeStatus(400, problem, { causes: [{ reason: 'FieldValueInvalid', field, message: problem }] }));
    }
    return next.handle();
  }
}
