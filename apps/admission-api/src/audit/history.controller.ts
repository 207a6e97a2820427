import { BadRequestException, Controller, Get, Inject, Query, UsePipes } from '@nestjs/common';
import { AuditQueries, decodeReservationCursor, type Page, type ReservationView } from '@quota/ledger';
import { NamespaceParam } from '../common/kube/path-params.js';
import { dtoValidationPipe } from '../common/kube/validation.js';
import { kubeStatus } from '../errors/kube-status.js';
import { ReservationsQueryDto } from './history.dto.js';
import { Allow } from '../auth/roles.decorator.js';

const DEFAULT_PAGE = 100;

const badParameter = (field: string, message: string): BadRequestException =>
  new BadRequestException(kubeStatus(400, `${field}: ${message}`, { causes: [{ reason: 'FieldValueInvalid', field, message }] }));

/**
 * Audit views answered by AuditQueries rather than the Ledger: reservations by state and
 * age, for finding the ones stuck in `reserved` or checking what was released and why.
 * (The definition history and the NDJSON exports live with the quota, limit range and audit
 * controllers.)
 */
@Controller('v1/namespaces/:namespace')
@UsePipes(dtoValidationPipe())
export class HistoryController {
  constructor(@Inject(AuditQueries) private readonly audit: AuditQueries) {}

  /** Oldest first. `GET reservations/{id}` (ReservationsController) shows one with its history. */
  @Allow('admin', 'auditor')
  @Get('reservations')
  listReservations(@NamespaceParam() namespace: string, @Query() query: ReservationsQueryDto): Promise<Page<ReservationView>> {
    const after = query.after === undefined ? undefined : decodeReservationCursor(query.after);
    if (query.after !== undefined && !after) throw badParameter('after', 'must be the `next` of a previous page');
    return this.audit.listReservations(namespace, {
      ...(query.state ? { state: query.state } : {}),
      ...(query.olderThan ? { olderThan: query.olderThan } : {}),
      ...(after ? { after } : {}),
      limit: query.limit ?? DEFAULT_PAGE,
    });
  }
}
