import {
  groupProblem,
  kindProblem,
  labelProblem,
  nameProblem,
  nameRuleFor,
  namespaceProblem,
  objectShapeProblem,
  tooLongProblem,
  type GroupResource,
  type KubeObject,
  type NameProblem,
  type Operation,
} from '@quota/domain';
import { reasonFor, withRequestId, type KubeStatus } from '../errors/kube-status.js';

/**
 * admission.k8s.io/v1 AdmissionReview: the request kube-apiserver sends a webhook and the
 * response it expects. Parsing is strict on what we read (a malformed review is a 400: the
 * API server then applies the webhook's failurePolicy) and tolerant of fields we do not read.
 */
export interface AdmissionReviewRequest {
  readonly uid: string;
  readonly kind?: { readonly group: string; readonly version: string; readonly kind: string };
  readonly resource: GroupResource & { readonly version: string };
  readonly subResource?: string;
  readonly name?: string;
  readonly namespace?: string;
  readonly operation: Operation;
  readonly username?: string;
  readonly object?: KubeObject;
  readonly oldObject?: KubeObject;
  readonly dryRun: boolean;
}

/** A review's refusal: a Status without its kind, whose details name the request answered (its X-Request-Id). */
export type ReviewStatus = Omit<KubeStatus, 'kind' | 'apiVersion'>;

export interface AdmissionReviewResponse {
  readonly apiVersion: 'admission.k8s.io/v1';
  readonly kind: 'AdmissionReview';
  readonly response: {
    readonly uid: string;
    readonly allowed: boolean;
    readonly status?: ReviewStatus;
    readonly patchType?: 'JSONPatch';
    readonly patch?: string;
    /** Kept in kube-apiserver's audit log, each key prefixed with the webhook's name (`validate.quota-ledger.io/decision`). */
    readonly auditAnnotations?: Readonly<Record<string, string>>;
    /** Passed on to the client (kubectl prints them), as kube-apiserver's own warnings. */
    readonly warnings?: readonly string[];
  };
}

/** What a validate answer adds beyond allowed/denied: audit annotations tying the request to the ledger, and warnings. */
export interface ReviewExtras {
  readonly auditAnnotations?: Readonly<Record<string, string>>;
  readonly warnings?: readonly string[];
}

/**
 * The audit annotations of a decision: its id in the decisions log and the reservation it made.
 * Keys without a prefix: kube-apiserver prefixes them with the webhook's name, and a key with a
 * '/' of its own would not be a valid annotation key after that (it is dropped with a warning).
 */
export function decisionAnnotations(decisionId: string, reservationId: string | undefined): Record<string, string> {
  return { ...(decisionId ? { decision: decisionId } : {}), ...(reservationId ? { reservation: reservationId } : {}) };
}

function extrasOf(extras: ReviewExtras): ReviewExtras {
  return {
    ...(extras.auditAnnotations && Object.keys(extras.auditAnnotations).length > 0 ? { auditAnnotations: extras.auditAnnotations } : {}),
    ...(extras.warnings && extras.warnings.length > 0 ? { warnings: extras.warnings } : {}),
  };
}

/** A review we cannot read: the field and what is wrong with it. */
export class ReviewMalformed extends Error {
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(`${field}: ${problem}`);
    this.name = 'ReviewMalformed';
  }
}

const OPERATIONS: readonly Operation[] = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'];
const UID_MAX = 128;
/** The longest `userInfo.username` recorded as "on behalf of" (Kubernetes sets none; a service account's is at most 339). */
export const USERNAME_MAX_BYTES = 1024;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function str(parent: Json, key: string, path: string, required: boolean): string | undefined {
  const value = parent[key];
  if (value === undefined || value === null) {
    if (required) throw new ReviewMalformed(`${path}.${key}`, 'Required value');
    return undefined;
  }
  if (typeof value !== 'string') throw new ReviewMalformed(`${path}.${key}`, `must be a string, got ${typeof value}`);
  return value;
}

