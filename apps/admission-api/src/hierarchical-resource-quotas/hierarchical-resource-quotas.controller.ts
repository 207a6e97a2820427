import { Body, Controller, Delete, Get, HttpCode, Inject, Put, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { SharedQuotaQueue } from '@quota/api';
import {
  assertDefinitionSize,
  resourceQuotaSizeErrors,
  sharedQuotaKey,
  validateHierarchicalResourceQuota,
  type SharedQuotaDefinition,
  type SharedQuotaRef,
} from '@quota/domain';
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
  type SharedQuotaView,
} from '@quota/ledger';
import { NamespaceParam, ObjectNameParam } from '../common/kube/path-params.js';
import { namespaceScopeOf } from '../auth/requester.js';
import { EventsQueryDto, UsageQueryDto, UsageSeriesQueryDto } from '../audit/audit.dto.js';
import { dtoValidationPipe } from '../common/kube/validation.js';
import { Allow } from '../auth/roles.decorator.js';
import { JsonBody } from '../common/edge/body-guard.js';
import { HeavyRead } from '../common/edge/heavy-reads.js';
import { AnswersPosition } from '../common/ledger/ledger-position.js';
import { renderHierarchicalResourceQuota } from '../shared-quotas/render.js';
import { withoutSystemAnnotations } from '../definitions/cluster-managed.js';
import { DefinitionHandlers, userMetadata, type DefinitionKind, type DefinitionList } from '../definitions/definition-handlers.js';
import { LIST_MAX, usageOr404, seriesOr404, withinScope } from '../shared-quotas/shared-quota-reads.js';

type HierarchicalResourceQuota = ReturnType<typeof renderHierarchicalResourceQuota>;

@Controller('v1/namespaces/:namespace/hierarchicalresourcequotas')
export class HierarchicalResourceQuotasController {
  private readonly serve: DefinitionHandlers<SharedQuotaDefinition, SharedQuotaView, HierarchicalResourceQuota>;

  constructor(
    @Inject(ClusterWriter) writer: ClusterWriter,
    @Inject(ClusterQueries) private readonly queries: ClusterQueries,
    @Inject(DefinitionQueries) definitions: DefinitionQueries,
    @Inject(SharedUsageQueries) private readonly usage: SharedUsageQueries,
    @Inject(LedgerClock) private readonly clock: LedgerClock,
    @Inject(QueueQueries) private readonly queues: QueueQueries,
  ) {
    this.serve = new DefinitionHandlers(hierarchicalResourceQuotaKind(writer, queries, definitions));
  }

