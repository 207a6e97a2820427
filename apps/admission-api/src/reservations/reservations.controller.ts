import { Body, Controller, Delete, Get, HttpCode, HttpException, Inject, Post, Query, Req, Res, UsePipes } from '@nestjs/common';
import type { QueuedAnswer, QueuedReservation } from '@quota/api';
import type { Request, Response } from 'express';
import type { AppConfig } from '@quota/config';
import { WARNINGS_MAX } from '@quota/domain';
import {
  AuditQueries,
  LedgerCommands,
  LedgerError,
  QueueQueries,
  type AdmissionResult,
  type AdmitOutcome,
  type CommitOutcome,
  type ReleaseOutcome,
  type ReservationView,
} from '@quota/ledger';
import { NamespaceParam, ReservationIdParam } from '../common/kube/path-params.js';
import { dtoValidationPipe } from '../common/kube/validation.js';
import { kubeStatus } from '../errors/kube-status.js';
import { APP_CONFIG } from '../config/app-config.module.js';
import { requesterOf } from '../auth/requester.js';
import { ReserveDto } from './reserve.dto.js';
import { admitCommandOf, waitOf } from './admission-request.js';
import { ReservationQueryDto, watchTimeoutMs } from './queue-watch.js';
import { QueueWatchers } from './queue-watchers.js';
import { Allow } from '../auth/roles.decorator.js';
import { JsonBody } from '../common/edge/body-guard.js';
import { TimedAdmission } from '../observability/admission-timing.js';
import { Metrics } from '../observability/metrics.js';
import { AnswersPosition, sendPosition } from '../common/ledger/ledger-position.js';
import { warningHeader } from '../common/kube/warning-header.js';

/** Seconds a principal refused a watch is told to wait: watches end within their timeout, most much sooner. */
const WATCH_RETRY_AFTER_SECONDS = 5;

function tooManyWatches(principal: string, max: number): HttpException {
  const message = `${JSON.stringify(principal)} is watching as many queued reservations as one principal may at once on this server (${max}, QUEUE_WATCHES_PER_PRINCIPAL_MAX); retry in ${WATCH_RETRY_AFTER_SECONDS} s, once one has ended`;
  return new HttpException(kubeStatus(429, message, { retryAfterSeconds: WATCH_RETRY_AFTER_SECONDS }), 429);
}

/**
 * Each warning as a `Warning` header of its own, as kube-apiserver sends them: first the names a
 * resource list asks for that no quota charges (`uncharged`), then the quotas left near their
 * limits (`result.warnings`), at most WARNINGS_MAX in all.
 */
export function appendWarnings(response: Response, outcome: Pick<AdmitOutcome, 'result' | 'uncharged'>): void {
  const warnings = [...(outcome.uncharged ?? []), ...(outcome.result.warnings ?? [])].slice(0, WARNINGS_MAX);
  for (const warning of warnings) response.append('Warning', warningHeader(warning));
}

/**
 * The answer to a reserve, the same for a first and a repeated request. Allowed answers:
 * 201 with the new reservation and the `position` of its Reserved event; 200 with
 * `dryRun: true` and no id for a dry run; 200 with `state: "none"` when the request is allowed
 * but charges nothing (a kind no quota counts), so there is nothing to commit or release.
 */
function reserveAnswer(
  namespace: string,
  name: string | undefined,
  kind: string,
  result: AdmissionResult,
  position: string | undefined,
): { status: number; body: unknown } {
  if (result.code === 202 && result.queued && result.reservationId) {
    // Waiting in the queue: `position` is its place in the queue; the ledger's is `ledgerPosition`.
    const { position: place, waitingFor, expiresAt } = result.queued;
    const body: QueuedAnswer = {
      id: result.reservationId,
      namespace,
      state: 'queued',
      position: place,
      waitingFor,
      expiresAt,
      ...(position === undefined ? {} : { ledgerPosition: position }),
    };
    return { status: 202, body };
  }
  if (!result.allowed) {
    return {
      status: result.code,
      body: kubeStatus(result.code, result.message ?? 'denied', {
        ...(name ? { name } : {}),
        kind,
        ...(result.stage ? { stage: result.stage } : {}),
        ...(result.denial ? { denial: result.denial } : {}),
      }),
    };
  }
  if (result.dryRun) {
    return {
      status: 200,
      body: {
        namespace,
        state: result.charged ? 'reserved' : 'none',
        dryRun: true,
        charged: result.charged ?? {},
        ...(result.expiresAt ? { expiresAt: result.expiresAt } : {}),
      },
    };
  }
  if (!result.reservationId) return { status: 200, body: { namespace, state: 'none', charged: {} } };
  return {
    status: 201,
    body: {
      id: result.reservationId,
      namespace,
      state: 'reserved',
      charged: result.charged ?? {},
      ...(result.expiresAt ? { expiresAt: result.expiresAt } : {}),
      ...(position === undefined ? {} : { position }),
    },
  };
}

/** A commit's or release's answer: the reservation, and the position to read after. */
type PositionedReservation = ReservationView & { readonly position?: string };

function positioned(response: Response, outcome: CommitOutcome | ReleaseOutcome): PositionedReservation {
  sendPosition(response, outcome.position);
  return outcome.position === undefined ? outcome.view : { ...outcome.view, position: outcome.position };
}

/**
 * REST admission for platform teams that create objects without a Kubernetes API server in
 * front: reserve (an object or a plain resource list), then commit once the object exists,
 * or release it. The reservation counts toward usage from the moment it is granted.
 */
