import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Readable, Transform } from 'node:stream';
import { HttpException } from '@nestjs/common';
import type { AppConfig } from '@quota/config';
import contentType from 'content-type';
import type { Request, Response } from 'express';
import getRawBody from 'raw-body';
import type { FieldSelection } from '@quota/domain';
import { BodyRefused, kubeStatus } from '../../errors/kube-status.js';
import type { AuthenticatedRequest } from '../../auth/authenticator.js';
import { scanJson, type JsonLimits, type JsonScan } from '../json-scan/json-scan.js';
import { ScanPool } from '../json-scan/scan-pool.js';
import { ScannedBody } from '../json-scan/json-select.js';
import { writeContinueIfExpected } from './expect-continue.js';
import { Gate, GateBusy } from './body-gate.js';
import { closeAfterAnswer } from './lingering-close.js';

/**
 * Request bodies are read only by the handlers that take one, and only after the guard has
 * authenticated and authorized the caller: there is no global body parser. A probe, a scrape,
 * an unknown path or a caller without a token never gets its body read (Node discards it),
 * whatever it sends. A handler marked `@JsonBody(...)` (body-guard.ts) gets its body read with
 * the limits of its kind and scanned once in linear time (json-scan.ts); a review is then read
 * only where admission reads it (scanned-body.ts), any other body parsed whole.
 *
 * A body refused while it is read (too large, or not the JSON it must be) is answered at once,
 * with `Connection: close`, and the rest of it is never parsed (only read and dropped for a
 * moment, so that the client reads the answer: lingering-close.ts): a body over the limit is 413
 * as soon as its length says so or its bytes pass the limit, however it is framed.
 */
export const JSON_DEPTH_MAX = 64;

export interface BodyLimits extends JsonLimits {
  /** Largest body, in bytes; larger is 413. */
  readonly bytesMax: number;
}

/** admission: a REST reservation or the kube-apiserver's AdmissionReview; definition: a quota, LimitRange or namespace. */
export type BodyKind = 'admission' | 'definition';

/** What a `@JsonBody` handler takes: the kind (its limits) and, for a body read only in part, the fields it reads. */
export interface BodySpec {
  readonly kind: BodyKind;
  readonly selection?: FieldSelection;
}

/**
 * - admission: an AdmissionReview (object and oldObject, each up to Kubernetes'
 *   ~1.5 MiB) or a REST reservation: BODY_LIMIT_BYTES, and at most 200,000 values (a 1.5 MiB
 *   ConfigMap of short keys has ~50,000; two of them and their managedFields stay well under).
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
  return new BodyRefused(
    kubeStatus(
      code,
      field ? `${field} ${message}` : message,
      field ? { causes: [{ reason: 'FieldValueInvalid', field, message: `${field} ${message}` }] } : undefined,
    ),
  );
}

/** A body this small is cheap to read and scan: it is never refused for the room large ones take, and is scanned at once. */
export const SMALL_BODY_BYTES = 64 * 1024;

/** Large bodies read and scanned at a time (body-gate.ts); the rest wait, unread. */
export const LARGE_BODIES_AT_ONCE = 4;

/** The longest a large body waits for its turn: half the kube-apiserver's default webhook timeout (10 s). */
export const LARGE_BODY_WAIT_MS = 5_000;

/**
 * Every body being read at once shares one budget of bytes (BODIES_IN_FLIGHT_MAX_BYTES), so
 * many slow or large bodies cannot together exhaust the process: past it, 429. Large bodies
 * (over SMALL_BODY_BYTES) may take all but an eighth of it, and one principal's at most a
 * quarter, so a tenant sending slow bodies on many connections cannot take the budget from
 * everyone else; and since every tenant's pods reach the webhook as the kube-apiserver, one
 * tenant's large pods never take the room of the small reviews that are everyone else's.
 */
export class InFlightBudget {
  private used = 0;
  private large = 0;
  private readonly byPrincipal = new Map<string, number>();
  constructor(private readonly max: number) {}

