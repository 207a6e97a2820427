import { ROLES } from '../auth/tokens.js';
import {
  EVENT_PROPERTIES,
  EVENT_REQUIRED,
  POSITION_SCHEMA,
  QUOTA_USAGE,
  COVERING_SHARED_QUOTA,
  USAGE_MARKER_DENIAL,
  USAGE_MARKER_LIMIT,
  array,
  boolean,
  closed,
  constant,
  integer,
  page,
  ref,
  string,
  time,
  type Schema,
} from './schema-parts.js';

/**
 * The answers of the read side (the audit log and definition changes, decisions, usage and its
 * series, namespace summaries, projection lag, who-am-i), as schema components: the last part of
 * SCHEMAS (schemas.ts), after ANSWER_SCHEMAS (answer-schemas.ts).
 */
export const READ_SCHEMAS = {
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
      version: integer("The namespace stream's version the usage is as of.", { minimum: 0 }),
      position: POSITION_SCHEMA,
      at: time('With `?at=`: the instant asked for.'),
      quotas: array(QUOTA_USAGE),
      shared: array(COVERING_SHARED_QUOTA, 'Now only (not with `?at=`): the shared quotas covering the namespace; absent when none does.'),
      awaitingFirstCountSince: time(
        'The namespace awaits its first count since then: objects admitted before it was managed are not in `used` yet, and what its quotas would charge is refused (`status unknown for quota`) until the reconciler has listed them.',
      ),
    },
    ['namespace', 'version', 'position', 'quotas'],
  ),
  UsageMarker: {
    oneOf: [USAGE_MARKER_LIMIT, USAGE_MARKER_DENIAL],
    description: 'A quota limit change or a denial, to mark on a usage chart.',
  },
  UsageSeries: closed(
    {
      namespace: string(),
      since: time(),
      until: time(),
      points: array(
        closed({ at: time(), version: integer(undefined, { minimum: 0 }), quotas: array(QUOTA_USAGE) }, ['at', 'version', 'quotas']),
      ),
      markers: array(ref('UsageMarker')),
      truncated: boolean('More markers than the answer holds.'),
    },
    ['namespace', 'since', 'until', 'points', 'markers', 'truncated'],
  ),
  UnsettledReservations: closed(
    {
      reservedBefore: time(),
      items: array(
        closed(
          {
            resource: string('`widgets.example.com`'),
            count: integer(undefined, { minimum: 1 }),
            namespaces: integer(undefined, { minimum: 1 }),
          },
          ['resource', 'count', 'namespaces'],
        ),
      ),
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
      overHard: array(
        closed({ resource: string(), used: string(), hard: string() }, ['resource', 'used', 'hard']),
        'Resources used beyond hard (a namespace relabelled in, a lowered limit): nothing more is admitted until usage drops.',
      ),
      namespacesWithheld: integer("Covered namespaces outside the caller's scope, left out of `namespaces` (their usage is in `used`).", {
        minimum: 1,
      }),
    },
    ['key', 'version', 'defined', 'hard', 'used', 'namespaces', 'overHard'],
  ),
  SharedQuotaUsageSeries: closed(
    {
      key: string(),
      since: time(),
      until: time(),
      points: array(
        closed(
          {
            at: time(),
            version: integer(undefined, { minimum: 0 }),
            defined: boolean(),
            hard: ref('ResourceList'),
            used: ref('ResourceList'),
          },
          ['at', 'version', 'defined', 'hard', 'used'],
        ),
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
            tightest: closed({ resource: string(), ratio: { type: 'number', minimum: 0, description: 'used / hard (1: at the limit).' } }, [
              'resource',
              'ratio',
            ]),
          },
          ['name', 'hard', 'used'],
        ),
      ),
      tightest: closed({ quota: string(), resource: string(), ratio: { type: 'number', minimum: 0 } }, ['quota', 'resource', 'ratio']),
      shared: array(COVERING_SHARED_QUOTA, 'The shared quotas covering the namespace; absent when none does.'),
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
      namespaces: {
        oneOf: [{ type: 'string', enum: ['*'] }, array(string())],
        description: '`"*"` for every namespace, else those the caller may act in.',
      },
    },
    ['apiVersion', 'kind', 'name', 'roles', 'namespaces'],
  ),
} satisfies Record<string, Schema>;
