import { BadRequestException, Body, Controller, Delete, Get, HttpCode, Inject, Injectable, Param, Post, Req, Res, UnprocessableEntityException, UsePipes, type PipeTransform } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { AppConfig } from '@quota/config';
import { defaultPodForAdmission, groupResourceForKind, isQualifiedName, objectShapeProblem, Resources, type GroupResource, type KubeObject, type Pod } from '@quota/domain';
import { Ledger, LedgerError, type AdmissionResult, type ReservationView } from '@quota/ledger';
import { NamespacePipe } from '../common/path-params.js';
import { dtoValidationPipe } from '../common/validation.js';
import { kubeStatus } from '../errors/kube-status.js';
import { APP_CONFIG } from '../ledger/ledger.provider.js';
import { requesterOf } from '../auth/requester.js';
import { ReserveDto } from './reserve.dto.js';
import { Allow } from '../auth/roles.decorator.js';
import { TimedAdmission } from '../observability/admission-timing.js';
import { Metrics } from '../observability/metrics.js';

/** Most entries in a plain resource list. */
const RESOURCES_MAX = 64;

@Injectable()
export class ReservationIdPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!/^[A-Za-z0-9._-]{1,128}$/.test(value)) {
      throw new BadRequestException(kubeStatus(400, `invalid reservation id ${JSON.stringify(value.slice(0, 200))} in the path: 1 to 128 letters, digits, '.', '_' or '-'`));
    }
    return value;
  }
}

const invalid = (field: string, message: string): UnprocessableEntityException =>
  new UnprocessableEntityException(kubeStatus(422, `${field}: ${message}`, { causes: [{ reason: 'FieldValueInvalid', field, message }] }));

const badRequest = (field: string, message: string): BadRequestException =>
  new BadRequestException(kubeStatus(400, `${field}: ${message}`, { causes: [{ reason: 'FieldValueInvalid', field, message }] }));

/** The body's apiVersion, or the object's; the two must agree when both are given. */
function apiVersionOf(dto: ReserveDto): string | undefined {
  const fromObject = dto.object?.['apiVersion'];
  if (fromObject !== undefined && typeof fromObject !== 'string') throw badRequest('object.apiVersion', 'must be a string such as "v1" or "apps/v1"');
  if (dto.apiVersion !== undefined && fromObject !== undefined && fromObject !== dto.apiVersion) {
    throw badRequest('object.apiVersion', `must equal apiVersion (${dto.apiVersion})`);
  }
  return dto.apiVersion ?? fromObject;
}

function groupResourceOf(dto: ReserveDto, apiVersion: string | undefined): GroupResource {
  if (dto.resource) {
    const dot = dto.resource.indexOf('.');
    return dot < 0 ? { group: '', resource: dto.resource } : { group: dto.resource.slice(dot + 1), resource: dto.resource.slice(0, dot) };
  }
  const known = groupResourceForKind(dto.kind, apiVersion);
  if (!known) {
    const which = apiVersion === undefined ? dto.kind : `${dto.kind} in ${apiVersion}`;
    throw invalid('kind', `${which} is not a kind this service knows; name its resource instead ("resource": "widgets.example.com")`);
  }
  return known;
}

const isPods = (groupResource: GroupResource): boolean => groupResource.group === '' && groupResource.resource === 'pods';

/** A plain resource list: qualified names, quantities Kubernetes accepts, at most RESOURCES_MAX. */
function resourceListOf(raw: Record<string, unknown>): Record<string, string> {
  const entries = Object.entries(raw);
  if (entries.length === 0) throw invalid('resources', 'must name at least one resource');
  if (entries.length > RESOURCES_MAX) throw invalid('resources', `at most ${RESOURCES_MAX} resources per reservation, got ${entries.length}`);
  for (const [name, value] of entries) {
    const problems = isQualifiedName(name);
    if (problems.length > 0) throw invalid(`resources[${name}]`, `invalid resource name: ${problems.join('; ')}`);
    if (typeof value !== 'string') throw badRequest(`resources[${name}]`, 'must be a quantity string such as "500m" or "1Gi"');
  }
  return Resources.canonicalResourceList(Resources.parseResourceList(raw, 'resources'));
}

function objectOf(dto: ReserveDto, groupResource: GroupResource, raw: Record<string, unknown>, field: 'object' | 'oldObject', namespace: string): KubeObject {
  const metadata = raw['metadata'];
  if (metadata !== undefined && (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))) throw badRequest(`${field}.metadata`, 'must be an object');
  const objectNamespace = (metadata as { namespace?: unknown } | undefined)?.namespace;
  if (objectNamespace !== undefined && objectNamespace !== namespace) {
    throw badRequest(`${field}.metadata.namespace`, 'the namespace of the provided object does not match the namespace sent on the request');
  }
  if (raw['kind'] !== undefined && raw['kind'] !== dto.kind) throw badRequest(`${field}.kind`, `must equal kind (${dto.kind})`);
  const problem = objectShapeProblem(groupResource, raw, field);
  if (problem) throw badRequest(problem.field, problem.message);
  const object: KubeObject = { ...raw, kind: dto.kind, metadata: { ...(metadata as object | undefined), namespace } };
  // A raw object never went through the API server's defaulting; quota charges defaulted pods.
  return isPods(groupResource) ? defaultPodForAdmission(object as Pod) : object;
}