  take(principal: string, bytes: number): boolean {
    if (this.used + bytes > this.max) return false;
    if (bytes > SMALL_BODY_BYTES) {
      const held = this.byPrincipal.get(principal) ?? 0;
      // A body of the largest size is always readable by one principal alone.
      const share = Math.max(Math.floor(this.max / 4), bytes);
      if (this.large + bytes > this.max - Math.floor(this.max / 8) || held + bytes > share) return false;
      this.large += bytes;
      this.byPrincipal.set(principal, held + bytes);
    }
    this.used += bytes;
    return true;
  }

  give(principal: string, bytes: number): void {
    this.used -= bytes;
    if (bytes <= SMALL_BODY_BYTES) return;
    this.large -= bytes;
    const held = (this.byPrincipal.get(principal) ?? 0) - bytes;
    if (held > 0) this.byPrincipal.set(principal, held);
    else this.byPrincipal.delete(principal);
  }
}

const INFLATERS: Readonly<Record<string, () => Transform>> = { deflate: createInflate, gzip: createGunzip, br: createBrotliDecompress };

/** The inflater of the body's Content-Encoding (none for identity); one the server cannot inflate is 415. */
function inflaterOf(request: Request): Transform | undefined {
  const encoding = (request.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding === 'identity') return undefined;
  const inflate = Object.prototype.hasOwnProperty.call(INFLATERS, encoding) ? INFLATERS[encoding] : undefined;
  if (!inflate) throw refused(415, `unsupported content encoding "${encoding}"`);
  return inflate();
}

/** As body-parser's json() sees a request: whether it has a body at all (a length or chunks). */
function hasBody(request: Request): boolean {
  return request.headers['transfer-encoding'] !== undefined || !Number.isNaN(Number(request.headers['content-length']));
}

/** The media type and charset of the body; undefined for a Content-Type that does not parse (no JSON body, then). */
function mediaOf(request: Request): { readonly type: string; readonly charset: string | undefined } | undefined {
  try {
    const parsed = contentType.parse(request.headers['content-type'] ?? '');
    return { type: parsed.type, charset: parsed.parameters['charset']?.toLowerCase() };
  } catch {
    return undefined;
  }
}

/** A read that failed, as the Status to answer: raw-body's and zlib's errors carry a type or a code. */
function readFailure(error: unknown): Error {
  if (error instanceof BodyRefused || error instanceof HttpException) return error;
  const type = (error as { type?: unknown } | undefined)?.type;
  if (type === 'entity.too.large') return refused(413, 'the request body is larger than the server accepts');
  // Aborted, truncated, a length that lies, compressed data that does not inflate.
  return refused(400, 'the request body could not be read');
}

/** Reads the bodies of `@JsonBody` handlers (one reader, so one in-flight budget, per application). */
export class JsonBodyReader {
  private readonly limits = new Map<BodyKind, BodyLimits>();
  private readonly budget: InFlightBudget;
  private readonly large = new Gate(LARGE_BODIES_AT_ONCE, LARGE_BODY_WAIT_MS);
  private readonly scans = new ScanPool();

  constructor(config: AppConfig) {
    this.budget = new InFlightBudget(config.bodiesInFlightMaxBytes);
    for (const kind of ['admission', 'definition'] as const) this.limits.set(kind, bodyLimits(kind, config));
  }

  /** Stops the scanning threads (the application is closing). */
  close(): Promise<void> {
    return this.scans.close();
  }

