import { HttpException } from '@nestjs/common';
import type { AppConfig } from '@quota/config';
import bodyParser from 'body-parser';
import type { Request, Response } from 'express';
import { BodyRefused, kubeStatus } from '../errors/kube-status.js';
import type { AuthenticatedRequest } from '../auth/authenticator.js';
import { scanJson, type JsonLimits } from './json-scan.js';

/**
 * Request bodies are read only by the handlers that take one, and only after the guard has
 * authenticated and authorized the caller: there is no global body parser. A probe, a scrape,
 * an unknown path or a caller without a token never gets its body read (Node discards it),
 * whatever it sends. A handler marked `@JsonBody(...)` (body-guard.ts) gets its body
 * read with the limits of its kind, scanned once in linear time (json-scan.ts) and only then parsed.
 */
export const JSON_DEPTH_MAX = 64;

export interface BodyLimits extends JsonLimits {
  /** Largest body, in bytes; larger is 413. */
  readonly bytesMax: number;
}

export type BodyKind = 'admission' | 'definition';

/**
 * - admission: an AdmissionReview (object and oldObject, each up to Kubernetes' ~1.5 MiB) or a
 *   REST reservation: BODY_LIMIT_BYTES, and at most 200,000 values (a 1.5 MiB ConfigMap of
 *   short keys has ~50,000; two of them and their managedFields stay well under).
 * - definition: a ResourceQuota or LimitRange (64 resources per list, labels and annotations
 *   within Kubernetes' 256 KiB): 512 KiB and 20,000 values.
 */
export function bodyLimits(kind: BodyKind, config: Pick<AppConfig, 'bodyLimitBytes'>): BodyLimits {
  return kind === 'admission'
    ? { bytesMax: config.bodyLimitBytes, depthMax: JSON_DEPTH_MAX, valuesMax: 200_000 }
    : { bytesMax: Math.min(config.bodyLimitBytes, 512 * 1024), depthMax: JSON_DEPTH_MAX, valuesMax: 20_000 };
}

export const BODY_KEY = 'quota-ledger:json-body';

function refused(code: number, message: string, field?: string): BodyRefused {
  return new BodyRefused(kubeStatus(code, field ? `${field} ${message}` : message, field ? { causes: [{ reason: 'FieldValueInvalid', field, message: `${field} ${message}` }] } : undefined));
}

/**
 * Every body being read at once shares one budget of bytes (BODIES_IN_FLIGHT_MAX_BYTES), so
 * many slow or large bodies cannot together exhaust the process: past it, 429. One principal
 * may hold at most a quarter of it, so a tenant sending slow bodies on many connections cannot
 * take the budget from everyone else (the kube-apiserver included).
 */
export class InFlightBudget {
  private used = 0;
  private readonly byPrincipal = new Map<string, number>();
  constructor(private readonly max: number) {}

  take(principal: string, bytes: number): boolean {
    const held = this.byPrincipal.get(principal) ?? 0;
    // A body of the largest size is always readable by one principal alone.
    const share = Math.max(Math.floor(this.max / 4), bytes);
    if (this.used + bytes > this.max || held + bytes > share) return false;
    this.used += bytes;
    this.byPrincipal.set(principal, held + bytes);
    return true;
  }

  give(principal: string, bytes: number): void {
    this.used -= bytes;
    const held = (this.byPrincipal.get(principal) ?? 0) - bytes;
    if (held > 0) this.byPrincipal.set(principal, held);
    else this.byPrincipal.delete(principal);
  }
}

/** Reads the bodies of `@JsonBody` handlers (one reader, so one in-flight budget, per application). */
export class JsonBodyReader {
  private readonly parsers = new Map<BodyKind, ReturnType<typeof bodyParser.json>>();
  private readonly limits = new Map<BodyKind, BodyLimits>();
  private readonly budget: InFlightBudget;

  constructor(config: AppConfig) {
    this.budget = new InFlightBudget(config.bodiesInFlightMaxBytes);
    for (const kind of ['admission', 'definition'] as const) {
      const limits = bodyLimits(kind, config);
      this.limits.set(kind, limits);
      this.parsers.set(
        kind,
        bodyParser.json({
          limit: limits.bytesMax,
          strict: true,
          // Runs on the raw bytes before JSON.parse: the only walk a body gets before it is bounded.
          verify: (_request, _response, bytes, encoding) => {
            if (!/^utf-?8$/i.test(encoding)) throw refused(415, 'the request body must be UTF-8 JSON');
            const problem = scanJson(bytes, limits);
            if (problem) throw refused(400, problem.message, problem.field);
          },
        }),
      );
    }
  }

  /** Reads, scans and parses the body into `request.body`; rejects with the refusal. */
  async read(kind: BodyKind, request: Request, response: Response): Promise<void> {
    const limits = this.limits.get(kind) as BodyLimits;
    const declared = Number(request.headers['content-length']);
    // What the body may occupy once read: its declared length, or the limit when it is
    // compressed or chunked. One declared over the limit is refused by the parser unread.
    const compressed = (request.headers['content-encoding'] ?? 'identity') !== 'identity';
    const reserve = Number.isSafeInteger(declared) && declared >= 0 && !compressed ? Math.min(declared, limits.bytesMax) : limits.bytesMax;
    // The guard has run: the principal is known.
    const principal = (request as AuthenticatedRequest).principal?.name ?? '';
    if (!this.budget.take(principal, reserve)) {
      response.setHeader('Retry-After', '1');
      throw new HttpException(kubeStatus(429, 'the server is reading as many request bodies as it holds at once; retry in a second', { retryAfterSeconds: 1 }), 429);
    }
    try {
      await new Promise<void>((resolve, reject) => {
        (this.parsers.get(kind) as ReturnType<typeof bodyParser.json>)(request, response, (error?: unknown) => (error ? reject(error) : resolve()));
      });
    } finally {
      this.budget.give(principal, reserve);
    }
  }
}
