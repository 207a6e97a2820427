import type { ReferenceObject, SchemaObject } from '@nestjs/swagger';
import { ADMISSION_PLUGINS, RELEASE_REASONS } from '@quota/domain';
import { RESERVATION_STATES } from '../audit/history.dto.js';
import { ROLES } from '../auth/tokens.js';

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

type Schema = SchemaObject | ReferenceObject;

/** A reference to a component (checked where SCHEMAS is used: the e2e test resolves every $ref). */
const ref = (name: string): ReferenceObject => ({ $ref: `#/components/schemas/${name}` });

const string = (description?: string, extra: SchemaObject = {}): SchemaObject => ({ type: 'string', ...(description ? { description } : {}), ...extra });
const integer = (description?: string, extra: SchemaObject = {}): SchemaObject => ({ type: 'integer', ...(description ? { description } : {}), ...extra });
const boolean = (description?: string): SchemaObject => ({ type: 'boolean', ...(description ? { description } : {}) });
const time = (description?: string): SchemaObject => string(description, { format: 'date-time' });
const constant = (value: string | number): SchemaObject => ({ type: typeof value === 'number' ? 'integer' : 'string', enum: [value] });
const array = (items: Schema, description?: string): SchemaObject => ({ type: 'array', items, ...(description ? { description } : {}) });
const stringMap = (description?: string): SchemaObject => ({ type: 'object', additionalProperties: { type: 'string' }, ...(description ? { description } : {}) });

/** An object with exactly these properties, the listed ones always present. */
function closed(properties: Record<string, Schema>, required: readonly string[] = [], description?: string): SchemaObject {
  return { type: 'object', properties, ...(required.length > 0 ? { required: [...required] } : {}), additionalProperties: false, ...(description ? { description } : {}) };
}

/** A Kubernetes list: `{apiVersion, kind: <Kind>List, metadata: {}, items}`. */
function kubeList(apiVersion: string, kind: string, item: string): SchemaObject {
  return closed({ apiVersion: constant(apiVersion), kind: constant(`${kind}List`), metadata: closed({}), items: array(ref(item)) }, ['apiVersion', 'kind', 'metadata', 'items']);
}

/** A page of a paged read: pass `next` as `after` for the following page; absent on the last. */
function page(item: string): SchemaObject {
  return closed({ items: array(ref(item)), next: string('Pass as `after` for the next page; absent on the last page.') }, ['items']);
}

