import { Body, Controller, Delete, Get, HttpCode, Inject, Put, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { namespaceDefinitionOf, namespaceDeletionRefusal, validateNamespace, type NamespaceDefinition } from '@quota/domain';
import type { AppConfig } from '@quota/config';
import { APP_CONFIG } from '../config/app-config.module.js';
import {
  ClusterQueries,
  ClusterWriter,
  DefinitionQueries,
  LedgerError,
  type DefinitionChange,
  type NamespaceView,
  type Page,
} from '@quota/ledger';
import { NamespaceParam, ObjectNameParam } from '../common/kube/path-params.js';
import { EventsQueryDto } from '../audit/audit.dto.js';
import { dtoValidationPipe } from '../common/kube/validation.js';
import { Allow } from '../auth/roles.decorator.js';
import { JsonBody } from '../common/edge/body-guard.js';
import { AnswersPosition } from '../common/ledger/ledger-position.js';
import { CLUSTER_SCOPED, DefinitionHandlers, type DefinitionKind } from '../definitions/definition-handlers.js';
import { renderAppliedClusterResourceQuota, renderNamespace } from '../shared-quotas/render.js';

type Namespace = ReturnType<typeof renderNamespace>;

@Controller('v1/namespaces')
export class NamespaceObjectsController {
  private readonly serve: DefinitionHandlers<NamespaceDefinition, NamespaceView, Namespace>;

  constructor(
    @Inject(ClusterWriter) writer: ClusterWriter,
    @Inject(ClusterQueries) private readonly queries: ClusterQueries,
    @Inject(DefinitionQueries) definitions: DefinitionQueries,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.serve = new DefinitionHandlers(namespaceKind(writer, queries, definitions, config));
  }

  /**
   * Creates or changes a Namespace: its labels decide which ClusterResourceQuotas and
   * HierarchicalResourceQuotas cover it, from this write on. A cluster-scoped write (the path
   * names no `:namespace`), so a token scoped to the namespace cannot relabel it out of a quota.
   */
  @Allow('admin')
  @JsonBody('definition')
  @AnswersPosition(201, 200)
  @Put(':name')
  put(
    @NamespaceParam('name') name: string,
    @Body() raw: unknown,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<Namespace> {
    return this.serve.put(CLUSTER_SCOPED, name, raw, request, response);
  }

  @Allow('admin', 'auditor', 'admission')
  @Get(':namespace')
  get(@NamespaceParam() name: string): Promise<Namespace> {
    return this.serve.get(CLUSTER_SCOPED, name);
  }

  /** Every change of its labels and annotations: who, when, before and after. */
  @Allow('admin', 'auditor')
  @Get(':namespace/history')
  history(@NamespaceParam() name: string, @Query(dtoValidationPipe()) query: EventsQueryDto): Promise<Page<DefinitionChange>> {
    return this.serve.history(CLUSTER_SCOPED, name, query);
  }

  /** Cluster-scoped, as the PUT. default, kube-system and kube-public are never deleted (NamespaceLifecycle). */
  @Allow('admin')
  @AnswersPosition(200)
  @Delete(':name')
  @HttpCode(200)
  delete(
    @NamespaceParam('name') name: string,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<Namespace> {
    return this.serve.delete(CLUSTER_SCOPED, name, request, response);
  }

  /** The ClusterResourceQuotas covering the namespace, readable by its own tokens (OpenShift's AppliedClusterResourceQuota). */
  @Allow('admin', 'auditor', 'admission')
  @Get(':namespace/appliedclusterresourcequotas')
  async applied(@NamespaceParam() namespace: string) {
    const views = (await this.queries.coveringNamespace(namespace)).filter((v) => v.definition.ref.kind === 'ClusterResourceQuota');
    return {
      apiVersion: 'quota.openshift.io/v1',
      kind: 'AppliedClusterResourceQuotaList',
      metadata: {},
      items: views.map((v) => renderAppliedClusterResourceQuota(v, namespace)),
    };
  }

  @Allow('admin', 'auditor', 'admission')
  @Get(':namespace/appliedclusterresourcequotas/:name')
  async appliedOne(@NamespaceParam() namespace: string, @ObjectNameParam() name: string) {
    const view = (await this.queries.coveringNamespace(namespace)).find(
      (v) => v.definition.ref.kind === 'ClusterResourceQuota' && v.definition.ref.name === name,
    );
    if (!view)
      throw new LedgerError('NotFound', `appliedclusterresourcequotas "${name}" not found`, { kind: 'appliedclusterresourcequotas', name });
    return renderAppliedClusterResourceQuota(view, namespace);
  }
}

/**
 * Namespace as a definition kind: cluster-scoped, its labels and annotations validated as the API
 * server validates them; listed by NamespacesController (the namespaces' overview), not here.
 */
function namespaceKind(
  writer: ClusterWriter,
  queries: ClusterQueries,
  definitions: DefinitionQueries,
  config: AppConfig,
): DefinitionKind<NamespaceDefinition, NamespaceView, Namespace> {
  return {
    kind: 'Namespace',
    apiVersion: 'v1',
    resource: 'namespaces',
    clusterScoped: true,
    stream: 'own',
    definitionOf: (body, name) => namespaceDefinitionOf(name, validateNamespace(body)),
    put: (_cluster, definition, options) => writer.putNamespace(definition, options),
    async remove(_cluster, name, options) {
      const refused = namespaceDeletionRefusal(name, config.admission.plugins);
      if (refused) throw new LedgerError('Forbidden', refused, { kind: 'namespaces', name });
      return writer.deleteNamespace(name, options);
    },
    history: (_cluster, name, page) => definitions.namespaceHistory(name, page),
    render: renderNamespace,
    async read(_cluster, name) {
      const view = await queries.getNamespace(name);
      return view ? renderNamespace(view) : undefined;
    },
  };
}