function obj(parent: Json, key: string, path: string): KubeObject | undefined {
  const value = parent[key];
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) throw new ReviewMalformed(`${path}.${key}`, 'must be an object or null');
  if (value['metadata'] !== undefined && !isObject(value['metadata']))
    throw new ReviewMalformed(`${path}.${key}.metadata`, 'must be an object');
  return value as KubeObject;
}

/** The AdmissionReview v1 envelope's `request`, or why the body is not one. */
function reviewRequestOf(body: unknown): Record<string, unknown> {
  if (!isObject(body)) throw new ReviewMalformed('body', 'must be an AdmissionReview object');
  if (body['apiVersion'] !== 'admission.k8s.io/v1') {
    throw new ReviewMalformed(
      'apiVersion',
      `Unsupported value: ${JSON.stringify(body['apiVersion'])}: supported values: "admission.k8s.io/v1"`,
    );
  }
  if (body['kind'] !== 'AdmissionReview')
    throw new ReviewMalformed('kind', `Unsupported value: ${JSON.stringify(body['kind'])}: supported values: "AdmissionReview"`);
  const request = body['request'];
  if (!isObject(request)) throw new ReviewMalformed('request', 'Required value');
  return request;
}

/** `request.kind`, when the review names one. */
function reviewKindOf(request: Record<string, unknown>): AdmissionReviewRequest['kind'] {
  const rawKind = request['kind'];
  if (rawKind === undefined || rawKind === null) return undefined;
  if (!isObject(rawKind)) throw new ReviewMalformed('request.kind', 'must be an object');
  return {
    group: str(rawKind, 'group', 'request.kind', false) ?? '',
    version: str(rawKind, 'version', 'request.kind', false) ?? '',
    kind: str(rawKind, 'kind', 'request.kind', false) ?? '',
  };
}

