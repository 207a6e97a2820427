import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Put, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { SharedQuotaQueue } from '@quota/api';
import { assertDefinitionSize, clusterResourceQuotaSizeErrors, sharedQuotaKey, validateClusterResourceQuota, type SharedQuotaRef } from '@quota/domain';
import {
  ClusterQueries,
  ClusterWriter,
  DefinitionQueries,
  LedgerClock,
  LedgerError,
  QueueQueries,
  SharedUsageQueries,
  type DefinitionChange,
  type Page,
  type SharedQuotaUsageSeries,
} from '@quota/ledger';
import { readPutIdentity } from '../common/kube/kube-object.js';
import { ObjectNamePipe } from '../common/kube/path-params.js';
import { requesterOf } from '../auth/requester.js';
import { EventsQueryDto, UsageQueryDto, UsageSeriesQueryDto } from '../audit/audit.dto.js';
import { dtoValidationPipe } from '../common/kube/validation.js';
import { Allow } from '../auth/roles.decorator.js';
import { JsonBody } from '../common/edge/body-guard.js';
import { HeavyRead } from '../common/edge/heavy-reads.js';
import { AnswersPosition, sendPosition } from '../common/ledger/ledger-position.js';
import { renderClusterResourceQuota } from '../shared-quotas/render.js';
import { withoutSystemAnnotations } from '../definitions/cluster-managed.js';
import { userMetadata } from '../definitions/definition-handlers.js';
import { LIST_MAX, putOptions, historyOr404, usageOr404, seriesOr404, pageOf } from '../shared-quotas/shared-quota-reads.js';

@Controller('v1/clusterresourcequotas')
export class ClusterResourceQuotasController {
  constructor(
    @Inject(ClusterWriter) private readonly writer: ClusterWriter,
    @Inject(ClusterQueries) private readonly queries: ClusterQueries,
    @Inject(DefinitionQueries) private readonly definitions: DefinitionQueries,
    @Inject(SharedUsageQueries) private readonly usage: SharedUsageQueries,
    @Inject(LedgerClock) private readonly clock: LedgerClock,
    @Inject(QueueQueries) private readonly queues: QueueQueries,
  ) {}

  @Allow('admin')
  @JsonBody('definition')
  @AnswersPosition(201, 200)
  @Put(':name')
  async put(@Param('name', ObjectNamePipe) name: string, @Body() raw: unknown, @Req() request: Request, @Res({ passthrough: true }) response: Response) {
    const { body, expectedVersion } = readPutIdentity(raw, '', name, 'ClusterResourceQuota');
    const { namespace: _ignored, ...metadata } = (body['metadata'] ?? {}) as Record<string, unknown>;
    const quota = validateClusterResourceQuota({ ...body, metadata });
    assertDefinitionSize('ClusterResourceQuota', name, clusterResourceQuotaSizeErrors(quota));
    const ref: SharedQuotaRef = { kind: 'ClusterResourceQuota', name };
    // One that came from a LedgerClusterQuota object is changed there, not here (409, decided in the
    // write's transaction); nor can a PUT claim to be one.
    const kept = userMetadata(quota.metadata, withoutSystemAnnotations);
    const result = await this.writer.putSharedQuota({ ref, spec: quota.spec.quota, selector: quota.spec.selector, metadata: kept }, { ...putOptions(request, expectedVersion), unmanagedOnly: true });
    response.status(result.created ? 201 : 200);
    sendPosition(response, result.position);
    return renderClusterResourceQuota(result.view);
  }

  @Allow('admin', 'auditor', 'admission')
  @Get()
  async list() {
    const views = await this.queries.listSharedQuotas('clusterresourcequotas/', LIST_MAX);
    return { apiVersion: 'quota.openshift.io/v1', kind: 'ClusterResourceQuotaList', metadata: {}, items: views.map(renderClusterResourceQuota) };
  }

  @Allow('admin', 'auditor', 'admission')
  @Get(':name')
  async get(@Param('name', ObjectNamePipe) name: string) {
    const view = await this.queries.getSharedQuota(sharedQuotaKey({ kind: 'ClusterResourceQuota', name }));
    if (!view) throw new LedgerError('NotFound', `clusterresourcequotas "${name}" not found`, { kind: 'clusterresourcequotas', name });
    return renderClusterResourceQuota(view);
  }

  @Allow('admin', 'auditor')
  @Get(':name/history')
  history(@Param('name', ObjectNamePipe) name: string, @Query(dtoValidationPipe()) query: EventsQueryDto): Promise<Page<DefinitionChange>> {
    return historyOr404(this.definitions.sharedQuotaHistory(sharedQuotaKey({ kind: 'ClusterResourceQuota', name }), pageOf(query)), 'clusterresourcequotas', name);
  }

  /** Its usage now or, with `?at=`, at an instant, with each covered namespace's part. */
  @Allow('admin', 'auditor', 'admission')
  @HeavyRead('at')
  @Get(':name/usage')
  usageAt(@Param('name', ObjectNamePipe) name: string, @Query(dtoValidationPipe()) query: UsageQueryDto) {
    return usageOr404(this.queries, this.usage, sharedQuotaKey({ kind: 'ClusterResourceQuota', name }), query.at, 'clusterresourcequotas', name);
  }

  /** Its usage sampled over a range (as the namespace's usage series), with its limit changes and the denials naming it. */
  @Allow('admin', 'auditor')
  @HeavyRead()
  @Get(':name/usage/series')
  usageSeries(@Param('name', ObjectNamePipe) name: string, @Query(dtoValidationPipe()) query: UsageSeriesQueryDto): Promise<SharedQuotaUsageSeries> {
    return seriesOr404(this.usage, this.clock, sharedQuotaKey({ kind: 'ClusterResourceQuota', name }), query, 'clusterresourcequotas', name);
  }

  @Allow('admin')
  @AnswersPosition(200)
  @Delete(':name')
  @HttpCode(200)
  async delete(@Param('name', ObjectNamePipe) name: string, @Req() request: Request, @Res({ passthrough: true }) response: Response) {
    const removed = await this.writer.deleteSharedQuota({ kind: 'ClusterResourceQuota', name }, { actor: requesterOf(request), unmanagedOnly: true });
    sendPosition(response, removed.position);
    return renderClusterResourceQuota(removed.view);
  }

  /** The reservations waiting for its room (issue 41), per namespace, in the order its fair drain serves them. */
  @Allow('admin', 'auditor', 'admission')
  @Get(':name/queue')
  async queue(@Param('name', ObjectNamePipe) name: string): Promise<SharedQuotaQueue> {
    const key = sharedQuotaKey({ kind: 'ClusterResourceQuota', name });
    if (!(await this.queries.getSharedQuota(key))) throw new LedgerError('NotFound', `${'clusterresourcequotas'} "${name}" not found`, { kind: 'clusterresourcequotas', name });
    return this.queues.sharedQueue(key);
  }
}
