import type { ReferenceObject } from '@nestjs/swagger';
import { ADMISSION_PLUGINS } from '@quota/domain';
import { ANSWER_SCHEMAS } from './answer-schemas.js';
import { READ_SCHEMAS } from './read-schemas.js';
import {
  CLUSTER_RESOURCE_QUOTA,
  array,
  closed,
  constant,
  integer,
  kubeList,
  ref,
  string,
  stringMap,
  time,
  type Schema,
} from './schema-parts.js';

/**
 * The bodies the API answers (and the Kubernetes objects it takes), as OpenAPI 3.0 schema
 * components: the one place they are written by hand. Request bodies that are DTO classes are
 * not here: their schemas come from their class-validator decorators (validation-schema.ts).
 *
 * Shapes the service builds itself are closed (`additionalProperties: false`), so the e2e test
 * that validates real answers against them (test/e2e/openapi.test.ts) notices a field added or
 * renamed on either side. Kubernetes objects a client sends are closed where the service's
 * strict decoder refuses unknown fields, open where it passes them through (admitted objects).
 */

export { NAMESPACE_NAME_SCHEMA, OBJECT_NAME_SCHEMA, POSITION_SCHEMA, RESERVATION_ID_SCHEMA } from './schema-parts.js';

export const SCHEMAS = {
  Quantity: string('A Kubernetes quantity (`500m`, `1Gi`, `2`); answers carry the canonical form.', {
    pattern: '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$',
    example: '500m',
  }),
  ResourceList: {
    type: 'object',
    additionalProperties: ref('Quantity'),
    description: 'Resource name → quantity (`requests.cpu`, `count/pods`, ...).',
  },
  Status: closed(
    {
      kind: constant('Status'),
      apiVersion: constant('v1'),
      metadata: closed({}),
      status: constant('Failure'),
      message: string('What went wrong, and what to do about it.'),
      reason: string('The Kubernetes StatusReason: BadRequest, Unauthorized, Forbidden, NotFound, Conflict, Invalid, ...'),
      code: integer('The HTTP status code.', { minimum: 400, maximum: 599 }),
      details: ref('StatusDetails'),
    },
    ['kind', 'apiVersion', 'metadata', 'status', 'message', 'reason', 'code'],
    'Kubernetes meta/v1 Status: every answer outside 2xx (the webhook answers denials with 200 and an AdmissionReview).',
  ),
  StatusDetails: closed({
    name: string('The object concerned.'),
    kind: string('Its resource (plural) or kind.'),
    causes: array(ref('StatusCause')),
    retryAfterSeconds: integer('Retry after this many seconds (429, 503).', { minimum: 0 }),
    requestId: string('The request id (also the X-Request-Id header): names the log lines of this request.'),
    stage: { type: 'string', enum: [...ADMISSION_PLUGINS], description: 'A denied reservation: the admission plugin that refused.' },
    denial: ref('Denial'),
  }),
  StatusCause: closed(
    {
      reason: string('e.g. FieldValueInvalid, FieldValueRequired.'),
      field: string('The field path, e.g. `spec.hard[requests.cpu]`.'),
      message: string(),
    },
    ['reason', 'message'],
  ),
  ObjectMeta: closed(
    {
      name: string(),
      generateName: string(),
      namespace: string(),
      selfLink: string(),
      uid: string(),
      resourceVersion: string(
        'The version of the object in its stream; send it back on a PUT for optimistic concurrency (409 when stale).',
      ),
      generation: integer(),
      creationTimestamp: time(),
      deletionTimestamp: time(),
      deletionGracePeriodSeconds: integer(),
      labels: stringMap(),
      annotations: stringMap(),
      ownerReferences: array({ type: 'object' }),
      finalizers: array(string()),
      managedFields: array({ type: 'object' }),
    },
    [],
    "Kubernetes meta/v1 ObjectMeta. On a write, name and namespace default to the URL's; server-set fields are ignored.",
  ),
  LabelSelector: {
    ...closed({
      matchLabels: stringMap(),
      matchExpressions: array(
        closed({ key: string(), operator: { type: 'string', enum: ['In', 'NotIn', 'Exists', 'DoesNotExist'] }, values: array(string()) }, [
          'key',
          'operator',
        ]),
      ),
    }),
    nullable: true,
  },
  ResourceQuotaSpec: closed({
    hard: ref('ResourceList'),
    scopes: array(
      string(),
      'Terminating, NotTerminating, BestEffort, NotBestEffort, PriorityClass, CrossNamespacePodAffinity, VolumeAttributesClass',
    ),
    scopeSelector: closed({
      matchExpressions: array(
        closed(
          { scopeName: string(), operator: { type: 'string', enum: ['In', 'NotIn', 'Exists', 'DoesNotExist'] }, values: array(string()) },
          ['scopeName', 'operator'],
        ),
      ),
    }),
  }),
  ResourceQuota: closed(
    {
      apiVersion: constant('v1'),
      kind: constant('ResourceQuota'),
      metadata: ref('ObjectMeta'),
      spec: ref('ResourceQuotaSpec'),
      status: closed({ hard: ref('ResourceList'), used: ref('ResourceList') }, [], 'Computed by the ledger; ignored on a write.'),
    },
    [],
    "core/v1 ResourceQuota. A read shows the projection's usage, annotated with quota-ledger.io/used-version and quota-ledger.io/ledger-version.",
  ),
  ResourceQuotaList: kubeList('v1', 'ResourceQuota', 'ResourceQuota'),
  LimitRangeItem: closed(
    {
      type: string('Container, Pod or PersistentVolumeClaim.'),
      max: ref('ResourceList'),
      min: ref('ResourceList'),
      default: ref('ResourceList'),
      defaultRequest: ref('ResourceList'),
      maxLimitRequestRatio: ref('ResourceList'),
    },
    ['type'],
  ),
  LimitRange: closed(
    {
      apiVersion: constant('v1'),
      kind: constant('LimitRange'),
      metadata: ref('ObjectMeta'),
      spec: closed({ limits: array(ref('LimitRangeItem')) }),
    },
    [],
    "core/v1 LimitRange, stored with the API server's defaulting applied.",
  ),
  LimitRangeList: kubeList('v1', 'LimitRange', 'LimitRange'),
  Namespace: closed(
    {
      apiVersion: constant('v1'),
      kind: constant('Namespace'),
      metadata: ref('ObjectMeta'),
      spec: closed({ finalizers: array(string()) }),
      status: closed({ phase: string(), conditions: array({ type: 'object' }) }, [], 'Always `Active` in answers; ignored on a write.'),
    },
    [],
    'core/v1 Namespace: its labels choose the ClusterResourceQuotas and HierarchicalResourceQuotas covering it.',
  ),
  ClusterResourceQuota: CLUSTER_RESOURCE_QUOTA,
  ClusterResourceQuotaList: kubeList('quota.openshift.io/v1', 'ClusterResourceQuota', 'ClusterResourceQuota'),
  AppliedClusterResourceQuota: {
    ...CLUSTER_RESOURCE_QUOTA,
    properties: { ...CLUSTER_RESOURCE_QUOTA.properties, kind: constant('AppliedClusterResourceQuota') },
    description: 'A ClusterResourceQuota as it applies to one namespace (metadata.namespace names it).',
  },
  AppliedClusterResourceQuotaList: kubeList('quota.openshift.io/v1', 'AppliedClusterResourceQuota', 'AppliedClusterResourceQuota'),
  HierarchicalResourceQuota: closed(
    {
      apiVersion: constant('hnc.x-k8s.io/v1alpha2'),
      kind: constant('HierarchicalResourceQuota'),
      metadata: ref('ObjectMeta'),
      spec: closed({ hard: ref('ResourceList') }),
      status: closed(
        { hard: ref('ResourceList'), used: ref('ResourceList') },
        [],
        'Over the namespace and its descendants; computed by the ledger, ignored on a write.',
      ),
    },
    [],
    'hnc.x-k8s.io/v1alpha2 HierarchicalResourceQuota: limits over its namespace and every namespace below it.',
  ),
  HierarchicalResourceQuotaList: kubeList('hnc.x-k8s.io/v1alpha2', 'HierarchicalResourceQuota', 'HierarchicalResourceQuota'),
  ...ANSWER_SCHEMAS,
  ...READ_SCHEMAS,
} satisfies Record<string, Schema>;

export type SchemaName = keyof typeof SCHEMAS;

/** A reference to a component, for the route table; a misspelt name does not compile. */
export const schemaRef = (name: SchemaName): ReferenceObject => ref(name);
