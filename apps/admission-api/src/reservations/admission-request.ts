import { BadRequestException, UnprocessableEntityException } from '@nestjs/common';
import {
  cutText,
  defaultPodForAdmission,
  groupResourceForKind,
  isQualifiedName,
  nameProblem,
  nameRuleFor,
  objectShapeProblem,
  RESOURCE_LIST_MAX,
  Resources,
  type GroupResource,
  type KubeObject,
  type Pod,
} from '@quota/domain';
import type { AdmitCommand } from '@quota/ledger';
import { kubeStatus } from '../errors/kube-status.js';
import type { ReserveDto } from './reserve.dto.js';

/** The fields of a reserve body that say what is admitted (a what-if sends only these). */
export type AdmissionBody = Omit<ReserveDto, 'requestId' | 'dryRun' | 'wait'>;

/** Highest and lowest priority a queued reservation may ask for. */
export const WAIT_PRIORITY_MAX = 1000;

/**
 * A reserve body's `wait`, checked: whole seconds up to the configured most, an integer
 * priority (default 0); only with a resource list, which is what the queue re-checks when room frees.
 */
export function waitOf(dto: ReserveDto, waitMaxSeconds: number): AdmitCommand['wait'] {
  if (dto.wait === undefined) return undefined;
  const unknown = Object.keys(dto.wait).filter((key) => key !== 'seconds' && key !== 'priority');
  if (unknown.length > 0) throw badRequest(`wait.${cutText(unknown[0] ?? '')}`, 'unknown field: wait takes seconds and priority');
  const { seconds, priority = 0 } = dto.wait;
  if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < 1 || seconds > waitMaxSeconds) {
    throw invalid('wait.seconds', `must be a whole number of seconds from 1 to ${waitMaxSeconds} (QUEUE_WAIT_MAX_SECONDS)`);
  }
  if (typeof priority !== 'number' || !Number.isInteger(priority) || Math.abs(priority) > WAIT_PRIORITY_MAX) {
    throw invalid('wait.priority', `must be an integer from -${WAIT_PRIORITY_MAX} to ${WAIT_PRIORITY_MAX}`);
  }
  if (dto.resources === undefined) throw invalid('wait', 'only a resource list (resources) can wait in the queue, not an object');
  if (dto.dryRun === true) throw badRequest('wait', 'a dry run does not wait');
  return { seconds, priority };
}

const invalid = (field: string, message: string): UnprocessableEntityException =>
  new UnprocessableEntityException(kubeStatus(422, `${field}: ${message}`, { causes: [{ reason: 'FieldValueInvalid', field, message }] }));

const badRequest = (field: string, message: string): BadRequestException =>
  new BadRequestException(kubeStatus(400, `${field}: ${message}`, { causes: [{ reason: 'FieldValueInvalid', field, message }] }));

/** The body's apiVersion, or the object's; the two must agree when both are given. */
function apiVersionOf(dto: AdmissionBody): string | undefined {
  const fromObject = dto.object?.['apiVersion'];
  if (fromObject !== undefined && typeof fromObject !== 'string')
    throw badRequest('object.apiVersion', 'must be a string such as "v1" or "apps/v1"');
  if (dto.apiVersion !== undefined && fromObject !== undefined && fromObject !== dto.apiVersion) {
    throw badRequest('object.apiVersion', `must equal apiVersion (${dto.apiVersion})`);
  }
  return dto.apiVersion ?? fromObject;
}

function groupResourceOf(dto: AdmissionBody, apiVersion: string | undefined): GroupResource {
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
  if (entries.length > RESOURCE_LIST_MAX)
    throw invalid('resources', `at most ${RESOURCE_LIST_MAX} resources per reservation, got ${entries.length}`);
  for (const [name, value] of entries) {
    const problems = isQualifiedName(name);
    if (problems.length > 0) throw invalid(`resources[${cutText(name)}]`, `invalid resource name: ${problems.join('; ')}`);
    if (typeof value !== 'string') throw badRequest(`resources[${name}]`, 'must be a quantity string such as "500m" or "1Gi"');
  }
  return Resources.canonicalResourceList(Resources.parseResourceList(raw, 'resources'));
}

