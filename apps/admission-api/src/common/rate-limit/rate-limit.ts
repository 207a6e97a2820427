import { isIPv6 } from 'node:net';
import type { NextFunction, Request, Response } from 'express';
import type { Principal } from '../../auth/tokens.js';
import { kubeStatus } from '../../errors/kube-status.js';

export interface RateLimitOptions {
  /** Sustained requests per second per client; 0 turns the limit off. */
  readonly perSecond: number;
  /** Requests a client may make at once above its rate. */
  readonly burst: number;
  /** Most authenticated principals remembered (they are few: the tokens file names them). */
  readonly principalsMax?: number;
  /** Most client addresses remembered for unauthenticated callers; the least recently seen is forgotten first. */
  readonly addressesMax?: number;
  readonly now?: () => number;
  /** Who the request is (Authenticator.identify: headers and TLS session only); undefined: nobody. */
  readonly principalOf: (request: Request) => Principal | undefined;
  /** The unauthenticated webhook listener's own limit per address (perSecond 0: none), whatever `perSecond` says. */
  readonly unauthenticatedWebhook?: { readonly perSecond: number; readonly burst: number };
}

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Probes and scrapes are never limited. Express routes paths without regard to case or one
 * trailing slash, so `/HEALTHZ` and `/healthz/` reach the probe too and are exempt as well.
 */
const EXEMPT = new Set(['/healthz', '/readyz', '/metrics']);
export function isExempt(path: string): boolean {
  const lower = path.toLowerCase();
  return EXEMPT.has(lower.endsWith('/') ? lower.slice(0, -1) : lower);
}

/** The webhook's routes, which kube-apiserver calls for every write it admits (lower case, no trailing slash). */
const WEBHOOK_PATHS = new Set(['/v1/admission/validate', '/v1/admission/mutate']);

/**
 * The kube-apiserver calling the webhook: a POST to /v1/admission/validate or /mutate (spelled
 * as Express routes it) by an authenticated principal with the webhook role (the only role
 * those routes admit: the API server's token or client certificate). Under `failurePolicy: Fail`
 * a 429 to it denies the cluster write it reviews, so it is never limited here: the API server's
 * own priority and fairness already bounds what it sends. Every other route is limited as
 * usual, for the API server too.
 */
export function isClusterWriteReview(request: Request, principal: Principal | undefined): boolean {
  if (request.method !== 'POST' || !principal || principal.via === 'insecure-development' || principal.via === 'unauthenticated-webhook')
    return false;
  if (!principal.roles.has('webhook')) return false;
  const lower = request.path.toLowerCase();
  return WEBHOOK_PATHS.has(lower.endsWith('/') ? lower.slice(0, -1) : lower);
}

/** An IPv6 client is one /64 (what one host is usually given); an IPv4 client its address. */
export function clientAddress(request: Request): string {
  const address = request.socket.remoteAddress ?? '?';
  if (address.startsWith('::ffff:')) return address.slice(7);
  if (!isIPv6(address)) return address;
  const [head, tail = ''] = address.split('::');
  const left = (head ?? '').split(':').filter(Boolean);
  const right = tail.split(':').filter(Boolean);
  const groups = [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups.slice(0, 4).join(':')}::/64`;
}

/** Token buckets keyed by one kind of client, least recently seen forgotten first past `max`. */
class Buckets {
  private readonly buckets = new Map<string, Bucket>();
  constructor(private readonly max: number) {}

  /** Spends one token; the seconds to wait when there is none. */
  spend(key: string, at: number, perSecond: number, burst: number): number | undefined {
    let bucket = this.buckets.get(key);
    if (bucket) {
      this.buckets.delete(key);
      bucket.tokens = Math.min(burst, bucket.tokens + ((at - bucket.at) / 1000) * perSecond);
      bucket.at = at;
    } else {
      bucket = { tokens: burst, at };
      if (this.buckets.size >= this.max) this.buckets.delete(this.buckets.keys().next().value as string);
    }
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return undefined;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond));
  }
}

/**
 * A token bucket per client, as the API server's priority-and-fairness answers: 429 with
 * Retry-After. A client is the authenticated principal (a token's or certificate's name, so
 * no spelling of the header and no second connection gives a token a second bucket), else the
 * address (a /64 for IPv6) the request came from: a wrong or missing token is limited by
 * where it comes from. Principals and addresses are kept in separate tables, each bounded,
 * so however many addresses or bad tokens a stranger cycles through, no authenticated
 * client's bucket is forgotten (and refilled) on their account. Per replica. Probes, scrapes
 * and the kube-apiserver's reviews (isClusterWriteReview) are never limited.
 */
export function rateLimit(options: RateLimitOptions) {
  const now = options.now ?? (() => performance.now());
  const principals = new Buckets(options.principalsMax ?? 10_000);
  const addresses = new Buckets(options.addressesMax ?? 10_000);
  const strangers = new Buckets(options.addressesMax ?? 10_000);
  const refuse = (response: Response, wait: number, perSecond: number, burst: number): void => {
    response.setHeader('Retry-After', String(wait));
    response.status(429).json(
      kubeStatus(429, `too many requests from this client: at most ${perSecond} per second (burst ${burst}); retry after ${wait} s`, {
        retryAfterSeconds: wait,
      }),
    );
  };
  return (request: Request, response: Response, next: NextFunction): void => {
    const unauthenticated = options.unauthenticatedWebhook;
    if (isExempt(request.path) || (options.perSecond === 0 && !(unauthenticated && unauthenticated.perSecond > 0))) return next();
    const principal = options.principalOf(request);
    // On the unauthenticated webhook listener everyone is the same stranger, who may forge
    // reviews: by address, at the listener's own (much lower) rate.
    if (principal?.via === 'unauthenticated-webhook' && unauthenticated && unauthenticated.perSecond > 0) {
      const wait = strangers.spend(clientAddress(request), now(), unauthenticated.perSecond, unauthenticated.burst);
      return wait === undefined ? next() : refuse(response, wait, unauthenticated.perSecond, unauthenticated.burst);
    }
    if (options.perSecond === 0 || isClusterWriteReview(request, principal)) return next();
    // In development without tokens everyone is an anonymous admin named by a header: by address.
    const wait =
      principal && principal.via !== 'insecure-development' && principal.via !== 'unauthenticated-webhook'
        ? principals.spend(`${principal.via}:${principal.name}`, now(), options.perSecond, options.burst)
        : addresses.spend(clientAddress(request), now(), options.perSecond, options.burst);
    if (wait === undefined) return next();
    refuse(response, wait, options.perSecond, options.burst);
  };
}
