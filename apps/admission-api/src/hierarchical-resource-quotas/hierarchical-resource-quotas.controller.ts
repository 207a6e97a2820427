import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Put, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { SharedQuotaQueue } from '@quota/api';
import { assertDefinitionSize, resourceQuotaSizeErrors, sharedQuotaKey, validateHierarchicalResourceQuota, type SharedQuotaRef } from '@quota/domain';
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
import { NamespacePipe, ObjectNamePipe } from '../common/kube/path-params.js';
import { namespaceScopeOf, requesterOf } from '../auth/requester.js';
import { EventsQueryDto, UsageQueryDto, UsageSeriesQueryDto } from '../audit/audit.dto.js';
import { dtoValidationPipe } from '../common/kube/validation.js';
import { Allow } from '../auth/roles.decorator.js';
import { JsonBody } from '../common/edge/body-guard.js';
import { HeavyRead } from '../common/edge/heavy-reads.js';
import { AnswersPosition, sendPosition } from '../common/ledger/ledger-position.js';
import { renderHierarchicalResourceQuota } from '../shared-quotas/render.js';
import { withoutSystemAnnotations } from '../definitions/cluster-managed.js';
import { userMetadata } from '../definitions/definition-handlers.js';
import { LIST_MAX, putOptions, historyOr404, usageOr404, seriesOr404, pageOf, withinScope } from '../shared-quotas/shared-quota-reads.js';

@Controller('v1/namespaces/:namespace/hierarchicalresourcequotas')
export class HierarchicalResourceQuotasController {
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
  async put(
    @Param('namespace', NamespacePipe) namespace: string,
    @Param('name', ObjectNamePipe) name: string,
    @Body() raw: unknown,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ) {
    const { body, expectedVersion } = readPutIdentity(raw, namespace, name, 'HierarchicalResourceQuota');
    const quota = validateHierarchicalResourceQuota(body);
    assertDefinitionSize('HierarchicalResourceQuota', name, resourceQuotaSizeErrors({ spec: quota.spec }));
    const ref: SharedQuotaRef = { kind: 'HierarchicalResourceQuota', name, namespace };
    // One that came from a LedgerHierarchicalQuota object is changed there, not here (409, decided in
    // the write's transaction); nor can a PUT claim to be one.
    const metadata = userMetadata(quota.metadata, withoutSystemAnnotations);
    const result = await this.writer.putSharedQuota({ ref, spec: { hard: quota.spec.hard ?? {} }, metadata }, { ...putOptions(request, expectedVersion), unmanagedOnly: true });
    response.status(result.created ? 201 : 200);
    sendPosition(response, result.position);
    return renderHierarchicalResourceQuota(result.view);
  }

  @Allow('admin', 'auditor', 'admission')
  @Get()
  async list(@Param('namespace', NamespacePipe) namespace: string) {
    const views = await this.queries.listSharedQuotas(`hierarchicalresourcequotas/${namespace}/`, LIST_MAX);
    return { apiVersion: 'hnc.x-k8s.io/v1alpha2', kind: 'HierarchicalResourceQuotaList', metadata: {}, items: views.map(renderHierarchicalResourceQuota) };
  }

  @Allow('admin', 'auditor', 'admission')
  @Get(':name')
  async get(@Param('namespace', NamespacePipe) namespace: string, @Param('name', ObjectNamePipe) name: string) {
    const view = await this.queries.getSharedQuota(sharedQuotaKey({ kind: 'HierarchicalResourceQuota', name, namespace }));
    if (!view) throw new LedgerError('NotFound', `hierarchicalresourcequotas.hnc.x-k8s.io "${name}" not found`, { kind: 'hierarchicalresourcequotas', name });
    return renderHierarchicalResourceQuota(view);
  }

  @Allow('admin', 'auditor')
  @Get(':name/history')
  history(@Param('namespace', NamespacePipe) namespace: string, @Param('name', ObjectNamePipe) name: string, @Query(dtoValidationPipe()) query: EventsQueryDto): Promise<Page<DefinitionChange>> {
    return historyOr404(this.definitions.sharedQuotaHistory(sharedQuotaKey({ kind: 'HierarchicalResourceQuota', name, namespace }), pageOf(query)), 'hierarchicalresourcequotas', name);
  }

  /** A token scoped to the parent reads the subtree's total, and the parts and denials of its own namespaces only. */
  @Allow('admin', 'auditor', 'admission')
  @HeavyRead('at')
  @Get(':name/usage')
  usageAt(@Param('namespace', NamespacePipe) namespace: string, @Param('name', ObjectNamePipe) name: string, @Query(dtoValidationPipe()) query: UsageQueryDto, @Req() request: Request) {
    const key = sharedQuotaKey({ kind: 'HierarchicalResourceQuota', name, namespace });
    return usageOr404(this.queries, this.usage, key, query.at, 'hierarchicalresourcequotas.hnc.x-k8s.io', name, namespaceScopeOf(request));
  }

  @Allow('admin', 'auditor')
  @HeavyRead()
  @Get(':name/usage/series')
  usageSeries(
    @Param('namespace', NamespacePipe) namespace: string,
    @Param('name', ObjectNamePipe) name: string,
    @Query(dtoValidationPipe()) query: UsageSeriesQueryDto,
    @Req() request: Request,
  ): Promise<SharedQuotaUsageSeries> {
    const key = sharedQuotaKey({ kind: 'HierarchicalResourceQuota', name, namespace });
    return seriesOr404(this.usage, this.clock, key, query, 'hierarchicalresourcequotas.hnc.x-k8s.io', name, namespaceScopeOf(request));
  }

  @Allow('admin')
  @AnswersPosition(200)
  @Delete(':name')
  @HttpCode(200)
  async delete(@Param('namespace', NamespacePipe) namespace: string, @Param('name', ObjectNamePipe) name: string, @Req() request: Request, @Res({ passthrough: true }) response: Response) {
    const ref: SharedQuotaRef = { kind: 'HierarchicalResourceQuota', name, namespace };
    const removed = await this.writer.deleteSharedQuota(ref, { actor: requesterOf(request), unmanagedOnly: true });
    sendPosition(response, removed.position);
    return renderHierarchicalResourceQuota(removed.view);
  }

  /**
   * The reservations waiting for its room (issue 41), per namespace, in the order its fair drain
   * serves them. To a token limited to namespaces (the parent's), only its own namespaces'
   * waiters: the subtree's other namespaces are other teams' (`namespacesWithheld` counts them).
   */
  @Allow('admin', 'auditor', 'admission')
  @Get(':name/queue')
  async queue(@Param('namespace', NamespacePipe) namespace: string, @Param('name', ObjectNamePipe) name: string, @Req() request: Request): Promise<SharedQuotaQueue> {
    const key = sharedQuotaKey({ kind: 'HierarchicalResourceQuota', name, namespace });
    if (!(await this.queries.getSharedQuota(key))) throw new LedgerError('NotFound', `${'hierarchicalresourcequotas'} "${name}" not found`, { kind: 'hierarchicalresourcequotas', name });
    return withinScope(await this.queues.sharedQueue(key), namespaceScopeOf(request));
  }
}
