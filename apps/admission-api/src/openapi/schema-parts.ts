import type { ReferenceObject, SchemaObject } from '@nestjs/swagger';

/** The building blocks of the API's schema components (schemas.ts, answer-schemas.ts, read-schemas.ts). */
export type Schema = SchemaObject | ReferenceObject;

/** A reference to a component (checked where SCHEMAS is used: the e2e test resolves every $ref). */
export const ref = (name: string): ReferenceObject => ({ $ref: `#/components/schemas/${name}` });

export const string = (description?: string, extra: SchemaObject = {}): SchemaObject => ({
  type: 'string',
  ...(description ? { description } : {}),
  ...extra,
});
export const integer = (description?: string, extra: SchemaObject = {}): SchemaObject => ({
  type: 'integer',
  ...(description ? { description } : {}),
  ...extra,
});
export const boolean = (description?: string): SchemaObject => ({ type: 'boolean', ...(description ? { description } : {}) });
export const time = (description?: string): SchemaObject => string(description, { format: 'date-time' });
export const constant = (value: string | number): SchemaObject => ({
  type: typeof value === 'number' ? 'integer' : 'string',
  enum: [value],
});
export const array = (items: Schema, description?: string): SchemaObject => ({
  type: 'array',
  items,
  ...(description ? { description } : {}),
});
export const stringMap = (description?: string): SchemaObject => ({
  type: 'object',
  additionalProperties: { type: 'string' },
  ...(description ? { description } : {}),
});

/** An object with exactly these properties, the listed ones always present. */
export function closed(properties: Record<string, Schema>, required: readonly string[] = [], description?: string): SchemaObject {
  return {
    type: 'object',
    properties,
    ...(required.length > 0 ? { required: [...required] } : {}),
    additionalProperties: false,
    ...(description ? { description } : {}),
  };
}

/** A Kubernetes list: `{apiVersion, kind: <Kind>List, metadata: {}, items}`. */
export function kubeList(apiVersion: string, kind: string, item: string): SchemaObject {
  return closed({ apiVersion: constant(apiVersion), kind: constant(`${kind}List`), metadata: closed({}), items: array(ref(item)) }, [
    'apiVersion',
    'kind',
    'metadata',
    'items',
  ]);
}

/** A page of a paged read: pass `next` as `after` for the following page; absent on the last. */
export function page(item: string): SchemaObject {
  return closed({ items: array(ref(item)), next: string('Pass as `after` for the next page; absent on the last page.') }, ['items']);
}

/** A ledger position (`ledger_events.position`): a decimal bigint of at most 18 digits. */
export const POSITION_SCHEMA: SchemaObject = string('A ledger position (ledger_events.position), decimal.', { pattern: '^[0-9]{1,18}$' });
export { NAMESPACE_NAME_SCHEMA, OBJECT_NAME_SCHEMA, RESERVATION_ID_SCHEMA } from '../common/kube/path-params.js';

/** A shared quota covering a namespace (its head's word): kind, name, its hard limits and the namespace's part of its use. */
export const COVERING_SHARED_QUOTA = closed(
  {
    kind: { type: 'string', enum: ['ClusterResourceQuota', 'HierarchicalResourceQuota'] },
    name: string(),
    namespace: string("A HierarchicalResourceQuota's namespace."),
    hard: ref('ResourceList'),
    // What this namespace contributes to its use (the total is the shared quota's own usage).
    used: ref('ResourceList'),
  },
  ['kind', 'name', 'hard', 'used'],
);

export const QUOTA_USAGE = closed({ name: string('The ResourceQuota.'), hard: ref('ResourceList'), used: ref('ResourceList') }, [
  'name',
  'hard',
  'used',
]);

/** What an event shows; a definition change adds its before/after. */
export const EVENT_PROPERTIES: Record<string, Schema> = {
  position: POSITION_SCHEMA,
  version: integer('The version of the event in its stream.', { minimum: 1 }),
  type: string('The event type, e.g. `Reserved`, `QuotaDefined`.'),
  time: time('When it was recorded.'),
  actor: string('The authenticated principal that wrote it.'),
  onBehalfOf: string('The Kubernetes user it relayed, when the principal is trusted to speak for users.'),
  requestId: string(),
  data: { description: 'The event data, as stored (its shape depends on `type`).' },
};
export const EVENT_REQUIRED = ['position', 'version', 'type', 'time', 'actor', 'data'];

export const CLUSTER_RESOURCE_QUOTA: SchemaObject = closed(
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
        namespaces: array(
          closed({ namespace: string(), status: closed({ hard: ref('ResourceList'), used: ref('ResourceList') }, ['hard', 'used']) }, [
            'namespace',
            'status',
          ]),
        ),
      },
      ['total', 'namespaces'],
      'Computed by the ledger; ignored on a write.',
    ),
  },
  [],
  'quota.openshift.io/v1 ClusterResourceQuota: a ResourceQuotaSpec over every namespace its selector picks.',
);

export const USAGE_MARKER_LIMIT = closed(
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
export const USAGE_MARKER_DENIAL = closed(
  {
    kind: constant('denial'),
    at: time(),
    decisionId: POSITION_SCHEMA,
    reason: { ...string(), nullable: true },
    requester: string(),
    name: { ...string(), nullable: true },
    message: { ...string(), nullable: true },
    quota: string('The quota that refused (absent when none did, as for a LimitRange denial).'),
    quotaKind: string('A shared quota that refused: ClusterResourceQuota or HierarchicalResourceQuota.'),
    quotaNamespace: string("A HierarchicalResourceQuota's namespace."),
    resources: array(string(), 'The resources it was refused for: over the limit, or not specified.'),
  },
  ['kind', 'at', 'decisionId', 'reason', 'requester', 'name', 'message'],
);
