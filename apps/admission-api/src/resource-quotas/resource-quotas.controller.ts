import { Body, Controller, Delete, Get, HttpCode, Inject, Put, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import {
  assertDefinitionSize,
  quotaObjectCountNames,
  resourceQuotaSizeErrors,
  unroutedCountWarnings,
  validateResourceQuota,
  type QuotaDefinition,
  type ResourceQuota,
} from '@quota/domain';
import {
  DefinitionQueries,
  LedgerCommands,
  UsageQueries,
  type DefinitionChange,
  type Page,
  type ProjectedUsage,
  type QuotaView,
} from '@quota/ledger';
import { renderMetadata } from '../common/kube/kube-object.js';
import { NamespaceParam, ObjectNameParam } from '../common/kube/path-params.js';
import { EventsQueryDto } from '../audit/audit.dto.js';
import { dtoValidationPipe } from '../common/kube/validation.js';
import { Allow } from '../auth/roles.decorator.js';
import { JsonBody } from '../common/edge/body-guard.js';
import { AnswersPosition } from '../common/ledger/ledger-position.js';
import { withoutSystemAnnotations } from '../definitions/cluster-managed.js';
import { DefinitionHandlers, userMetadata, type DefinitionKind, type DefinitionList } from '../definitions/definition-handlers.js';

/** Annotations that say how fresh a read's `status.used` is. */
export const USED_VERSION_ANNOTATION = 'quota-ledger.io/used-version';
export const LEDGER_VERSION_ANNOTATION = 'quota-ledger.io/ledger-version';
export const USED_PROJECTED_AT_ANNOTATION = 'quota-ledger.io/used-projected-at';

/**
 * A stored quota as Kubernetes shows it: spec as set, status.hard and status.used
 * canonical. With `projected`, used is the projection's (a read), annotated with the
 * namespace version it reflects and the ledger's version now; without, the write's own.
 */
export function renderQuota(view: QuotaView, projected?: ProjectedUsage): ResourceQuota {
  const metadata = renderMetadata({
    name: view.definition.name,
    namespace: view.namespace,
    version: view.version,
    createdAt: view.createdAt,
    ...(view.definition.metadata ? { metadata: view.definition.metadata } : {}),
  });
  if (!projected)
    return { apiVersion: 'v1', kind: 'ResourceQuota', metadata, spec: view.definition.spec, status: { hard: view.hard, used: view.used } };
  const projectedUsed = projected.used.get(view.definition.name) ?? {};
  const used = Object.fromEntries(Object.keys(view.hard).map((name) => [name, projectedUsed[name] ?? '0']));
  // The count of ResourceQuotas comes from the definitions, which the view has at the head.
  for (const name of quotaObjectCountNames(view.definition.spec)) used[name] = view.used[name] ?? '0';
  const freshness = {
    [USED_VERSION_ANNOTATION]: String(projected.version),
    [LEDGER_VERSION_ANNOTATION]: String(projected.headVersion),
    ...(projected.projectedAt ? { [USED_PROJECTED_AT_ANNOTATION]: projected.projectedAt } : {}),
  };
  return {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { ...metadata, annotations: { ...metadata.annotations, ...freshness } },
    spec: view.definition.spec,
    status: { hard: view.hard, used },
  };
}

/**
 * Admin CRUD of ResourceQuota. Every change is a ledger event (QuotaDefined / Changed /
 * Removed), so the history of a quota's limits is auditable; `status.used` is the head's
 * running usage as the write left it; reads (GET, list) show the projection worker's usage,
annotated with the version it reflects (`quota-ledger.io/used-version`) against the ledger's
(`quota-ledger.io/ledger-version`); /usage is the exact head. Lowering `hard` below `used` is allowed,
 * as in Kubernetes, and shows as used > hard.
 */
@Controller('v1/namespaces/:namespace/resourcequotas')
export class ResourceQuotasController {
  private readonly serve: DefinitionHandlers<QuotaDefinition, QuotaView, ResourceQuota>;

  constructor(
    @Inject(LedgerCommands) ledger: LedgerCommands,
    @Inject(DefinitionQueries) definitions: DefinitionQueries,
    @Inject(UsageQueries) usage: UsageQueries,
  ) {
    this.serve = new DefinitionHandlers(resourceQuotaKind(ledger, definitions, usage));
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
  ): Promise<ResourceQuota> {
    return this.serve.put(namespace, name, raw, request, response);
  }

  @Allow('admin', 'auditor', 'admission')
  @Get(':name')
  get(@NamespaceParam() namespace: string, @ObjectNameParam() name: string): Promise<ResourceQuota> {
    return this.serve.get(namespace, name);
  }

  /** Every change of its definition: who, when, before and after (also after it was deleted). */
  @Allow('admin', 'auditor')
  @Get(':name/history')
  history(
    @NamespaceParam() namespace: string,
    @ObjectNameParam() name: string,
    @Query(dtoValidationPipe()) query: EventsQueryDto,
  ): Promise<Page<DefinitionChange>> {
    return this.serve.history(namespace, name, query);
  }

  @Allow('admin', 'auditor', 'admission')
  @Get()
  list(@NamespaceParam() namespace: string): Promise<DefinitionList<ResourceQuota>> {
    return this.serve.list(namespace);
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
  ): Promise<ResourceQuota> {
    return this.serve.delete(namespace, name, request, response);
  }
}

/** ResourceQuota as a definition kind: validated as Kubernetes validates it, read with the projection's usage. */
function resourceQuotaKind(
  ledger: LedgerCommands,
  definitions: DefinitionQueries,
  usage: UsageQueries,
): DefinitionKind<QuotaDefinition, QuotaView, ResourceQuota> {
  return {
    kind: 'ResourceQuota',
    resource: 'resourcequotas',
    apiVersion: 'v1',
    stream: 'namespace',
    definitionOf(body, name) {
      const quota = validateResourceQuota(body);
      assertDefinitionSize('ResourceQuota', name, resourceQuotaSizeErrors(quota));
      return { name, spec: quota.spec ?? {}, metadata: userMetadata(quota.metadata, withoutSystemAnnotations) };
    },
    // One that came from a LedgerQuota object is changed there, not here (409, decided in the write's transaction).
    put: (namespace, definition, options) => ledger.putQuota(namespace, definition, { ...options, unmanagedOnly: true }),
    remove: (namespace, name, options) => ledger.deleteQuota(namespace, name, { ...options, unmanagedOnly: true }),
    history: (namespace, name, page) => definitions.definitionHistory(namespace, 'quota', name, page),
    render: (view) => renderQuota(view),
    warnings: (definition) => unroutedCountWarnings(Object.keys(definition.spec.hard ?? {})),
    async read(namespace, name) {
      const [view, projected] = await Promise.all([definitions.getQuota(namespace, name), usage.projectedUsage(namespace)]);
      return view ? renderQuota(view, projected) : undefined;
    },
    async readAll(namespace) {
      const [views, projected] = await Promise.all([definitions.listQuotas(namespace), usage.projectedUsage(namespace)]);
      return views.map((view) => renderQuota(view, projected));
    },
  };
}