function objectOf(
  dto: AdmissionBody,
  groupResource: GroupResource,
  raw: Record<string, unknown>,
  field: 'object' | 'oldObject',
  namespace: string,
): KubeObject {
  const metadata = raw['metadata'];
  if (metadata !== undefined && (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)))
    throw badRequest(`${field}.metadata`, 'must be an object');
  const objectNamespace = (metadata as { namespace?: unknown } | undefined)?.namespace;
  if (objectNamespace !== undefined && objectNamespace !== namespace) {
    throw badRequest(
      `${field}.metadata.namespace`,
      'the namespace of the provided object does not match the namespace sent on the request',
    );
  }
  if (raw['kind'] !== undefined && raw['kind'] !== dto.kind) throw badRequest(`${field}.kind`, `must equal kind (${dto.kind})`);
  const problem = objectShapeProblem(groupResource, raw, field);
  if (problem) throw badRequest(problem.field, problem.message);
  const object: KubeObject = { ...raw, kind: dto.kind, metadata: { ...(metadata as object | undefined), namespace } };
  // A raw object never went through the API server's defaulting; quota charges defaulted pods.
  return isPods(groupResource) ? defaultPodForAdmission(object as Pod) : object;
}

/**
 * What a REST body asks to admit, checked: an object (defaulted as the API server would) or a
 * plain resource list, never both. The caller adds who asks, the idempotency key and dryRun.
 */
export function admitCommandOf(
  dto: AdmissionBody,
  namespace: string,
  ttlMaxSeconds: number,
): Omit<AdmitCommand, 'dryRun' | 'requester' | 'requestKey'> {
  if ((dto.object === undefined) === (dto.resources === undefined)) {
    throw badRequest('object', 'give exactly one of object (a Kubernetes object) or resources (a resource list)');
  }
  if (dto.ttlSeconds !== undefined && dto.ttlSeconds > ttlMaxSeconds) throw invalid('ttlSeconds', `must be at most ${ttlMaxSeconds}`);
  const operation = dto.operation ?? 'CREATE';
  if (dto.oldObject !== undefined && dto.object === undefined)
    throw badRequest('oldObject', 'only goes with object (the object as it will be stored)');
  const groupResource = groupResourceOf(dto, apiVersionOf(dto));
  const object = dto.object ? objectOf(dto, groupResource, dto.object, 'object', namespace) : undefined;
  const oldObject = dto.oldObject ? objectOf(dto, groupResource, dto.oldObject, 'oldObject', namespace) : undefined;
  if (operation === 'UPDATE' && object && !oldObject)
    throw badRequest('oldObject', 'an UPDATE of an object needs the object as it is now (oldObject)');
  const resources = dto.resources ? resourceListOf(dto.resources) : undefined;
  const name = dto.name ?? object?.metadata?.name;
  // Stored with the decision and the reservation: the kind's name rule, as the object's own name.
  const badName = dto.name === undefined ? undefined : nameProblem(nameRuleFor(groupResource), dto.name, 'name');
  if (badName) throw invalid(badName.field, badName.message);
  return {
    namespace,
    source: 'rest',
    request: {
      operation,
      groupResource,
      namespace,
      ...(name ? { name } : {}),
      ...(object ? { object } : {}),
      ...(oldObject ? { oldObject } : {}),
    },
    ...(resources ? { resources } : {}),
    // The body's kind is required and recorded even when no object carries it (a resource list),
    // so decisions and reservations always say what was admitted ("Pod web-2", never "pods web-2").
    kind: dto.kind,
    ...(dto.ttlSeconds === undefined ? {} : { ttlMs: dto.ttlSeconds * 1000 }),
    requireKnownNamespace: true,
  };
}
