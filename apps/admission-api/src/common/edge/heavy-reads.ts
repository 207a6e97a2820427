import {
  HttpException,
  Inject,
  Injectable,
  SetMetadata,
  UseInterceptors,
  applyDecorators,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { defer, finalize, from, mergeMap, type Observable } from 'rxjs';
import { kubeStatus } from '../../errors/kube-status.js';

/**
 * Reads whose cost grows with history rather than with the request: usage series (a shared
 * quota's reads every namespace it covered in the range), a shared quota's usage at an instant,
 * and the NDJSON exports. Each holds database connections (the pool also serves admissions) and
 * memory for as long as it runs, so one process runs at most `HEAVY_READS_IN_FLIGHT_MAX` of them;
 * up to `HEAVY_READS_WAITING_MAX` more wait for a slot, at most `HEAVY_READ_WAIT_MS`; past that a
 * caller gets 429 with Retry-After, as for the rate limit (six auditors reading a shared
 * quota's series at once killed the API and took admission p50 from 19 to 187 ms).
 */
export const HEAVY_READS_IN_FLIGHT_MAX = 2;
export const HEAVY_READS_WAITING_MAX = 8;
export const HEAVY_READ_WAIT_MS = 10_000;
const RETRY_AFTER_SECONDS = 5;

const HEAVY_READ_KEY = 'quota-ledger:heavy-read';

/** The slots, shared by every heavy route of the process. */
@Injectable()
export class HeavyReads {
  private inFlight = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly max = HEAVY_READS_IN_FLIGHT_MAX,
    private readonly waitingMax = HEAVY_READS_WAITING_MAX,
    private readonly waitMs = HEAVY_READ_WAIT_MS,
  ) {}

  /** Resolves true once a slot is taken (release it), false when none came in time or too many wait. */
  async take(): Promise<boolean> {
    if (this.inFlight < this.max) {
      this.inFlight++;
      return true;
    }
    if (this.waiting.length >= this.waitingMax) return false;
    return new Promise<boolean>((resolve) => {
      const granted = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        const index = this.waiting.indexOf(granted);
        if (index >= 0) this.waiting.splice(index, 1);
        resolve(false);
      }, this.waitMs);
      this.waiting.push(granted);
    });
  }

  /** A finished read hands its slot to the next waiting one, so none can slip in between. */
  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.inFlight--;
  }
}

@Injectable()
export class HeavyReadInterceptor implements NestInterceptor {
  constructor(
    @Inject(HeavyReads) private readonly reads: HeavyReads,
    @Inject(Reflector) private readonly reflector: Reflector,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<Request>();
    const onlyWith = this.reflector.get<string | undefined>(HEAVY_READ_KEY, context.getHandler());
    if (onlyWith && request.query[onlyWith] === undefined) return next.handle();
    return from(this.reads.take()).pipe(
      mergeMap((taken) => {
        if (!taken) {
          context.switchToHttp().getResponse<Response>().setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
          const message = `the server is running as many usage series, as-of reads of shared quotas and exports as it serves at once (${HEAVY_READS_IN_FLIGHT_MAX}, and ${HEAVY_READS_WAITING_MAX} waiting); retry in ${RETRY_AFTER_SECONDS} s`;
          throw new HttpException(kubeStatus(429, message, { retryAfterSeconds: RETRY_AFTER_SECONDS }), 429);
        }
        // The slot is held until the handler is done (an export: until its last line is written).
        return defer(() => next.handle()).pipe(finalize(() => this.reads.release()));
      }),
    );
  }
}

/**
 * The handler is a heavy read (see HeavyReads); with `onlyWithQuery`, only when the request has
 * that query parameter (a shared quota's usage is a head read, its usage `?at=` a fold).
 */
export const HeavyRead = (onlyWithQuery?: string): MethodDecorator =>
  applyDecorators(...(onlyWithQuery ? [SetMetadata(HEAVY_READ_KEY, onlyWithQuery)] : []), UseInterceptors(HeavyReadInterceptor));