/** The object and old object: within their kind's bounds, and in the namespace the request names (as the REST path and the API server itself). */
function checkObjects(
  groupResource: { group: string; resource: string },
  namespace: string | undefined,
  objects: readonly (readonly [string, KubeObject | undefined])[],
): void {
  for (const [field, value] of objects) {
    const problem = value === undefined ? undefined : objectShapeProblem(groupResource, value, field);
    if (problem) throw new ReviewMalformed(problem.field, problem.message);
    const objectNamespace = value?.metadata?.namespace;
    if (namespace && objectNamespace !== undefined && objectNamespace !== '' && objectNamespace !== namespace) {
      throw new ReviewMalformed(
        `${field}.metadata.namespace`,
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
  }
}

export function parseAdmissionReview(body: unknown): AdmissionReviewRequest {
  const request = reviewRequestOf(body);

  const uid = str(request, 'uid', 'request', true) as string;
  if (uid.length === 0 || uid.length > UID_MAX) throw new ReviewMalformed('request.uid', `must be 1 to ${UID_MAX} characters`);
  const operation = str(request, 'operation', 'request', true) as string;
  if (!(OPERATIONS as readonly string[]).includes(operation)) {
    throw new ReviewMalformed(
      'request.operation',
      `Unsupported value: "${operation}": supported values: ${OPERATIONS.map((o) => `"${o}"`).join(', ')}`,
    );
  }
  const resource = request['resource'];
  if (!isObject(resource)) throw new ReviewMalformed('request.resource', 'Required value');
  const group = str(resource, 'group', 'request.resource', false) ?? '';
  const version = str(resource, 'version', 'request.resource', false) ?? '';
  const plural = str(resource, 'resource', 'request.resource', true) as string;
  if (plural === '') throw new ReviewMalformed('request.resource.resource', 'Required value');

  const kind = reviewKindOf(request);
  const userInfo = request['userInfo'];
  if (userInfo !== undefined && userInfo !== null && !isObject(userInfo))
    throw new ReviewMalformed('request.userInfo', 'must be an object');
  const dryRun = request['dryRun'];
  if (dryRun !== undefined && dryRun !== null && typeof dryRun !== 'boolean')
    throw new ReviewMalformed('request.dryRun', 'must be a boolean');

  const subResource = str(request, 'subResource', 'request', false);
  const name = str(request, 'name', 'request', false);
  const namespace = str(request, 'namespace', 'request', false);
  const username = userInfo ? str(userInfo, 'username', 'request.userInfo', false) : undefined;
  const stored = storedStringProblem({ group, version, resource: plural }, kind, subResource, name, namespace, username);
  if (stored) throw new ReviewMalformed(stored.field, stored.message);
  const object = obj(request, 'object', 'request');
  const oldObject = obj(request, 'oldObject', 'request');
  checkObjects({ group, resource: plural }, namespace, [
    ['request.object', object],
    ['request.oldObject', oldObject],
  ]);
  return {
    uid,
    ...(kind ? { kind } : {}),
    resource: { group, version, resource: plural },
    ...(subResource ? { subResource } : {}),
    ...(name ? { name } : {}),
    ...(namespace ? { namespace } : {}),
    operation: operation as Operation,
    ...(username ? { username } : {}),
    ...(object ? { object } : {}),
    ...(oldObject ? { oldObject } : {}),
    dryRun: dryRun === true,
  };
}

/**
 * The review's strings the ledger stores with its decision (the resource, kind, name, namespace
 * and user), held to Kubernetes' formats and lengths before anything reads the objects: they are
 * stored for good, and a multi-MB name made every later read of it run out of memory.
 */
function storedStringProblem(
  resource: GroupResource & { readonly version: string },
  kind: AdmissionReviewRequest['kind'],
  subResource: string | undefined,
  name: string | undefined,
  namespace: string | undefined,
  username: string | undefined,
): NameProblem | undefined {
  const optional = (value: string | undefined, check: (value: string) => NameProblem | undefined): NameProblem | undefined =>
    value ? check(value) : undefined;
  return (
    labelProblem(resource.resource, 'request.resource.resource') ??
    groupProblem(resource.group, 'request.resource.group') ??
    optional(resource.version, (v) => labelProblem(v, 'request.resource.version')) ??
    optional(subResource, (v) => labelProblem(v, 'request.subResource')) ??
    optional(kind?.kind, (v) => kindProblem(v, 'request.kind.kind')) ??
    optional(kind?.group, (v) => groupProblem(v, 'request.kind.group')) ??
    optional(kind?.version, (v) => labelProblem(v, 'request.kind.version')) ??
    optional(name, (v) => nameProblem(nameRuleFor(resource), v, 'request.name')) ??
    optional(namespace, (v) => namespaceProblem(v, 'request.namespace')) ??
    optional(username, (v) => tooLongProblem(v, 'request.userInfo.username', USERNAME_MAX_BYTES))
  );
}

export function allowResponse(uid: string, patch?: readonly unknown[], extras: ReviewExtras = {}): AdmissionReviewResponse {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    response: {
      uid,
      allowed: true,
      ...(patch && patch.length > 0
        ? { patchType: 'JSONPatch' as const, patch: Buffer.from(JSON.stringify(patch)).toString('base64') }
        : {}),
      ...extrasOf(extras),
    },
  };
}

const detailsOf = (details: Record<string, unknown> | undefined): { details?: Record<string, unknown> } => (details ? { details } : {});

/** A denial: HTTP 200 with allowed false and the API server's Status (403 Forbidden, 409 Conflict, or 500). */
export function denyResponse(uid: string, code: number, message: string, extras: ReviewExtras = {}): AdmissionReviewResponse {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    response: {
      uid,
      allowed: false,
      status: { metadata: {}, status: 'Failure', code, reason: reasonFor(code), message, ...detailsOf(withRequestId()) },
      ...extrasOf(extras),
    },
  };
}