  /** Reads, scans and parses the body into `request.body` (a ScannedBody when the spec selects); rejects with the refusal. */
  async read({ kind, selection }: BodySpec, request: Request, response: Response): Promise<void> {
    request.body = undefined;
    // As body-parser's json(): no body, or not application/json, is no body (the handler says what it lacks).
    const media = hasBody(request) ? mediaOf(request) : undefined;
    if (media?.type !== 'application/json') return;
    const limits = this.limits.get(kind) as BodyLimits;
    // The guard has run: the principal is known.
    const principal = (request as AuthenticatedRequest).principal?.name ?? '';
    let reserved = 0;
    let release: (() => void) | undefined;
    try {
      let bytes: Buffer;
      try {
        if (media.charset !== undefined && !/^utf-?8$/.test(media.charset)) throw refused(415, 'the request body must be UTF-8 JSON');
        const size = expectedSize(request, limits);
        // A large body (or one of unknown size) waits for its turn, unread; a small one is read at once.
        if (size > SMALL_BODY_BYTES) release = await this.large.acquire(request).catch(busy);
        reserved = this.reserve(response, principal, size);
        bytes = await this.bytesOf(request, response, limits);
      } catch (error) {
        // Refused before its end: the rest is not parsed (only dropped, lingering-close.ts), and the connection cannot carry another request.
        response.setHeader('Connection', 'close');
        response.once('finish', () => closeAfterAnswer(request));
        throw readFailure(error);
      }
      // A large body is scanned off the event loop (scan-pool.ts), a small one at once.
      const scan = bytes.length > SMALL_BODY_BYTES ? await this.scans.scan(bytes, limits, selection) : scanJson(bytes, limits, selection);
      request.body = decoded(bytes, scan);
    } finally {
      release?.();
      if (reserved > 0) this.budget.give(principal, reserved);
    }
  }

  /** Takes the room the body will occupy once read (expectedSize). */
  private reserve(response: Response, principal: string, size: number): number {
    if (!this.budget.take(principal, size)) {
      response.setHeader('Retry-After', '1');
      throw new HttpException(
        kubeStatus(429, 'the server is reading as many request bodies as it holds at once; retry in a second', { retryAfterSeconds: 1 }),
        429,
      );
    }
    return size;
  }

  private async bytesOf(request: Request, response: Response, limits: BodyLimits): Promise<Buffer> {
    const declared = Number(request.headers['content-length']);
    const inflater = inflaterOf(request);
    const stream: Readable = inflater ? request.pipe(inflater) : request;
    // Authorized and within the budget: now, not before, a client waiting for `100 Continue` may send.
    writeContinueIfExpected(request, response);
    try {
      return await getRawBody(stream, {
        limit: limits.bytesMax,
        ...(inflater || !Number.isSafeInteger(declared) ? {} : { length: declared }),
      });
    } finally {
      if (inflater) {
        request.unpipe(inflater);
        inflater.destroy();
      }
    }
  }
}

/** What the body may occupy once read: its declared length (over the limit: 413, unread), or the limit when it is compressed or chunked. */
function expectedSize(request: Request, limits: BodyLimits): number {
  const declared = Number(request.headers['content-length']);
  const compressed = (request.headers['content-encoding'] ?? 'identity').toLowerCase() !== 'identity';
  if (compressed || !Number.isSafeInteger(declared) || declared < 0) return limits.bytesMax;
  if (declared > limits.bytesMax) throw refused(413, 'the request body is larger than the server accepts');
  return Math.max(declared, 1);
}

/** The body's value from its scan: a ScannedBody (when it was scanned for a selection) or parsed; a body that is not JSON within its limits is 400. */
function decoded(bytes: Buffer, scan: JsonScan): unknown {
  if (scan.problem?.syntax) throw refused(400, `the request body is not valid JSON: ${scan.problem.message}`);
  if (scan.problem) throw refused(400, scan.problem.message, scan.problem.field);
  if (scan.empty) return {};
  const start = firstByte(bytes);
  // As body-parser's strict mode: a body is an object or an array.
  if (bytes[start] !== 0x7b && bytes[start] !== 0x5b)
    throw refused(400, 'the request body is not valid JSON: it must be an object or an array');
  return scan.found ? new ScannedBody(bytes, scan.found) : JSON.parse(bytes.toString('utf8', start));
}

/** A large body that waited longer than LARGE_BODY_WAIT_MS for its turn: 503, and the caller (a failurePolicy, a client) retries. */
function busy(error: unknown): never {
  if (!(error instanceof GateBusy)) throw error;
  throw new HttpException(
    kubeStatus(503, `the server is busy reading large request bodies (this one ${error.message}); retry in a second`, {
      retryAfterSeconds: 1,
    }),
    503,
  );
}

/** Where the JSON text starts: past a UTF-8 byte order mark and whitespace. */
function firstByte(bytes: Buffer): number {
  let i = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  while (bytes[i] === 0x20 || bytes[i] === 0x0a || bytes[i] === 0x0d || bytes[i] === 0x09) i++;
  return i;
}
