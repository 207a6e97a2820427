import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Put, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import {
  assertDefinitionSize,
  clusterResourceQuotaSizeErrors,
  resourceQuotaSizeErrors,
  sharedQuotaKey,
  validateClusterResourceQuota,
  validateHierarchicalResourceQuota,
  namespaceDefinitionOf,
  namespaceDeletionRefusal,
  validateNamespace,
  type SharedQuotaRef,
} from '@quota/domain';
import type { AppConfig } from '@quota/config';
import { APP_CONFIG } from '../config/app-config.module.js';
import {
  ClusterQueries,
  ClusterWriter,
  DefinitionQueries,
  LedgerClock,
  LedgerError,
  SharedUsageQueries,
  type DefinitionChange,
  type Page,
  type SharedQuotaUsageSeries,
} from '@quota/ledger';
import { readPutIdentity } from '../common/kube-object.js';
import { NamespacePipe, ObjectNamePipe } from '../common/path-params.js';
import { namespaceScopeOf, requesterOf } from '../auth/requester.js';
import { EventsQueryDto, UsageQueryDto, UsageSeriesQueryDto } from '../audit/audit.dto.js';
import { seriesRange } from '../audit/series-range.js';
import { dtoValidationPipe } from '../common/validation.js';
import { Allow } from '../auth/roles.decorator.js';
import { JsonBody } from '../common/handler-interceptor.js';
import { HeavyRead } from '../common/heavy-reads.js';
import { AnswersPosition, sendPosition } from '../common/ledger-position.js';
import { renderAppliedClusterResourceQuota, renderClusterResourceQuota, renderHierarchicalResourceQuota, renderNamespace } from './render.js';
import { userMetadata } from '../definitions/definition-handlers.js';

/**
 * Namespaces as objects and the quotas over several namespaces (issue 18). Writes go through
 * the ledger's ClusterWriter (one SERIALIZABLE transaction over every head a change moves);
 * reads come from the heads. Cluster-scoped routes take no `:namespace`, so a namespace-scoped
 * token cannot reach them; the namespaced ones are checked against its namespaces as usual.
 */
const LIST_MAX = 1000;
const DEFAULT_PAGE = 100;

const putOptions = (request: Request, expectedVersion: number | undefined) => ({ actor: requesterOf(request), ...(expectedVersion === undefined ? {} : { expectedVersion }) });

async function historyOr404(page: Promise<Page<DefinitionChange> | undefined>, resource: string, name: string): Promise<Page<DefinitionChange>> {
  const found = await page;
  if (!found) throw new LedgerError('NotFound', `${resource} "${name}" has no history: it never existed`, { kind: resource, name });
  return found;
}

/**
 * A shared quota's usage: now (its head, exact) or, with `?at=`, as it was at that instant
 * (the sum of what the namespaces covering it then contributed, each folded from the ledger).
 * With a `scope` (a token limited to namespaces: a HierarchicalResourceQuota's parent), the
 * total is the whole quota's, as HNC's status shows it, and the per-namespace parts only those
 * of namespaces in the scope; `namespacesWithheld` counts the others (issue 33).
 */
async function usageOr404(queries: ClusterQueries, usage: SharedUsageQueries, key: string, at: string | undefined, resource: string, name: string, scope?: ReadonlySet<string>) {
  if (at) {
    const then = await usage.usageAt(key, at);
    if (then) return withinScope(then, scope);
  } else {
    const view = await queries.getSharedQuota(key);
    if (view) return withinScope({ key, version: view.version, defined: true, hard: view.hard, used: view.used, namespaces: view.namespaces, overHard: view.overHard }, scope);
  }
  throw new LedgerError('NotFound', `${resource} "${name}" not found`, { kind: resource, name });
}

function withinScope<T extends { readonly namespaces: readonly { readonly namespace: string }[] }>(usage: T, scope: ReadonlySet<string> | undefined): T & { namespacesWithheld?: number } {
  if (!scope) return usage;
  const namespaces = usage.namespaces.filter((n) => scope.has(n.namespace));
  const withheld = usage.namespaces.length - namespaces.length;
  return { ...usage, namespaces, ...(withheld > 0 ? { namespacesWithheld: withheld } : {}) };
}

/** As usageOr404; with a `scope`, only the denials of namespaces in it are marked. */
async function seriesOr404(usage: SharedUsageQueries, clock: LedgerClock, key: string, query: UsageSeriesQueryDto, resource: string, name: string, scope?: ReadonlySet<string>): Promise<SharedQuotaUsageSeries> {
  const series = await usage.usageSeries(key, await seriesRange(query, clock), scope);
  if (!series) throw new LedgerError('NotFound', `${resource} "${name}" has no history: it never existed`, { kind: resource, name });
  return series;
}

const pageOf = (query: EventsQueryDto) => ({ ...(query.after ? { after: query.after } : {}), limit: query.limit ?? DEFAULT_PAGE });

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

@Controller('v1/clusterresourcequotas')
export class ClusterResourceQuotasController {
  constructor(
    @Inject(ClusterWriter) private readonly writer: ClusterWriter,
    @Inject(ClusterQueries) private readonly queries: ClusterQueries,
    @Inject(DefinitionQueries) private readonly definitions: DefinitionQueries,
    @Inject(SharedUsageQueries) private readonly usage: SharedUsageQueries,
    @Inject(LedgerClock) private readonly clock: LedgerClock,
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
    const result = await this.writer.putSharedQuota({ ref, spec: quota.spec.quota, selector: quota.spec.selector, metadata: userMetadata(quota.metadata) }, putOptions(request, expectedVersion));
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
    const removed = await this.writer.deleteSharedQuota({ kind: 'ClusterResourceQuota', name }, { actor: requesterOf(request) });
    sendPosition(response, removed.position);
    return renderClusterResourceQuota(removed.view);
  }
}

@Controller('v1/namespaces/:namespace/hierarchicalresourcequotas')
export class HierarchicalResourceQuotasController {
  constructor(
    @Inject(ClusterWriter) private readonly writer: ClusterWriter,
    @Inject(ClusterQueries) private readonly queries: ClusterQueries,
    @Inject(DefinitionQueries) private readonly definitions: DefinitionQueries,
    @Inject(SharedUsageQueries) private readonly usage: SharedUsageQueries,
    @Inject(LedgerClock) private readonly clock: LedgerClock,
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
    const result = await this.writer.putSharedQuota({ ref, spec: { hard: quota.spec.hard ?? {} }, metadata: userMetadata(quota.metadata) }, putOptions(request, expectedVersion));
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
  usageAt(
    @Param('namespace', NamespacePipe) namespace: string,
    @Param('name', ObjectNamePipe) name: string,
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
  async delete(
    @Param('namespace', NamespacePipe) namespace: string,
    @Param('name', ObjectNamePipe) name: string,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ) {
    const removed = await this.writer.deleteSharedQuota({ kind: 'HierarchicalResourceQuota', name, namespace }, { actor: requesterOf(request) });
    sendPosition(response, removed.position);
    return renderHierarchicalResourceQuota(removed.view);
  }
}
