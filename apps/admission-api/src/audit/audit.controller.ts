import { once } from 'node:events';
import { BadRequestException, Controller, Get, Inject, Param, Query, Res, UsePipes } from '@nestjs/common';
import type { Response } from 'express';
import type { AppConfig } from '@quota/config';
import {
  AuditQueries,
  LedgerClock,
  LedgerError,
  UsageQueries,
  type DecisionView,
  type EventView,
  type NamespaceUsage,
  type Page,
  type UnsettledReservations,
  type UsageSeries,
} from '@quota/ledger';
import { kubeStatus } from '../errors/kube-status.js';
import { NamespaceParam } from '../common/kube/path-params.js';
import { dtoValidationPipe } from '../common/kube/validation.js';
import { DecisionsQueryDto, EventsQueryDto, ExportQueryDto, UsageQueryDto, UsageSeriesQueryDto } from './audit.dto.js';
import { Allow } from '../auth/roles.decorator.js';
import { POSITION } from '../common/kube/query-formats.js';
import { seriesRange } from './series-range.js';
import { APP_CONFIG } from '../config/app-config.module.js';
import { unsettledBefore } from '../common/ledger/unsettled.js';
import { HeavyRead } from '../common/edge/heavy-reads.js';

const DEFAULT_PAGE = 100;
const EXPORT_PAGE = 1000;

/**
 * Writes pages as NDJSON until the last one, honouring back-pressure. Nothing is sent before
 * the first page is read, so an early failure is still a Status; a client that goes away stops
 * the reading (a pending drain gives way to the close).
 */
async function streamNdjson<T>(response: Response, next: (after: string | undefined) => Promise<Page<T>>): Promise<void> {
  let closed = false;
  const gone = new Promise<void>((resolve) => {
    response.once('close', () => {
      closed = true;
      resolve();
    });
  });
  let page = await next(undefined);
  response.status(200).setHeader('content-type', 'application/x-ndjson; charset=utf-8');
  try {
    for (;;) {
      const chunk = page.items.map((item) => JSON.stringify(item)).join('\n');
      if (chunk && !response.write(`${chunk}\n`)) await Promise.race([once(response, 'drain').catch(() => undefined), gone]);
      if (!page.next || closed) break;
      page = await next(page.next);
      if (closed) break;
    }
    response.end();
  } catch (error) {
    response.destroy(error instanceof Error ? error : new Error(String(error)));
  }
}

/**
 * What auditors ask the ledger: usage now (the head row, exact) or at any past instant, the
 * namespace's events paged by position, and the decisions log.
 */
