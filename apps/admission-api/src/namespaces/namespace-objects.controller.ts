import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Put, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { namespaceDefinitionOf, namespaceDeletionRefusal, validateNamespace } from '@quota/domain';
import type { AppConfig } from '@quota/config';
import { APP_CONFIG } from '../config/app-config.module.js';
import { ClusterQueries, ClusterWriter, DefinitionQueries, LedgerError, type DefinitionChange, type Page } from '@quota/ledger';
import { readPutIdentity } from '../common/kube/kube-object.js';
import { NamespacePipe, ObjectNamePipe } from '../common/kube/path-params.js';
import { requesterOf } from '../auth/requester.js';
import { EventsQueryDto } from '../audit/audit.dto.js';
import { dtoValidationPipe } from '../common/kube/validation.js';
import { Allow } from '../auth/roles.decorator.js';
import { JsonBody } from '../common/edge/body-guard.js';
import { AnswersPosition, sendPosition } from '../common/ledger/ledger-position.js';
import { renderAppliedClusterResourceQuota, renderNamespace } from '../shared-quotas/render.js';
import { putOptions, historyOr404, pageOf } from '../shared-quotas/shared-quota-reads.js';

@Controller('v1/namespaces')
export class NamespaceObjectsController {
  constructor(
    @Inject(ClusterWriter) private readonly writer: ClusterWriter,
    @Inject(ClusterQueries) private readonly queries: ClusterQueries,
    @Inject(DefinitionQueries) private readonly definitions: DefinitionQueries,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Creates or changes a Namespace: its labels decide which ClusterResourceQuotas and
   * HierarchicalResourceQuotas cover it, from this write on. A cluster-scoped write (the path
   * names no `:namespace`), so a token scoped to the namespace cannot relabel it out of a quota.
   */
  @Allow('admin')
  @JsonBody('definition')
  @AnswersPosition(201, 200)
  @Put(':name')
  async put(@Param('name', NamespacePipe) name: string, @Body() raw: unknown, @Req() request: Request, @Res({ passthrough: true }) response: Response) {
    const { body, expectedVersion } = readPutIdentity(raw, '', name, 'Namespace');
    const { namespace: _ignored, ...metadata } = (body['metadata'] ?? {}) as Record<string, unknown>;
    const result = await this.writer.putNamespace(namespaceDefinitionOf(name, validateNamespace({ ...body, metadata })), putOptions(request, expectedVersion));
    response.status(result.created ? 201 : 200);
    sendPosition(response, result.position);
    return renderNamespace(result.view);
  }

  @Allow('admin', 'auditor', 'admission')
  @Get(':namespace')
  async get(@Param('namespace', NamespacePipe) name: string) {
    const view = await this.queries.getNamespace(name);
    if (!view) throw new LedgerError('NotFound', `namespaces "${name}" not found`, { kind: 'namespaces', name });
    return renderNamespace(view);
  }

  /** Every change of its labels and annotations: who, when, before and after. */
  @Allow('admin', 'auditor')
  @Get(':namespace/history')
  history(@Param('namespace', NamespacePipe) name: string, @Query(dtoValidationPipe()) query: EventsQueryDto): Promise<Page<DefinitionChange>> {
    return historyOr404(this.definitions.namespaceHistory(name, pageOf(query)), 'namespaces', name);
  }

  /** Cluster-scoped, as the PUT. default, kube-system and kube-public are never deleted (NamespaceLifecycle). */
  @Allow('admin')
  @AnswersPosition(200)
  @Delete(':name')
  @HttpCode(200)
  async delete(@Param('name', NamespacePipe) name: string, @Req() request: Request, @Res({ passthrough: true }) response: Response) {
    const refused = namespaceDeletionRefusal(name, this.config.admission.plugins);
    if (refused) throw new LedgerError('Forbidden', refused, { kind: 'namespaces', name });
    const removed = await this.writer.deleteNamespace(name, { actor: requesterOf(request) });
    sendPosition(response, removed.position);
    return renderNamespace(removed.view);
  }

  /** The ClusterResourceQuotas covering the namespace, readable by its own tokens (OpenShift's AppliedClusterResourceQuota). */
  @Allow('admin', 'auditor', 'admission')
  @Get(':namespace/appliedclusterresourcequotas')
  async applied(@Param('namespace', NamespacePipe) namespace: string) {
    const views = (await this.queries.coveringNamespace(namespace)).filter((v) => v.definition.ref.kind === 'ClusterResourceQuota');
    return { apiVersion: 'quota.openshift.io/v1', kind: 'AppliedClusterResourceQuotaList', metadata: {}, items: views.map((v) => renderAppliedClusterResourceQuota(v, namespace)) };
  }

  @Allow('admin', 'auditor', 'admission')
  @Get(':namespace/appliedclusterresourcequotas/:name')
  async appliedOne(@Param('namespace', NamespacePipe) namespace: string, @Param('name', ObjectNamePipe) name: string) {
    const view = (await this.queries.coveringNamespace(namespace)).find((v) => v.definition.ref.kind === 'ClusterResourceQuota' && v.definition.ref.name === name);
    if (!view) throw new LedgerError('NotFound', `appliedclusterresourcequotas "${name}" not found`, { kind: 'appliedclusterresourcequotas', name });
    return renderAppliedClusterResourceQuota(view, namespace);
  }
}