  @Allow('admin')
  @JsonBody('definition')
  @AnswersPosition(201, 200)
  @Put(':name')
  put(
    @NamespaceParam() namespace: string,
    @ObjectNameParam() name: string,
    @Body() raw: unknown,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<HierarchicalResourceQuota> {
    return this.serve.put(namespace, name, raw, request, response);
  }

  @Allow('admin', 'auditor', 'admission')
  @Get()
  list(@NamespaceParam() namespace: string): Promise<DefinitionList<HierarchicalResourceQuota>> {
    return this.serve.list(namespace);
  }

  @Allow('admin', 'auditor', 'admission')
  @Get(':name')
  get(@NamespaceParam() namespace: string, @ObjectNameParam() name: string): Promise<HierarchicalResourceQuota> {
    return this.serve.get(namespace, name);
  }

  @Allow('admin', 'auditor')
  @Get(':name/history')
  history(
    @NamespaceParam() namespace: string,
    @ObjectNameParam() name: string,
    @Query(dtoValidationPipe()) query: EventsQueryDto,
  ): Promise<Page<DefinitionChange>> {
    return this.serve.history(namespace, name, query);
  }

  /** A token scoped to the parent reads the subtree's total, and the parts and denials of its own namespaces only. */
  @Allow('admin', 'auditor', 'admission')
  @HeavyRead('at')
  @Get(':name/usage')
  usageAt(
    @NamespaceParam() namespace: string,
    @ObjectNameParam() name: string,
    @Query(dtoValidationPipe()) query: UsageQueryDto,
    @Req() request: Request,
  ) {
    const key = sharedQuotaKey({ kind: 'HierarchicalResourceQuota', name, namespace });
    return usageOr404(this.queries, this.usage, key, query.at, 'hierarchicalresourcequotas.hnc.x-k8s.io', name, namespaceScopeOf(request));
  }

  @Allow('admin', 'auditor')
  @HeavyRead()
  @Get(':name/usage/series')
  usageSeries(
    @NamespaceParam() namespace: string,
    @ObjectNameParam() name: string,
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
  delete(
    @NamespaceParam() namespace: string,
    @ObjectNameParam() name: string,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<HierarchicalResourceQuota> {
    return this.serve.delete(namespace, name, request, response);
  }

  /**
   * The reservations waiting for its room, per namespace, in the order its fair drain
   * serves them. To a token limited to namespaces (the parent's), only its own namespaces'
   * waiters: the subtree's other namespaces are other teams' (`namespacesWithheld` counts them).
   */
  @Allow('admin', 'auditor', 'admission')
  @Get(':name/queue')
  async queue(@NamespaceParam() namespace: string, @ObjectNameParam() name: string, @Req() request: Request): Promise<SharedQuotaQueue> {
    const key = sharedQuotaKey({ kind: 'HierarchicalResourceQuota', name, namespace });
    if (!(await this.queries.getSharedQuota(key)))
      throw new LedgerError('NotFound', `${'hierarchicalresourcequotas'} "${name}" not found`, {
        kind: 'hierarchicalresourcequotas',
        name,
      });
    return withinScope(await this.queues.sharedQueue(key), namespaceScopeOf(request));
  }
}

/** HierarchicalResourceQuota as a definition kind: in its namespace (over its subtree), validated as HNC validates it, read from its head. */
function hierarchicalResourceQuotaKind(
  writer: ClusterWriter,
  queries: ClusterQueries,
  definitions: DefinitionQueries,
): DefinitionKind<SharedQuotaDefinition, SharedQuotaView, HierarchicalResourceQuota> {
  const refOf = (namespace: string, name: string): SharedQuotaRef => ({ kind: 'HierarchicalResourceQuota', name, namespace });
  return {
    kind: 'HierarchicalResourceQuota',
    apiVersion: 'hnc.x-k8s.io/v1alpha2',
    resource: 'hierarchicalresourcequotas',
    notFoundAs: 'hierarchicalresourcequotas.hnc.x-k8s.io',
    stream: 'own',
    definitionOf(body, name, namespace) {
      const quota = validateHierarchicalResourceQuota(body);
      assertDefinitionSize('HierarchicalResourceQuota', name, resourceQuotaSizeErrors({ spec: quota.spec }));
      return {
        ref: refOf(namespace, name),
        spec: { hard: quota.spec.hard ?? {} },
        metadata: userMetadata(quota.metadata, withoutSystemAnnotations),
      };
    },
    // One that came from a LedgerHierarchicalQuota object is changed there, not here (409, decided in
    // the write's transaction); nor can a PUT claim to be one.
    put: (_namespace, definition, options) => writer.putSharedQuota(definition, { ...options, unmanagedOnly: true }),
    remove: (namespace, name, options) => writer.deleteSharedQuota(refOf(namespace, name), { ...options, unmanagedOnly: true }),
    history: (namespace, name, page) => definitions.sharedQuotaHistory(sharedQuotaKey(refOf(namespace, name)), page),
    render: renderHierarchicalResourceQuota,
    async read(namespace, name) {
      const view = await queries.getSharedQuota(sharedQuotaKey(refOf(namespace, name)));
      return view ? renderHierarchicalResourceQuota(view) : undefined;
    },
    readAll: async (namespace) =>
      (await queries.listSharedQuotas(`hierarchicalresourcequotas/${namespace}/`, LIST_MAX)).map(renderHierarchicalResourceQuota),
  };
}
