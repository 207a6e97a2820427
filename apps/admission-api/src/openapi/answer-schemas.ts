import { ADMISSION_PLUGINS, RELEASE_REASONS } from '@quota/domain';
import { RESERVATION_STATES } from '../audit/history.dto.js';
import {
  POSITION_SCHEMA,
  array,
  boolean,
  closed,
  constant,
  integer,
  page,
  ref,
  string,
  stringMap,
  time,
  type Schema,
} from './schema-parts.js';

/**
 * The answers the service builds for admission (reviews, results, reservations, the queue, what-if),
 * as schema components: the second part of SCHEMAS (schemas.ts); the read side's answers follow
 * in READ_SCHEMAS (read-schemas.ts).
 */
export const ANSWER_SCHEMAS = {
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
          resource: {
            type: 'object',
            required: ['resource'],
            properties: { group: string(), version: string(), resource: string(undefined, { minLength: 1 }) },
          },
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
          uid: string("The request's uid."),
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
          auditAnnotations: stringMap(
            "`decision` (its id in the decisions log) and `reservation`; kube-apiserver prefixes each key with the webhook's name.",
          ),
          warnings: array(string(), 'Quotas the request leaves near their limits; kubectl prints them.'),
        },
        ['uid', 'allowed'],
      ),
    },
    ['apiVersion', 'kind', 'response'],
    'A decision, allowed or denied, always with HTTP 200.',
  ),
  JsonPatchOperation: closed(
    { op: { type: 'string', enum: ['add', 'replace', 'test', 'remove'] }, path: string('A JSON pointer.'), value: {} },
    ['op', 'path'],
  ),
  Denial: closed(
    {
      kind: string('Which rule refused: Exceeded, MustSpecify, StatusUnknown, NegativeUsage, InsufficientQuotaToConsume, ...'),
      quota: string(),
      quotaKind: {
        type: 'string',
        enum: ['ClusterResourceQuota', 'HierarchicalResourceQuota'],
        description: 'Absent for a ResourceQuota.',
      },
      quotaNamespace: string("A HierarchicalResourceQuota's namespace."),
      resource: string('Exceeded: the first resource over its limit.'),
      requested: ref('Quantity'),
      used: ref('Quantity'),
      hard: ref('Quantity'),
      exceeded: array(
        closed({ resource: string(), requested: ref('Quantity'), used: ref('Quantity'), hard: ref('Quantity') }, [
          'resource',
          'requested',
          'hard',
        ]),
      ),
      resources: array(string()),
    },
    ['kind'],
    'Why a quota refused, as data.',
  ),
  AdmissionResult: closed(
    {
      allowed: boolean(),
      code: {
        type: 'integer',
        enum: [200, 202, 403, 409, 429, 500],
        description: '202: queued, it waits for room; 429: it asked to wait and the queue was full.',
      },
      dryRun: boolean(),
      message: string(),
      stage: { type: 'string', enum: [...ADMISSION_PLUGINS] },
      denial: ref('Denial'),
      reservationId: string(),
      charged: ref('ResourceList'),
      expiresAt: time(),
      patch: array(ref('JsonPatchOperation')),
      warnings: array(string()),
      queued: closed(
        { position: integer(), expiresAt: time(), waitingFor: array(ref('WaitingFor')) },
        ['position', 'expiresAt', 'waitingFor'],
        'Code 202: its place in the queue then, its deadline, what it waited for.',
      ),
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
      state: {
        type: 'string',
        enum: ['reserved', 'none'],
        description: '`reserved`: a dry run that would reserve; `none`: allowed, nothing charged.',
      },
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
      origin: {
        type: 'string',
        enum: ['webhook', 'rest', 'adopted'],
        description:
          "Who made it: the kube-apiserver's review (webhook) and the reconciler (adopted) are settled from what the cluster holds; rest by REST calls.",
      },
      object: closed({ group: string("'' for the core group."), resource: string(), kind: string(), name: string(), uid: string() }, [
        'group',
        'resource',
      ]),
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
  WaitingFor: closed(
    {
      quota: string('The quota (a shared one by its name).'),
      resources: array(
        closed({ resource: string(), requested: string(), used: string(), hard: string() }, ['resource', 'requested', 'used', 'hard']),
      ),
    },
    ['quota', 'resources'],
    'A quota a queued reservation waits for, and its resources that are short.',
  ),
  QueuedAnswer: closed(
    {
      id: string(),
      namespace: string(),
      state: constant('queued'),
      position: integer('1-based place in the queue (priority, then arrival) when it was queued.'),
      waitingFor: array(ref('WaitingFor')),
      expiresAt: time('It expires (an Expired event) unless admitted by then.'),
      ledgerPosition: POSITION_SCHEMA,
    },
    ['id', 'namespace', 'state', 'position', 'waitingFor', 'expiresAt'],
    'Queued: it waits for room; watch it with GET …/reservations/{id}?watch=true.',
  ),
  QueuedReservation: closed(
    {
      id: string(),
      namespace: string(),
      state: { type: 'string', enum: ['queued', 'cancelled', 'expired'] },
      position: integer('Queued: its place in the queue now.'),
      priority: integer(),
      resources: ref('ResourceList'),
      object: closed({ group: string(), resource: string(), kind: string(), name: string() }, ['group', 'resource']),
      waitingFor: array(ref('WaitingFor')),
      queuedAt: time(),
      expiresAt: time(),
      passed: integer('Reservations behind it admitted before it (QUEUE_PASS_MAX bounds this).'),
      endedAt: time(),
      reason: string('Expired: why.'),
      estimate: closed(
        {
          samples: integer('The past waits the percentiles are taken over.'),
          p50Seconds: { type: 'number' },
          p90Seconds: { type: 'number' },
        },
        ['samples', 'p50Seconds', 'p90Seconds'],
        "In a queue's listing: how long the namespace's recent waiters asking for about as much (the same resources, each within a factor of two) waited before admission; absent below 5 such waits.",
      ),
    },
    ['id', 'namespace', 'state', 'priority', 'resources', 'object', 'waitingFor', 'queuedAt', 'expiresAt', 'passed'],
    'A reservation waiting in the queue, or one that stopped waiting without being admitted.',
  ),
  SharedQuotaQueue: closed(
    {
      key: string(),
      namespaces: array(
        closed(
          {
            namespace: string(),
            weight: integer('quota-ledger.io/fair-share-weight (1 when absent).'),
            used: ref('ResourceList'),
            items: array(ref('QueuedReservation')),
          },
          ['namespace', 'weight', 'used', 'items'],
        ),
        'In the order the fair drain serves them: lowest weighted dominant share first.',
      ),
      namespacesWithheld: integer('To a token limited to namespaces: waiting namespaces outside its scope, left out.'),
    },
    ['key', 'namespaces'],
  ),
  NamespaceQueue: closed({ namespace: string(), items: array(ref('QueuedReservation'), 'In queue order.') }, ['namespace', 'items']),
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
} satisfies Record<string, Schema>;
