import { createHash } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { kubeStatus } from '../errors/kube-status.js';

export interface RateLimitOptions {
  /** Sustained requests per second per client; 0 turns the limit off. */
  readonly perSecond: number;
  /** Requests a client may make at once above its rate. */
  readonly burst: number;
  /** Most clients remembered; the least recently seen is forgotten first. */
  readonly clientsMax?: number;
  readonly now?: () => number;
}

interface Bucket {
  tokens: number;
  at: number;
}

const EXEMPT = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * A token bucket per client: the bearer token (by digest: never kept in the clear) when one
 * is sent, else the remote address. Over the limit the answer is 429 with Retry-After, as the
 * API server's own priority-and-fairness does; probes and scrapes are never limited.
 * Per replica: N replicas admit N times the rate.
 */
export function rateLimit(options: RateLimitOptions) {
  const clientsMax = options.clientsMax ?? 10_000;
  const now = options.now ?? (() => performance.now());
  const buckets = new Map<string, Bucket>();
  return (request: Request, response: Response, next: NextFunction): void => {
    if (options.perSecond === 0 || EXEMPT.has(request.path)) return next();
    const authorization = request.headers.authorization;
    const key = authorization ? `t:${createHash('sha256').update(authorization).digest('base64url').slice(0, 22)}` : `a:${request.socket.remoteAddress ?? '?'}`;
    const at = now();
    let bucket = buckets.get(key);
    if (bucket) {
      buckets.delete(key);
      bucket.tokens = Math.min(options.burst, bucket.tokens + ((at - bucket.at) / 1000) * options.perSecond);
      bucket.at = at;
    } else {
      bucket = { tokens: options.burst, at };
      if (buckets.size >= clientsMax) buckets.delete(buckets.keys().next().value as string);
    }
    buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return next();
    }
    const retryAfterSeconds = Math.max(1, Math.ceil((1 - bucket.tokens) / options.perSecond));
    response.setHeader('Retry-After', String(retryAfterSeconds));
    response
      .status(429)
      .json(kubeStatus(429, `too many requests from this client: at most ${options.perSecond} per second (burst ${options.burst}); retry after ${retryAfterSeconds} s`, { retryAfterSeconds }));
  };
}
