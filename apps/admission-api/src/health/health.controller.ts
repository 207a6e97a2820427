import { Controller, Get, Header, Inject, Logger, Query, Req, Res } from '@nestjs/common';
import type { AppConfig } from '@quota/config';
import { AuditQueries, checkSynchronousStandby, type UnsettledReservations } from '@quota/ledger';
import { withTimeout } from '@quota/ops';
import type { Request, Response } from 'express';
import { DataSource } from 'typeorm';
import { Authenticator, type AuthenticatedRequest } from '../auth/authenticator.js';
import { APP_CONFIG } from '../config/app-config.module.js';
import { unsettledAfterMs, unsettledBefore } from '../common/ledger/unsettled.js';
import { Metrics } from '../observability/metrics.js';
import { ReconcileTrigger } from '../reconcile/reconcile-trigger.js';
import { ShutdownState } from './shutdown.js';

const CHECK_TIMEOUT_MS = 2000;
/** How long the unsettled-reservations answer is reused at most: it reads every live reservation. */
const UNSETTLED_CACHE_MS = 60_000;

/**
 * Liveness, readiness and metrics, open to every caller (no tokens: probes and Prometheus
 * scrape them). /readyz answers as the kube-apiserver's does: one `[+]name ok` or
 * `[-]name failed: why` line per check, 200 or 503, and `?exclude=queue` to leave a check out
 * (a replica may stay in service while Redis is away: admissions never need the queue).
 * `[-]shutdown` from the signal on, while the process still serves its drain (shutdown.ts).
 * `[+]unsettled-reservations` never fails readiness: it warns, on the same line, of webhook
 * reservations no reconcile has settled. With DATABASE_REQUIRE_SYNCHRONOUS_STANDBY,
 * `[-]synchronous-standby` while the primary has no synchronous standby streaming: this replica's
 * admissions would then be acknowledged before a standby holds them, or wait for one.
 *
 * A probe needs to know which check failed, not why: the why of a failed database or queue
 * check (a driver's error names the host and port) and the unsettled warning's detail are
 * answered only to an authenticated caller not limited to namespaces, as kube-apiserver
 * answers `reason withheld`; every caller else gets the check's name, and the log gets the why
 * (once per change).
 */
@Controller()
export class HealthController {
  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(ReconcileTrigger) private readonly queue: ReconcileTrigger,
    @Inject(Metrics) private readonly metrics: Metrics,
    @Inject(AuditQueries) private readonly audit: AuditQueries,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(ShutdownState) private readonly shutdown: ShutdownState,
    @Inject(Authenticator) private readonly authenticator: Authenticator,
  ) {}

  private readonly logger = new Logger('readyz');
  /** Each failing check's last reason, so the log says it when it changes, not at every probe. */
  private readonly failing = new Map<string, string>();

  private unsettled: { at: number; answer: Promise<UnsettledReservations[]> } | undefined;

  /** Alive: the process answers. */
  @Get('healthz')
  @Header('Content-Type', 'text/plain; charset=utf-8')
  healthz(): string {
    return 'ok';
  }

  @Get('readyz')
  async readyz(
    @Query('exclude') exclude: string | string[] | undefined,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    const detailed = this.mayReadReasons(request);
    const excluded = new Set(([] as string[]).concat(exclude ?? []));
    const checks: Array<[string, () => Promise<unknown>]> = [
      ['database', () => withTimeout(this.dataSource.query('SELECT 1'), CHECK_TIMEOUT_MS)],
      ...(this.config.requireSynchronousStandby
        ? [
            ['synchronous-standby', () => withTimeout(checkSynchronousStandby(this.dataSource), CHECK_TIMEOUT_MS)] as [
              string,
              () => Promise<unknown>,
            ],
          ]
        : []),
      ['queue', () => this.queue.depth()],
      ['shutdown', () => this.shuttingDown()],
    ];
    const results = await Promise.all(
      checks
        .filter(([name]) => !excluded.has(name))
        .map(async ([name, check]) => {
          try {
            await check();
            this.recovered(name);
            return { name, ok: true, line: `[+]${name} ok` };
          } catch (error) {
            const reason = error instanceof Error ? error.message : String(error);
            this.failed(name, reason);
            return { name, ok: false, line: `[-]${name} failed: ${detailed || name === 'shutdown' ? reason : 'reason withheld'}` };
          }
        }),
    );
    if (!excluded.has('unsettled-reservations'))
      results.push({ name: 'unsettled-reservations', ok: true, line: await this.unsettledLine(detailed) });
    const ok = results.every((r) => r.ok);
    const lines = [
      ...results.map((r) => r.line),
      ...[...excluded].map((name) => `[+]${name} excluded: ok`),
      `readyz check ${ok ? 'passed' : 'failed'}`,
    ];
    response
      .status(ok ? 200 : 503)
      .type('text/plain; charset=utf-8')
      .send(`${lines.join('\n')}\n`);
  }

  /** An authenticated principal not limited to namespaces (in development without tokens, everyone). */
  private mayReadReasons(request: Request): boolean {
    const principal = this.authenticator.identify(request as AuthenticatedRequest);
    return principal !== undefined && principal.namespaces === 'all';
  }

  private failed(name: string, reason: string): void {
    if (this.failing.get(name) === reason) return;
    this.failing.set(name, reason);
    if (name !== 'shutdown') this.logger.warn(`readiness check ${name} failed: ${reason}`);
  }

  private recovered(name: string): void {
    if (this.failing.delete(name)) this.logger.log(`readiness check ${name} ok again`);
  }

  private async shuttingDown(): Promise<void> {
    const signal = this.shutdown.reason;
    if (signal !== undefined) throw new Error(`${signal} received: still serving while load balancers take this replica out, then closing`);
  }

  /**
   * Webhook reservations still reserved long after a reconciler would have settled them
   * (unsettledBefore): of kinds no inventory lists (INVENTORY_SOURCE=none, or a kind missing from
   * CUSTOM_RESOURCES), or no reconciler runs. They keep counting toward Used.
   */
  private async unsettledLine(detailed: boolean): Promise<string> {
    const now = Date.now();
    if (!this.unsettled || now - this.unsettled.at > Math.min(UNSETTLED_CACHE_MS, unsettledAfterMs(this.config))) {
      this.unsettled = {
        at: now,
        answer: withTimeout(this.audit.unsettledReservations(unsettledBefore(this.config, now)), CHECK_TIMEOUT_MS),
      };
    }
    try {
      const unsettled = await this.unsettled.answer;
      if (unsettled.length === 0) return '[+]unsettled-reservations ok';
      if (!detailed)
        return '[+]unsettled-reservations ok (warning: webhook reservations never committed nor released, still counted; details withheld)';
      const parts = unsettled
        .map((u) => `${u.resource}: ${u.count} in ${u.namespaces} namespace${u.namespaces === 1 ? '' : 's'}`)
        .join(', ');
      return `[+]unsettled-reservations ok (warning: webhook reservations never committed nor released, still counted: ${parts}; no inventory lists these kinds (INVENTORY_SOURCE, CUSTOM_RESOURCES) or no reconciler runs)`;
    } catch {
      // Advisory only: when the ledger cannot be read, the database check says why.
      this.unsettled = undefined;
      return '[+]unsettled-reservations ok';
    }
  }

  @Get('metrics')
  async metricsText(@Res() response: Response): Promise<void> {
    response
      .status(200)
      .type(this.metrics.registry.contentType)
      .send(await this.metrics.registry.metrics());
  }
}