@Controller('v1/namespaces/:namespace')
@UsePipes(dtoValidationPipe())
export class AuditController {
  constructor(
    @Inject(UsageQueries) private readonly usageQueries: UsageQueries,
    @Inject(AuditQueries) private readonly audit: AuditQueries,
    @Inject(LedgerClock) private readonly clock: LedgerClock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Usage now (the head, exact) or, with `?at=`, as it was at that instant (folded from the ledger). */
  @Allow('admin', 'auditor', 'admission')
  @Get('usage')
  async usage(@NamespaceParam() namespace: string, @Query() query: UsageQueryDto): Promise<NamespaceUsage> {
    const usage = query.at ? await this.usageQueries.usageAt(namespace, query.at) : await this.usageQueries.usage(namespace);
    if (!usage) throw new LedgerError('NamespaceNotFound', `namespaces "${namespace}" not found`, { kind: 'namespaces', name: namespace });
    return usage;
  }

  /**
   * Usage sampled at evenly spaced instants (each exact, as `usage?at=`), with the range's
   * quota changes and denials as markers: a usage chart's data.
   */
  @Allow('admin', 'auditor')
  @HeavyRead()
  @Get('usage/series')
  async usageSeries(@NamespaceParam() namespace: string, @Query() query: UsageSeriesQueryDto): Promise<UsageSeries> {
    const series = await this.usageQueries.usageSeries(namespace, await seriesRange(query, this.clock));
    if (!series) throw new LedgerError('NamespaceNotFound', `namespaces "${namespace}" not found`, { kind: 'namespaces', name: namespace });
    return series;
  }

  /**
   * Webhook reservations of this namespace that no reconcile has settled (still reserved long
   * after a reconciler would have committed or released them), by resource: they count toward
   * Used although nothing shows their objects exist (`quotactl describe quota` lists them).
   */
  @Allow('admin', 'auditor')
  @Get('usage/unsettled')
  async unsettled(@NamespaceParam() namespace: string): Promise<{ reservedBefore: string; items: UnsettledReservations[] }> {
    const reservedBefore = unsettledBefore(this.config, await this.clock.now());
    return { reservedBefore, items: await this.audit.unsettledReservations(reservedBefore, namespace) };
  }

  @Allow('admin', 'auditor')
  @Get('events')
  events(@NamespaceParam() namespace: string, @Query() query: EventsQueryDto): Promise<Page<EventView>> {
    return this.audit.readEvents(namespace, { ...(query.after ? { after: query.after } : {}), limit: query.limit ?? DEFAULT_PAGE });
  }

  /**
   * The namespace's events from `after` on, as NDJSON (one EventView per line), read from the
   * ledger a page at a time (1,000 events, or fewer once a page holds HISTORY_PAGE_MAX_BYTES), so
   * any range streams in bounded memory, whatever its rows hold. Stops reading when the client goes away.
   */
  @Allow('admin', 'auditor')
  @HeavyRead()
  @Get('events/export')
  async exportEvents(@NamespaceParam() namespace: string, @Query() query: ExportQueryDto, @Res() response: Response): Promise<void> {
    // Without `until`, the export ends at the namespace's last event when it starts: a stream
    // that keeps growing would never finish.
    const until = BigInt(query.until ?? (await this.usageQueries.usage(namespace))?.position ?? '0');
    await streamNdjson(response, async (after) => {
      const page = await this.audit.readEvents(namespace, {
        ...(after ? { after } : query.after ? { after: query.after } : {}),
        limit: EXPORT_PAGE,
      });
      const items = page.items.filter((e) => BigInt(e.position) <= until);
      const done = !page.next || items.length < page.items.length;
      return { items, ...(done ? {} : { next: page.next }) };
    });
  }

  /** The decisions log as NDJSON, with the filters of `/decisions`. */
  @Allow('admin', 'auditor')
  @HeavyRead()
  @Get('decisions/export')
  async exportDecisions(@NamespaceParam() namespace: string, @Query() query: DecisionsQueryDto, @Res() response: Response): Promise<void> {
    await streamNdjson(response, (after) =>
      this.audit.listDecisions(namespace, {
        ...(query.allowed === undefined ? {} : { allowed: query.allowed }),
        ...(query.dryRun === undefined ? {} : { dryRun: query.dryRun }),
        ...(query.since ? { since: query.since } : {}),
        ...(query.until ? { until: query.until } : {}),
        ...(query.requester ? { requester: query.requester } : {}),
        ...(after ? { after } : query.after ? { after: query.after } : {}),
        limit: EXPORT_PAGE,
      }),
    );
  }

  @Allow('admin', 'auditor')
  @Get('decisions')
  decisions(@NamespaceParam() namespace: string, @Query() query: DecisionsQueryDto): Promise<Page<DecisionView>> {
    return this.audit.listDecisions(namespace, {
      ...(query.allowed === undefined ? {} : { allowed: query.allowed }),
      ...(query.dryRun === undefined ? {} : { dryRun: query.dryRun }),
      ...(query.since ? { since: query.since } : {}),
      ...(query.until ? { until: query.until } : {}),
      ...(query.requester ? { requester: query.requester } : {}),
      ...(query.after ? { after: query.after } : {}),
      ...(query.order === 'newest' ? { newestFirst: true } : {}),
      limit: query.limit ?? DEFAULT_PAGE,
    });
  }

  /** One decision with its explanation: where a denial on the dashboard's chart leads. */
  @Allow('admin', 'auditor')
  @Get('decisions/:id')
  async decision(@NamespaceParam() namespace: string, @Param('id') id: string): Promise<DecisionView> {
    if (!POSITION.test(id))
      throw new BadRequestException(kubeStatus(400, `invalid decision id ${JSON.stringify(id.slice(0, 100))} in the path: 1 to 18 digits`));
    const decision = await this.audit.getDecision(namespace, id);
    if (!decision)
      throw new LedgerError('NotFound', `decisions "${id}" not found in namespace "${namespace}"`, { kind: 'decisions', name: id });
    return decision;
  }
}
