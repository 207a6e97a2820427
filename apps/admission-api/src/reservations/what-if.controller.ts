import { Body, Controller, HttpCode, Inject, Post, Req, Res, UsePipes } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { AppConfig } from '@quota/config';
import { LedgerCommands, type AdmissionResult } from '@quota/ledger';
import { requesterOf } from '../auth/requester.js';
import { Allow } from '../auth/roles.decorator.js';
import { JsonBody } from '../common/edge/body-guard.js';
import { NamespaceParam } from '../common/kube/path-params.js';
import { dtoValidationPipe } from '../common/kube/validation.js';
import { APP_CONFIG } from '../config/app-config.module.js';
import { admitCommandOf } from './admission-request.js';
import { appendWarnings } from './reservations.controller.js';
import { WhatIfDto } from './reserve.dto.js';

/** The answer to a what-if: the decision a reserve would get now, allowed or not, as data. */
export interface WhatIfAnswer {
  readonly apiVersion: 'quota-ledger.io/v1';
  readonly kind: 'WhatIf';
  readonly namespace: string;
  readonly allowed: boolean;
  readonly code: AdmissionResult['code'];
  readonly message?: string;
  readonly stage?: AdmissionResult['stage'];
  readonly denial?: AdmissionResult['denial'];
  readonly charged: NonNullable<AdmissionResult['charged']>;
  readonly patch?: AdmissionResult['patch'];
}

/**
 * "Would this be admitted now?" for people, not admission clients: the REST reserve as a dry
 * run, so it appends nothing to the ledger, and it is a read, so it is not logged either.
 * Auditors may ask, and a read-only role must leave nothing behind: logged what-ifs let an
 * auditor fill the append-only decisions log. A denial is a finding, not a failed
 * request: it answers 200 with `allowed: false` and the explanation. An allowed answer carries
 * the `Warning` headers the reserve would (quotas it would leave near their limits, resource
 * names no quota charges).
 */
@Controller('v1/namespaces/:namespace/whatif')
export class WhatIfController {
  constructor(
    @Inject(LedgerCommands) private readonly ledger: LedgerCommands,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Allow('admin', 'auditor', 'admission')
  @JsonBody('admission')
  @Post()
  @HttpCode(200)
  @UsePipes(dtoValidationPipe())
  async ask(
    @NamespaceParam() namespace: string,
    @Body() dto: WhatIfDto,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<WhatIfAnswer> {
    const command = admitCommandOf(dto, namespace, this.config.reservationTtlMaxSeconds);
    const outcome = await this.ledger.admit({ ...command, dryRun: true, logged: false, requester: requesterOf(request) });
    const { result } = outcome;
    appendWarnings(response, outcome);
    return {
      apiVersion: 'quota-ledger.io/v1',
      kind: 'WhatIf',
      namespace,
      allowed: result.allowed,
      code: result.code,
      ...(result.message ? { message: result.message } : {}),
      ...(result.stage ? { stage: result.stage } : {}),
      ...(result.denial ? { denial: result.denial } : {}),
      charged: result.charged ?? {},
      ...(result.patch ? { patch: result.patch } : {}),
    };
  }
}