/** A ledger position (`ledger_events.position`): a decimal bigint of at most 18 digits. */
export const POSITION_SCHEMA: SchemaObject = string('A ledger position (ledger_events.position), decimal.', { pattern: '^[0-9]{1,18}$' });
export const NAMESPACE_NAME_SCHEMA: SchemaObject = string('A namespace name: a DNS-1123 label.', { pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', maxLength: 63 });
export const OBJECT_NAME_SCHEMA: SchemaObject = string('An object name: a DNS-1123 subdomain.', {
  pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
  maxLength: 253,
});
export const RESERVATION_ID_SCHEMA: SchemaObject = string('A reservation id.', { pattern: '^[A-Za-z0-9._-]{1,128}$' });

const QUOTA_USAGE = closed({ name: string('The ResourceQuota.'), hard: ref('ResourceList'), used: ref('ResourceList') }, ['name', 'hard', 'used']);

/** What an event shows; a definition change adds its before/after. */
const EVENT_PROPERTIES: Record<string, Schema> = {
  position: POSITION_SCHEMA,
  version: integer('The version of the event in its stream.', { minimum: 1 }),
  type: string('The event type, e.g. `Reserved`, `QuotaDefined`.'),
  time: time('When it was recorded.'),
  actor: string('The authenticated principal that wrote it.'),
  onBehalfOf: string('The Kubernetes user it relayed, when the principal is trusted to speak for users.'),
  requestId: string(),
  data: { description: 'The event data, as stored (its shape depends on `type`).' },
};
const EVENT_REQUIRED = ['position', 'version', 'type', 'time', 'actor', 'data'];

const CLUSTER_RESOURCE_QUOTA: SchemaObject = closed(
  {
    apiVersion: constant('quota.openshift.io/v1'),
    kind: constant('ClusterResourceQuota'),
    metadata: ref('ObjectMeta'),
    spec: closed(
      {
        selector: closed(
          { labels: ref('LabelSelector'), annotations: { ...stringMap('Exact annotations a namespace must carry.'), nullable: true } },
          [],
          'Which namespaces it covers: a label selector and/or exact annotations; at least one must restrict.',
        ),
        quota: ref('ResourceQuotaSpec'),
      },
      ['selector', 'quota'],
    ),
    status: closed(
      {
        total: closed({ hard: ref('ResourceList'), used: ref('ResourceList') }, ['hard', 'used']),
        namespaces: array(closed({ namespace: string(), status: closed({ hard: ref('ResourceList'), used: ref('ResourceList') }, ['hard', 'used']) }, ['namespace', 'status'])),
      },
      ['total', 'namespaces'],
      'Computed by the ledger; ignored on a write.',
    ),
  },
  [],
  'quota.openshift.io/v1 ClusterResourceQuota: a ResourceQuotaSpec over every namespace its selector picks.',
);

const USAGE_MARKER_LIMIT = closed(
  {
    kind: constant('limit'),
    at: time(),
    version: integer(),
    quota: string(),
    change: { type: 'string', enum: ['defined', 'changed', 'removed'] },
    actor: string(),
  },
  ['kind', 'at', 'version', 'quota', 'change', 'actor'],
);
const USAGE_MARKER_DENIAL = closed(
  {
    kind: constant('denial'),
    at: time(),
    decisionId: POSITION_SCHEMA,
    reason: { ...string(), nullable: true },
    requester: string(),
    name: { ...string(), nullable: true },
    message: { ...string(), nullable: true },
  },
  ['kind', 'at', 'decisionId', 'reason', 'requester', 'name', 'message'],
);

export const SCHEMAS = {
  Quantity: string('A Kubernetes quantity (`500m`, `1Gi`, `2`); answers carry the canonical form.', {
    pattern: '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$',
    example: '500m',
  }),
  ResourceList: { type: 'object', additionalProperties: ref('Quantity'), description: 'Resource name → quantity (`requests.cpu`, `count/pods`, ...).' },
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
  StatusCause: closed({ reason: string('e.g. FieldValueInvalid, FieldValueRequired.'), field: string('The field path, e.g. `spec.hard[requests.cpu]`.'), message: string() }, ['reason', 'message']),
  ObjectMeta: closed(
    {
      name: string(),
      generateName: string(),
      namespace: string(),
      selfLink: string(),
      uid: string(),
      resourceVersion: string('The version of the object in its stream; send it back on a PUT for optimistic concurrency (409 when stale).'),
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
    'Kubernetes meta/v1 ObjectMeta. On a write, name and namespace default to the URL\'s; server-set fields are ignored.',
  ),
  LabelSelector: {
    ...closed({
      matchLabels: stringMap(),
      matchExpressions: array(
        closed({ key: string(), operator: { type: 'string', enum: ['In', 'NotIn', 'Exists', 'DoesNotExist'] }, values: array(string()) }, ['key', 'operator']),
      ),
    }),
    nullable: true,
  },
  ResourceQuotaSpec: closed({
    hard: ref('ResourceList'),
    scopes: array(string(), 'Terminating, NotTerminating, BestEffort, NotBestEffort, PriorityClass, CrossNamespacePodAffinity, VolumeAttributesClass'),
    scopeSelector: closed({
      matchExpressions: array(closed({ scopeName: string(), operator: { type: 'string', enum: ['In', 'NotIn', 'Exists', 'DoesNotExist'] }, values: array(string()) }, ['scopeName', 'operator'])),
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
    'core/v1 ResourceQuota. A read shows the projection\'s usage, annotated with quota-ledger.io/used-version and quota-ledger.io/ledger-version.',
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
    { apiVersion: constant('v1'), kind: constant('LimitRange'), metadata: ref('ObjectMeta'), spec: closed({ limits: array(ref('LimitRangeItem')) }) },
    [],
    'core/v1 LimitRange, stored with the API server\'s defaulting applied.',
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
      status: closed({ hard: ref('ResourceList'), used: ref('ResourceList') }, [], 'Over the namespace and its descendants; computed by the ledger, ignored on a write.'),
    },
    [],
    'hnc.x-k8s.io/v1alpha2 HierarchicalResourceQuota: limits over its namespace and every namespace below it.',
  ),
  HierarchicalResourceQuotaList: kubeList('hnc.x-k8s.io/v1alpha2', 'HierarchicalResourceQuota', 'HierarchicalResourceQuota'),
  KubeObject: {
    type: 'object',
    properties: { apiVersion: string(), kind: string(), metadata: ref('ObjectMeta') },
    // Nullable here, not where it is used: OpenAPI 3.0 ignores a $ref's siblings. It is used
    // only for an AdmissionReview's object and oldObject, which are null when absent.
    nullable: true,
    description: 'Any Kubernetes object, as kube-apiserver sends it (fields this service does not read pass through); null when absent.',
  },
  AdmissionReviewRequest: {
    type: 'object',
    required: ['apiVersion', 'kind', 'request'],
    properties: {
      apiVersion: constant('admission.k8s.io/v1'),
      kind: constant('AdmissionReview'),
      request: {
        type: 'object',
        required: ['uid', 'resource', 'operation'],
        properties: {
          uid: string(undefined, { minLength: 1, maxLength: 128 }),
          kind: { type: 'object', properties: { group: string(), version: string(), kind: string() } },
          resource: { type: 'object', required: ['resource'], properties: { group: string(), version: string(), resource: string(undefined, { minLength: 1 }) } },
          subResource: string(),
          name: string(),
          namespace: string(),
          operation: { type: 'string', enum: ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'] },
          userInfo: { type: 'object', properties: { username: string(), uid: string(), groups: array(string()) } },
          object: ref('KubeObject'),
          oldObject: ref('KubeObject'),
          dryRun: { type: 'boolean', nullable: true },
        },
      },
    },
    description: 'admission.k8s.io/v1 AdmissionReview as kube-apiserver sends it (fields not read here are accepted and ignored).',
  },
  AdmissionReviewResponse: closed(
    {
      apiVersion: constant('admission.k8s.io/v1'),
      kind: constant('AdmissionReview'),
      response: closed(
        {
          uid: string('The request\'s uid.'),
          allowed: boolean(),
          status: closed(
            {
              metadata: closed({}),
              status: constant('Failure'),
              code: { type: 'integer', enum: [403, 409, 500] },
              reason: string(),
              message: string(),
              details: ref('StatusDetails'),
            },
            ['metadata', 'status', 'code', 'reason', 'message'],
            'A denial, as the API server words it.',
          ),
          patchType: constant('JSONPatch'),
          patch: string('Base64 of the JSON Patch (LimitRange defaults).', { format: 'byte' }),
          auditAnnotations: stringMap('`decision` (its id in the decisions log) and `reservation`; kube-apiserver prefixes each key with the webhook\'s name.'),
          warnings: array(string(), 'Quotas the request leaves near their limits; kubectl prints them.'),
        },
        ['uid', 'allowed'],
      ),
    },
    ['apiVersion', 'kind', 'response'],
    'A decision, allowed or denied, always with HTTP 200.',
  ),
  JsonPatchOperation: closed({ op: { type: 'string', enum: ['add', 'replace', 'test', 'remove'] }, path: string('A JSON pointer.'), value: {} }, ['op', 'path']),
  Denial: closed(
    {
      kind: string('Which rule refused: Exceeded, MustSpecify, StatusUnknown, NegativeUsage, InsufficientQuotaToConsume, ...'),
      quota: string(),
      quotaKind: { type: 'string', enum: ['ClusterResourceQuota', 'HierarchicalResourceQuota'], description: 'Absent for a ResourceQuota.' },
      quotaNamespace: string('A HierarchicalResourceQuota\'s namespace.'),
      resource: string('Exceeded: the first resource over its limit.'),
      requested: ref('Quantity'),
      used: ref('Quantity'),
      hard: ref('Quantity'),
      exceeded: array(closed({ resource: string(), requested: ref('Quantity'), used: ref('Quantity'), hard: ref('Quantity') }, ['resource', 'requested', 'hard'])),
      resources: array(string()),
    },
    ['kind'],
    'Why a quota refused, as data.',
  ),
  AdmissionResult: closed(
    {
      allowed: boolean(),
      code: { type: 'integer', enum: [200, 403, 409, 500] },
      dryRun: boolean(),
      message: string(),
      stage: { type: 'string', enum: [...ADMISSION_PLUGINS] },
      denial: ref('Denial'),
      reservationId: string(),
      charged: ref('ResourceList'),
      expiresAt: time(),
      patch: array(ref('JsonPatchOperation')),
      warnings: array(string()),
    },
    ['allowed', 'code', 'dryRun'],
  ),
  ReservationGranted: closed(
    {
      id: string(),
      namespace: string(),
      state: constant('reserved'),
      charged: ref('ResourceList'),
      expiresAt: time('Released as `expired` unless committed by then.'),
      position: POSITION_SCHEMA,
    },
    ['id', 'namespace', 'state', 'charged'],
    'A new (or repeated) reservation; it counts toward usage from now.',
  ),
  ReservationNotRecorded: closed(
    {
      namespace: string(),
      state: { type: 'string', enum: ['reserved', 'none'], description: '`reserved`: a dry run that would reserve; `none`: allowed, nothing charged.' },
      dryRun: { type: 'boolean', enum: [true] },
      charged: ref('ResourceList'),
      expiresAt: time(),
    },
    ['namespace', 'state', 'charged'],
    'Allowed without a reservation: a dry run, or a request that charges nothing.',
  ),
  Reservation: closed(
    {
      id: string(),
      namespace: string(),
      state: { type: 'string', enum: [...RESERVATION_STATES] },
      operation: { type: 'string', enum: ['CREATE', 'UPDATE', 'ADOPT'] },
      origin: { type: 'string', enum: ['webhook', 'rest', 'adopted'], description: "Who made it: the kube-apiserver's review (webhook) and the reconciler (adopted) are settled from what the cluster holds; rest by REST calls." },
      object: closed({ group: string('\'\' for the core group.'), resource: string(), kind: string(), name: string(), uid: string() }, ['group', 'resource']),
      charged: ref('ResourceList'),
      reservedAt: time(),
      committedAt: time(),
      terminatedAt: time(),
      releasedAt: time(),
      releaseReason: { type: 'string', enum: [...RELEASE_REASONS] },
      expiresAt: time(),
      requestId: string(),
      requester: string(),
      onBehalfOf: string(),
      history: array(ref('Event'), 'Oldest first: Reserved/Adopted, Committed, Released.'),
      position: { ...POSITION_SCHEMA, description: 'A commit or release: the position of its event (X-Ledger-Position).' },
    },
    ['id', 'namespace', 'state', 'operation', 'origin', 'object', 'charged', 'reservedAt'],
  ),
  ReservationPage: page('Reservation'),
  WhatIf: closed(
    {
      apiVersion: constant('quota-ledger.io/v1'),
      kind: constant('WhatIf'),
      namespace: string(),
      allowed: boolean(),
      code: { type: 'integer', enum: [200, 403, 409, 500] },
      message: string(),
      stage: { type: 'string', enum: [...ADMISSION_PLUGINS] },
      denial: ref('Denial'),
      charged: ref('ResourceList'),
      patch: array(ref('JsonPatchOperation')),
    },
    ['apiVersion', 'kind', 'namespace', 'allowed', 'code', 'charged'],
    'The decision a reserve would get now; a denial is a finding, answered with 200.',
  ),
  Event: closed(EVENT_PROPERTIES, EVENT_REQUIRED),
  EventPage: page('Event'),
  DefinitionChange: closed(
    {
      ...EVENT_PROPERTIES,
      before: { type: 'object', nullable: true, description: 'The definition before (null when it was created).' },
      after: { type: 'object', nullable: true, description: 'The definition after (null when it was removed).' },
      changed: array(string(), 'What differs: hard resources, scopes, limit types, labels, ...'),
    },
    [...EVENT_REQUIRED, 'before', 'after', 'changed'],
  ),
  DefinitionChangePage: page('DefinitionChange'),
  Decision: closed(
    {
      id: POSITION_SCHEMA,
      namespace: string(),
      time: time(),
      source: { type: 'string', enum: ['webhook', 'rest'] },
      requestKey: string(),
      operation: string(),
      resource: string('`pods`, `deployments.apps`, ...'),
      kind: string(),
      name: string(),
      objectUid: string(),
      requester: string('The authenticated principal that asked.'),
      onBehalfOf: string(),
      dryRun: boolean(),
      allowed: boolean(),
      result: ref('AdmissionResult'),
    },
    ['id', 'namespace', 'time', 'source', 'operation', 'resource', 'requester', 'dryRun', 'allowed', 'result'],
  ),
  DecisionPage: page('Decision'),
  NamespaceUsage: closed(
    {
      namespace: string(),
      version: integer('The namespace stream\'s version the usage is as of.', { minimum: 0 }),
      position: POSITION_SCHEMA,
      at: time('With `?at=`: the instant asked for.'),
      quotas: array(QUOTA_USAGE),
      awaitingFirstCountSince: time('The namespace awaits its first count since then: objects admitted before it was managed are not in `used` yet, and what its quotas would charge is refused (`status unknown for quota`) until the reconciler has listed them.'),
    },
    ['namespace', 'version', 'position', 'quotas'],
  ),
  UsageMarker: { oneOf: [USAGE_MARKER_LIMIT, USAGE_MARKER_DENIAL], description: 'A quota limit change or a denial, to mark on a usage chart.' },
  UsageSeries: closed(
    {
      namespace: string(),
      since: time(),
      until: time(),
      points: array(closed({ at: time(), version: integer(undefined, { minimum: 0 }), quotas: array(QUOTA_USAGE) }, ['at', 'version', 'quotas'])),
      markers: array(ref('UsageMarker')),
      truncated: boolean('More markers than the answer holds.'),
    },
    ['namespace', 'since', 'until', 'points', 'markers', 'truncated'],
  ),
  UnsettledReservations: closed(
    {
      reservedBefore: time(),
      items: array(closed({ resource: string('`widgets.example.com`'), count: integer(undefined, { minimum: 1 }), namespaces: integer(undefined, { minimum: 1 }) }, ['resource', 'count', 'namespaces'])),
    },
    ['reservedBefore', 'items'],
    'Webhook reservations reserved before `reservedBefore` that no reconcile has settled, by resource.',
  ),
  SharedQuotaUsage: closed(
    {
      key: string('Its stream: `clusterresourcequotas/NAME` or `hierarchicalresourcequotas/NAMESPACE/NAME`.'),
      at: time('With `?at=`: the instant asked for.'),
      version: integer(undefined, { minimum: 0 }),
      defined: boolean('Whether it existed at that instant.'),
      hard: ref('ResourceList'),
      used: ref('ResourceList'),
      namespaces: array(closed({ namespace: string(), version: integer(), used: ref('ResourceList') }, ['namespace', 'used'])),
      overHard: array(closed({ resource: string(), used: string(), hard: string() }, ['resource', 'used', 'hard']), 'Resources used beyond hard (a namespace relabelled in, a lowered limit): nothing more is admitted until usage drops.'),
      namespacesWithheld: integer('Covered namespaces outside the caller\'s scope, left out of `namespaces` (their usage is in `used`).', { minimum: 1 }),
    },
    ['key', 'version', 'defined', 'hard', 'used', 'namespaces', 'overHard'],
  ),
  SharedQuotaUsageSeries: closed(
    {
      key: string(),
      since: time(),
      until: time(),
      points: array(
        closed({ at: time(), version: integer(undefined, { minimum: 0 }), defined: boolean(), hard: ref('ResourceList'), used: ref('ResourceList') }, ['at', 'version', 'defined', 'hard', 'used']),
      ),
      markers: array(ref('UsageMarker')),
      truncated: boolean(),
    },
    ['key', 'since', 'until', 'points', 'markers', 'truncated'],
  ),
  NamespaceSummary: closed(
    {
      namespace: string(),
      version: integer(undefined, { minimum: 0 }),
      quotas: array(
        closed(
          {
            name: string(),
            hard: ref('ResourceList'),
            used: ref('ResourceList'),
            tightest: closed({ resource: string(), ratio: { type: 'number', minimum: 0, description: 'used / hard (1: at the limit).' } }, ['resource', 'ratio']),
          },
          ['name', 'hard', 'used'],
        ),
      ),
      tightest: closed({ quota: string(), resource: string(), ratio: { type: 'number', minimum: 0 } }, ['quota', 'resource', 'ratio']),
    },
    ['namespace', 'version', 'quotas'],
  ),
  NamespaceSummaryPage: page('NamespaceSummary'),
  ProjectionLag: closed(
    {
      name: string(),
      position: POSITION_SCHEMA,
      headPosition: POSITION_SCHEMA,
      eventsBehind: integer(undefined, { minimum: 0 }),
      lagMs: integer('Age of the oldest event not yet applied (0 when caught up).', { minimum: 0 }),
      eventsApplied: integer(undefined, { minimum: 0 }),
      updatedAt: time(),
    },
    ['name', 'position', 'headPosition', 'eventsBehind', 'lagMs', 'eventsApplied', 'updatedAt'],
  ),
  WhoAmI: closed(
    {
      apiVersion: constant('quota-ledger.io/v1'),
      kind: constant('WhoAmI'),
      name: string(),
      roles: array({ type: 'string', enum: [...ROLES] }),
      namespaces: { oneOf: [{ type: 'string', enum: ['*'] }, array(string())], description: '`"*"` for every namespace, else those the caller may act in.' },
    },
    ['apiVersion', 'kind', 'name', 'roles', 'namespaces'],
  ),
} satisfies Record<string, Schema>;

export type SchemaName = keyof typeof SCHEMAS;

/** A reference to a component, for the route table; a misspelt name does not compile. */
export const schemaRef = (name: SchemaName): ReferenceObject => ref(name);