/**
 * The answer to a reserve, the same for a first and a repeated request. Allowed answers:
 * 201 with the new reservation; 200 with `dryRun: true` and no id for a dry run; 200 with
 * `state: "none"` when the request is allowed but charges nothing (a kind no quota counts),
 * so there is nothing to commit or release.
 */
function reserveAnswer(namespace: string, name: string | undefined, kind: string, result: AdmissionResult): { status: number; body: unknown } {
  if (!result.allowed) {
    return {
      status: result.code,
      body: kubeStatus(result.code, result.message ?? 'denied', {
        ...(name ? { name } : {}),
        kind,
        ...(result.stage ? { stage: result.stage } : {}),
        ...(result.denial ? { denial: result.denial } : {}),
      }),
    };
  }
  if (result.dryRun) {
    return {
      status: 200,
      body: { namespace, state: result.charged ? 'reserved' : 'none', dryRun: true, charged: result.charged ?? {}, ...(result.expiresAt ? { expiresAt: result.expiresAt } : {}) },
    };
  }
  if (!result.reservationId) return { status: 200, body: { namespace, state: 'none', charged: {} } };
  return {
    status: 201,
    body: { id: result.reservationId, namespace, state: 'reserved', charged: result.charged ?? {}, ...(result.expiresAt ? { expiresAt: result.expiresAt } : {}) },
  };
}

/**
 * REST admission for platform teams that create objects without a Kubernetes API server in
 * front: reserve (an object or a plain resource list), then commit once the object exists,
 * or release it. The reservation counts toward usage from the moment it is granted.
 */
@Controller('v1/namespaces/:namespace/reservations')
export class ReservationsController {
  constructor(
    @Inject(Ledger) private readonly ledger: Ledger,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(Metrics) private readonly metrics: Metrics,
  ) {}

  @Allow('admission')
  @TimedAdmission('reserve')
  @Post()
  @UsePipes(dtoValidationPipe())
  async reserve(
    @Param('namespace', NamespacePipe) namespace: string,
    @Body() dto: ReserveDto,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<unknown> {
    if ((dto.object === undefined) === (dto.resources === undefined)) {
      throw badRequest('object', 'give exactly one of object (a Kubernetes object) or resources (a resource list)');
    }
    if (dto.ttlSeconds !== undefined && dto.ttlSeconds > this.config.reservationTtlMaxSeconds) {
      throw invalid('ttlSeconds', `must be at most ${this.config.reservationTtlMaxSeconds}`);
    }
    const operation = dto.operation ?? 'CREATE';
    if (dto.oldObject !== undefined && dto.object === undefined) throw badRequest('oldObject', 'only goes with object (the object as it will be stored)');
    const groupResource = groupResourceOf(dto, apiVersionOf(dto));
    const object = dto.object ? objectOf(dto, groupResource, dto.object, 'object', namespace) : undefined;
    const oldObject = dto.oldObject ? objectOf(dto, groupResource, dto.oldObject, 'oldObject', namespace) : undefined;
    if (operation === 'UPDATE' && object && !oldObject) throw badRequest('oldObject', 'an UPDATE of an object needs the object as it is now (oldObject)');
    const resources = dto.resources ? resourceListOf(dto.resources) : undefined;
    const name = dto.name ?? object?.metadata?.name;

    const outcome = await this.ledger.admit({
      namespace,
      source: 'rest',
      request: { operation, groupResource, namespace, ...(name ? { name } : {}), ...(object ? { object } : {}), ...(oldObject ? { oldObject } : {}) },
      ...(resources ? { resources } : {}),
      ...(dto.requestId ? { requestKey: `rest:${dto.requestId}` } : {}),
      dryRun: dto.dryRun === true,
      requester: requesterOf(request),
      ...(dto.ttlSeconds === undefined ? {} : { ttlMs: dto.ttlSeconds * 1000 }),
      requireKnownNamespace: true,
    });
    this.metrics.decided('rest', outcome.result);
    const answer = reserveAnswer(namespace, name, dto.kind, outcome.result);
    response.status(answer.status);
    return answer.body;
  }

  @Allow('admission')
  @Post(':id/commit')
  @HttpCode(200)
  async commit(@Param('namespace', NamespacePipe) namespace: string, @Param('id', ReservationIdPipe) id: string, @Req() request: Request): Promise<ReservationView> {
    return (await this.ledger.commit(namespace, id, { actor: requesterOf(request) })).view;
  }

  @Allow('admission')
  @Delete(':id')
  @HttpCode(200)
  async release(@Param('namespace', NamespacePipe) namespace: string, @Param('id', ReservationIdPipe) id: string, @Req() request: Request): Promise<ReservationView> {
    return (await this.ledger.release(namespace, id, { actor: requesterOf(request), reason: 'cancelled' })).view;
  }

  @Allow('admin', 'auditor', 'admission')
  @Get(':id')
  async get(@Param('namespace', NamespacePipe) namespace: string, @Param('id', ReservationIdPipe) id: string): Promise<ReservationView> {
    const view = await this.ledger.getReservation(namespace, id);
    if (!view) throw new LedgerError('NotFound', `reservations "${id}" not found`, { kind: 'reservations', name: id });
    return view;
  }
}
