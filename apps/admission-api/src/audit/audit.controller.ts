import { Controller, Get, Inject, Param, Query, UsePipes } from '@nestjs/common';
import { Ledger, LedgerError, type DecisionView, type EventView, type NamespaceUsage, type Page } from '@quota/ledger';
import { NamespacePipe } from '../common/path-params.js';
import { dtoValidationPipe } from '../common/validation.js';
import { DecisionsQueryDto, EventsQueryDto } from './audit.dto.js';

const DEFAULT_PAGE = 100;

/**
 * What the ledger can already answer for auditors: usage now (the head row, exact), the
 * namespace's events paged by position, and the decisions log. Usage at a past instant and
 * the projections come with the audit issue.
 */
@Controller('v1/namespaces/:namespace')
@UsePipes(dtoValidationPipe())
export class AuditController {
  constructor(@Inject(Ledger) private readonly ledger: Ledger) {}

  @Get('usage')
  async usage(@Param('namespace', NamespacePipe) namespace: string): Promise<NamespaceUsage> {
    const usage = await this.ledger.usage(namespace);
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
