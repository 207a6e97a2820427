import { Controller, Get, Inject, Query, UsePipes } from '@nestjs/common';
import { AuditQueries, type NamespaceSummary, type Page } from '@quota/ledger';
import { Allow } from '../auth/roles.decorator.js';
import { dtoValidationPipe } from '../common/kube/validation.js';
import { NamespacesQueryDto } from '../audit/audit.dto.js';

const DEFAULT_PAGE = 100;

/**
 * Every namespace with a stream, by name, with its quotas' hard and used as admission sees
 * them and the resource closest to its limit: the overview a dashboard starts from.
 * Cluster-wide, so namespace-scoped tokens are refused.
 */
@Controller('v1/namespaces')
@UsePipes(dtoValidationPipe())
export class NamespacesController {
  constructor(@Inject(AuditQueries) private readonly audit: AuditQueries) {}

  @Allow('admin', 'auditor')
  @Get()
  list(@Query() query: NamespacesQueryDto): Promise<Page<NamespaceSummary>> {
    return this.audit.listNamespaces({
      ...(query.contains ? { contains: query.contains } : {}),
      ...(query.after ? { after: query.after } : {}),
      limit: query.limit ?? DEFAULT_PAGE,
    });
  }
}
