import { Controller, Get, Inject, Param, Query, UsePipes } from '@nestjs/common';
import { Ledger, LedgerError, type DecisionView, type EventView, type NamespaceUsage, type Page } from '@quota/ledger';
import { NamespacePipe } from '../common/path-params.js';
import { dtoValidationPipe } from '../common/validation.js';
import { DecisionsQueryDto, EventsQueryDto, UsageQueryDto } from './audit.dto.js';

const DEFAULT_PAGE = 100;

/**
 * What auditors ask the ledger: usage now (the head row, exact) or at any past instant, the
 * namespace's events paged by position, and the decisions log.
 */
@Controller('v1/namespaces/:namespace')
@UsePipes(dtoValidationPipe())
export class AuditController {
  constructor(@Inject(Ledger) private readonly ledger: Ledger) {}

  /** Usage now (the head, exact) or, with `?at=`, as it was at that instant (folded from the ledger). */
  @Get('usage')
  async usage(@Param('namespace', NamespacePipe) namespace: string, @Query() query: UsageQueryDto): Promise<NamespaceUsage> {
    const usage = query.at ? await this.ledger.usageAt(namespace, query.at) : await this.ledger.usage(namespace);
    if (!usage) throw new LedgerError('NamespaceNotFound', `namespaces "${namespace}" not found`, { kind: 'namespaces', name: namespace });
    return usage;
  }

  @Get('events')
  events(@Param('namespace', NamespacePipe) namespace: string, @Query() query: EventsQueryDto): Promise<Page<EventView>> {
    return this.ledger.readEvents(namespace, { ...(query.after ? { after: query.after } : {}), limit: query.limit ?? DEFAULT_PAGE });
  }

  @Get('decisions')
  decisions(@Param('namespace', NamespacePipe) namespace: string, @Query() query: DecisionsQueryDto): Promise<Page<DecisionView>> {
    return this.ledger.listDecisions(namespace, {
      ...(query.allowed === undefined ? {} : { allowed: query.allowed }),
      ...(query.since ? { since: query.since } : {}),
      ...(query.until ? { until: query.until } : {}),
      ...(query.requester ? { requester: query.requester } : {}),
      ...(query.after ? { after: query.after } : {}),
      limit: query.limit ?? DEFAULT_PAGE,
    });
  }
}
