import { BadRequestException, Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Request } from 'express';
import type { Observable } from 'rxjs';
import { kubeStatus } from '../errors/kube-status.js';

/**
 * What no handler should have to think about, refused before validation runs: JSON nested
 * deeper than any Kubernetes object we read (recursive walkers — class-transformer, error
 * formatting, JSON.stringify — would overflow the stack), and strings PostgreSQL cannot store
 * (NUL; unpaired UTF-16 surrogates, which jsonb refuses), in the body or the query. Found by
 * fuzzing (test/e2e/fuzz.test.ts): each used to be a 500, and a NUL in one request failed the
 * others batched with it.
 */
export const JSON_DEPTH_MAX = 64;

// eslint-disable-next-line no-control-regex -- NUL is exactly what this looks for
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

interface Problem {
  readonly field: string;
  readonly message: string;
}

/** Walks without recursion, so the walk itself cannot overflow. */
export function jsonProblem(root: unknown, rootName: string): Problem | undefined {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value: root, path: rootName, depth: 0 }];
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop() as { value: unknown; path: string; depth: number };
    if (typeof value === 'string') {
      if (UNSTORABLE.test(value)) return { field: path, message: 'must not contain NUL (\\u0000) or an unpaired UTF-16 surrogate' };
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= JSON_DEPTH_MAX) return { field: path, message: `is nested more than ${JSON_DEPTH_MAX} levels deep` };
    if (Array.isArray(value)) {
      value.forEach((item, i) => stack.push({ value: item, path: `${path}[${i}]`, depth: depth + 1 }));
      continue;
    }
    for (const [key, item] of Object.entries(value)) {
      if (UNSTORABLE.test(key)) return { field: path, message: 'has a key with NUL (\\u0000) or an unpaired UTF-16 surrogate' };
      stack.push({ value: item, path: `${path}.${key}`, depth: depth + 1 });
    }
  }
  return undefined;
}

@Injectable()
export class JsonHygiene implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<Request>();
    const problem = jsonProblem(request.query, 'query') ?? (request.body === undefined ? undefined : jsonProblem(request.body, 'body'));
    if (problem) {
      const message = `${problem.field} ${problem.message}`;
      throw new BadRequestException(kubeStatus(400, message, { causes: [{ reason: 'FieldValueInvalid', field: problem.field, message }] }));
    }
    return next.handle();
  }
}