@Controller('v1/namespaces/:namespace/reservations')
export class ReservationsController {
  constructor(
    @Inject(LedgerCommands) private readonly ledger: LedgerCommands,
    @Inject(AuditQueries) private readonly audit: AuditQueries,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(Metrics) private readonly metrics: Metrics,
    @Inject(QueueQueries) private readonly queue: QueueQueries,
    @Inject(QueueWatchers) private readonly watchers: QueueWatchers,
  ) {}

  @Allow('admission')
  @TimedAdmission('reserve')
  @JsonBody('admission')
  @AnswersPosition(201)
  @Post()
  @UsePipes(dtoValidationPipe())
  async reserve(
    @NamespaceParam() namespace: string,
    @Body() dto: ReserveDto,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<unknown> {
    const command = admitCommandOf(dto, namespace, this.config.reservationTtlMaxSeconds);
    const wait = waitOf(dto, this.config.queue.waitMaxSeconds);
    const outcome = await this.ledger.admit({
      ...command,
      ...(wait ? { wait } : {}),
      ...(dto.requestId ? { requestKey: `rest:${dto.requestId}` } : {}),
      dryRun: dto.dryRun === true,
      requester: requesterOf(request),
    });
    this.metrics.decided('rest', outcome.result);
    const answer = reserveAnswer(namespace, command.request.name, dto.kind, outcome.result, outcome.position);
    response.status(answer.status);
    sendPosition(response, outcome.position);
    appendWarnings(response, outcome);
    return answer.body;
  }

  /** The reservation as it stands, with the `position` of its Committed event (of its latest, for a repeat). */
  @Allow('admission')
  @AnswersPosition(200)
  @Post(':id/commit')
  @HttpCode(200)
  async commit(
    @NamespaceParam() namespace: string,
    @ReservationIdParam() id: string,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<PositionedReservation> {
    // A REST call settles REST reservations only: the cluster's are the reconciler's (403).
    return positioned(response, await this.ledger.commit(namespace, id, { actor: requesterOf(request), by: 'rest' }));
  }

  /** The reservation as it stands, with the `position` of its Released event (of its latest, for a repeat). */
  @Allow('admission')
  @AnswersPosition(200)
  @Delete(':id')
  @HttpCode(200)
  async release(
    @NamespaceParam() namespace: string,
    @ReservationIdParam() id: string,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<PositionedReservation | QueuedReservation> {
    // A queued one is cancelled (Cancelled); one admitted meanwhile is released as any reservation.
    const queued = await this.queue.waiting(namespace, id);
    if (queued) {
      try {
        sendPosition(response, (await this.ledger.cancelQueued(namespace, id, { actor: requesterOf(request) })).position);
        return (await this.queue.ended(namespace, id)) ?? queued;
      } catch (error) {
        if (!(error instanceof LedgerError && error.code === 'NotFound')) throw error;
      }
    }
    try {
      return positioned(
        response,
        await this.ledger.release(namespace, id, { actor: requesterOf(request), reason: 'cancelled', by: 'rest' }),
      );
    } catch (error) {
      // Cancelled or expired while it waited: the same answer again, nothing appended.
      const ended = error instanceof LedgerError && error.code === 'NotFound' ? await this.queue.ended(namespace, id) : undefined;
      if (ended) return ended;
      throw error;
    }
  }

  /**
   * The reservation as it stands, or as it waits in the queue. `?watch=true` holds the answer while
   * it is queued, until it is admitted, cancelled or expires, or `timeoutSeconds` pass (then it answers it still queued).
   * A principal holds at most QUEUE_WATCHES_PER_PRINCIPAL_MAX open (429 past it); one ends when its client goes away too.
   */
  @Allow('admin', 'auditor', 'admission')
  @Get(':id')
  @UsePipes(dtoValidationPipe())
  async get(
    @NamespaceParam() namespace: string,
    @ReservationIdParam() id: string,
    @Query() query: ReservationQueryDto,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<ReservationView | QueuedReservation> {
    // Below the request timeout, which would otherwise answer the watcher with an error.
    const until = Date.now() + (query.watch ? Math.min(watchTimeoutMs(query), this.config.requestTimeoutMs - 1000) : 0);
    let view = await this.lookup(namespace, id);
    if (view.state !== 'queued' || Date.now() >= until) return view;
    const principal = requesterOf(request);
    const release = this.watchers.hold(principal);
    if (!release) throw tooManyWatches(principal, this.watchers.perPrincipalMax);
    const gone = new AbortController();
    const abort = (): void => gone.abort();
    response.on('close', abort);
    try {
      for (;;) {
        await this.watchers.left(namespace, id, until - Date.now(), gone.signal);
        // Its client went away: nobody reads the answer.
        if (gone.signal.aborted) return view;
        view = await this.lookup(namespace, id);
        if (view.state !== 'queued' || Date.now() >= until) return view;
      }
    } finally {
      response.off('close', abort);
      release();
    }
  }

  private async lookup(namespace: string, id: string): Promise<ReservationView | QueuedReservation> {
    const view =
      (await this.queue.waiting(namespace, id)) ??
      (await this.audit.getReservation(namespace, id)) ??
      (await this.queue.ended(namespace, id));
    if (!view) throw new LedgerError('NotFound', `reservations "${id}" not found`, { kind: 'reservations', name: id });
    return view;
  }
}
