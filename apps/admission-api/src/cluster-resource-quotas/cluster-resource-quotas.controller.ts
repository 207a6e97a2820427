import { Body, Controller, Delete, Get, HttpCode, Inject, Put, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { SharedQuotaQueue } from '@quota/api';
import {
  assertDefinitionSize,
  clusterResourceQuotaSizeErrors,
  sharedQuotaKey,
  validateClusterResourceQuota,
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
import { ObjectNameParam } from '../common/kube/path-params.js';
import { EventsQueryDto, UsageQueryDto, UsageSeriesQueryDto } from '../audit/audit.dto.js';
import { dtoValidationPipe } from '../common/kube/validation.js';
import { Allow } from '../auth/roles.decorator.js';
import { JsonBody } from '../common/edge/body-guard.js';
import { HeavyRead } from '../common/edge/heavy-reads.js';
import { AnswersPosition } from '../common/ledger/ledger-position.js';
import { renderClusterResourceQuota } from '../shared-quotas/render.js';
import { withoutSystemAnnotations } from '../definitions/cluster-managed.js';
import {
  CLUSTER_SCOPED,
  DefinitionHandlers,
  userMetadata,
  type DefinitionKind,
  type DefinitionList,
} from '../definitions/definition-handlers.js';
import { LIST_MAX, usageOr404, seriesOr404 } from '../shared-quotas/shared-quota-reads.js';

type ClusterResourceQuota = ReturnType<typeof renderClusterResourceQuota>;

@Controller('v1/clusterresourcequotas')
export class ClusterResourceQuotasController {
  private readonly serve: DefinitionHandlers<SharedQuotaDefinition, SharedQuotaView, ClusterResourceQuota>;

  constructor(
    @Inject(ClusterWriter) writer: ClusterWriter,
    @Inject(ClusterQueries) private readonly queries: ClusterQueries,
    @Inject(DefinitionQueries) definitions: DefinitionQueries,
    @Inject(SharedUsageQueries) private readonly usage: SharedUsageQueries,
    @Inject(LedgerClock) private readonly clock: LedgerClock,
    @Inject(QueueQueries) private readonly queues: QueueQueries,
  ) {
    this.serve = new DefinitionHandlers(clusterResourceQuotaKind(writer, queries, definitions));
  }

  @Allow('admin')
  @JsonBody('definition')
  @AnswersPosition(201, 200)
  @Put(':name')
  put(
    @ObjectNameParam() name: string,
    @Body() raw: unknown,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<ClusterResourceQuota> {
    return this.serve.put(CLUSTER_SCOPED, name, raw, request, response);
  }

  @Allow('admin', 'auditor', 'admission')
  @Get()
  list(): Promise<DefinitionList<ClusterResourceQuota>> {
    return this.serve.list(CLUSTER_SCOPED);
  }

  @Allow('admin', 'auditor', 'admission')
  @Get(':name')
  get(@ObjectNameParam() name: string): Promise<ClusterResourceQuota> {
    return this.serve.get(CLUSTER_SCOPED, name);
  }

  @Allow('admin', 'auditor')
  @Get(':name/history')
  history(@ObjectNameParam() name: string, @Query(dtoValidationPipe()) query: EventsQueryDto): Promise<Page<DefinitionChange>> {
    return this.serve.history(CLUSTER_SCOPED, name, query);
  }

  /** Its usage now or, with `?at=`, at an instant, with each covered namespace's part. */
  @Allow('admin', 'auditor', 'admission')
  @HeavyRead('at')
  @Get(':name/usage')
  usageAt(@ObjectNameParam() name: string, @Query(dtoValidationPipe()) query: UsageQueryDto) {
    return usageOr404(
      this.queries,
      this.usage,
      sharedQuotaKey({ kind: 'ClusterResourceQuota', name }),
      query.at,
      'clusterresourcequotas',
      name,
    );
  }

  /** Its usage sampled over a range (as the namespace's usage series), with its limit changes and the denials naming it. */
  @Allow('admin', 'auditor')
  @HeavyRead()
  @Get(':name/usage/series')
  usageSeries(@ObjectNameParam() name: string, @Query(dtoValidationPipe()) query: UsageSeriesQueryDto): Promise<SharedQuotaUsageSeries> {
    return seriesOr404(
      this.usage,
      this.clock,
      sharedQuotaKey({ kind: 'ClusterResourceQuota', name }),
      query,
      'clusterresourcequotas',
      name,
    );
  }

  @Allow('admin')
  @AnswersPosition(200)
  @Delete(':name')
  @HttpCode(200)
  delete(
    @ObjectNameParam() name: string,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<ClusterResourceQuota> {
    return this.serve.delete(CLUSTER_SCOPED, name, request, response);
  }

  /** The reservations waiting for its room, per namespace, in the order its fair drain serves them. */
  @Allow('admin', 'auditor', 'admission')
  @Get(':name/queue')
  async queue(@ObjectNameParam() name: string): Promise<SharedQuotaQueue> {
    const key = sharedQuotaKey({ kind: 'ClusterResourceQuota', name });
    if (!(await this.queries.getSharedQuota(key)))
      throw new LedgerError('NotFound', `${'clusterresourcequotas'} "${name}" not found`, { kind: 'clusterresourcequotas', name });
    return this.queues.sharedQueue(key);
  }
}

/** ClusterResourceQuota as a definition kind: cluster-scoped, validated as OpenShift validates it, read from its head. */
function clusterResourceQuotaKind(
  writer: ClusterWriter,
  queries: ClusterQueries,
  definitions: DefinitionQueries,
): DefinitionKind<SharedQuotaDefinition, SharedQuotaView, ClusterResourceQuota> {
  const refOf = (name: string): SharedQuotaRef => ({ kind: 'ClusterResourceQuota', name });
  return {
    kind: 'ClusterResourceQuota',
    apiVersion: 'quota.openshift.io/v1',
    resource: 'clusterresourcequotas',
    clusterScoped: true,
    stream: 'own',
    definitionOf(body, name) {
      const quota = validateClusterResourceQuota(body);
      assertDefinitionSize('ClusterResourceQuota', name, clusterResourceQuotaSizeErrors(quota));
      return {
        ref: refOf(name),
        spec: quota.spec.quota,
        selector: quota.spec.selector,
        metadata: userMetadata(quota.metadata, withoutSystemAnnotations),
      };
    },
    // One that came from a LedgerClusterQuota object is changed there, not here (409, decided in the
    // write's transaction); nor can a PUT claim to be one.
    put: (_cluster, definition, options) => writer.putSharedQuota(definition, { ...options, unmanagedOnly: true }),
    remove: (_cluster, name, options) => writer.deleteSharedQuota(refOf(name), { ...options, unmanagedOnly: true }),
    history: (_cluster, name, page) => definitions.sharedQuotaHistory(sharedQuotaKey(refOf(name)), page),
    render: renderClusterResourceQuota,
    async read(_cluster, name) {
      const view = await queries.getSharedQuota(sharedQuotaKey(refOf(name)));
      return view ? renderClusterResourceQuota(view) : undefined;
    },
    readAll: async () => (await queries.listSharedQuotas('clusterresourcequotas/', LIST_MAX)).map(renderClusterResourceQuota),
  };
}
