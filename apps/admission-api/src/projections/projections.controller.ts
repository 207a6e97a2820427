import { Controller, Get, Inject } from '@nestjs/common';
import { UsageProjection, type ProjectionLag } from '@quota/ledger';
import { Allow } from '../auth/roles.decorator.js';

/**
 * How far the projection worker's read models trail the ledger (what `status.used` of a
 * quota read reflects): the checkpoint, the events not yet applied, and the age of the
 * oldest of them.
 */
@Controller('v1/projections')
export class ProjectionsController {
  constructor(@Inject(UsageProjection) private readonly projection: UsageProjection) {}

  @Allow('admin', 'auditor')
  @Get('usage')
  lag(): Promise<ProjectionLag> {
    return this.projection.lag();
  }
}
