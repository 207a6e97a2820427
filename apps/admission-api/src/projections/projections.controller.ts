import { Controller, Get, Inject } from '@nestjs/common';
import { Ledger, UsageProjection, type ProjectionLag } from '@quota/ledger';
import { Allow } from '../auth/roles.decorator.js';

/**
 * How far the projection worker's read models trail the ledger (what `status.used` of a
 * quota read reflects): the checkpoint, the events not yet applied, and the age of the
 * oldest of them.
 */
@Controller('v1/projections')
export class ProjectionsController {
  private readonly projection: UsageProjection;

  constructor(@Inject(Ledger) ledger: Ledger) {
    this.projection = new UsageProjection(ledger.connectionPool);
  }

  @Allow('admin', 'auditor')
  @Get('usage')
  lag(): Promise<ProjectionLag> {
    return this.projection.lag();
  }
}
