import type { ReferenceObject, SchemaObject } from '@nestjs/swagger';
import { AdmissionReviewController } from '../admission-review/admission-review.controller.js';
import { AuditController } from '../audit/audit.controller.js';
import { HistoryController } from '../audit/history.controller.js';
import { NamespacesController } from '../namespaces/namespaces.controller.js';
import { WhoAmIController } from '../auth/whoami.controller.js';
import { HealthController } from '../health/health.controller.js';
import { LimitRangesController } from '../limit-ranges/limit-ranges.controller.js';
import { ProjectionsController } from '../projections/projections.controller.js';
import { ReservationsController } from '../reservations/reservations.controller.js';
import { WhatIfController } from '../reservations/what-if.controller.js';
import { QueueController } from '../reservations/queue.controller.js';
import { ResourceQuotasController } from '../resource-quotas/resource-quotas.controller.js';
import { ClusterResourceQuotasController } from '../cluster-resource-quotas/cluster-resource-quotas.controller.js';
import { HierarchicalResourceQuotasController } from '../hierarchical-resource-quotas/hierarchical-resource-quotas.controller.js';
import { NamespaceObjectsController } from '../namespaces/namespace-objects.controller.js';
import { POSITION_SCHEMA, schemaRef, type SchemaName } from './schemas.js';

/**
 * What each route takes and answers, beyond what @nestjs/swagger reads from the controllers
 * (paths, path parameters, DTO bodies and queries, roles, X-Ledger-Position): its body when it
 * is not a DTO (a Kubernetes object, an AdmissionReview), the schema of each success answer,
 * and the 4xx answers particular to it. docs.ts adds the answers every route shares (400 for
 * a bad path or query, 401/403/429 for routes with roles, 413/415 for routes with a body, 5XX),
 * each a Status. Keyed by controller and method, so a renamed handler does not compile; the
 * e2e test checks that every route has an entry and every entry a route.
 */
export type Schema = SchemaObject | ReferenceObject;

export interface Answer {
  readonly description: string;
  /** JSON unless `mediaType` says otherwise. */
  readonly schema: Schema;
  readonly mediaType?: string;
  /** Response headers beyond X-Ledger-Position (which @AnswersPosition documents). */
  readonly headers?: Record<string, { description: string; schema: SchemaObject }>;
}

export interface RouteDoc {
  readonly summary: string;
  /** A body that is not a DTO class (those are documented from their validation). */
  readonly body?: { readonly schema: Schema; readonly description: string };
  /** Success answers (and non-Status answers such as /readyz's 503), by HTTP status. */
  readonly answers: Readonly<Record<number, Answer>>;
  /** 4xx answers particular to the route (each a Status), with what they mean there; docs.ts adds the shared ones. */
  readonly errors: Readonly<Record<number, string>>;
  /** Parameters that are not derived (a path id checked in the handler, a raw `@Query('x')`), by name. */
  readonly parameters?: Readonly<
    Record<string, { readonly in: 'path' | 'query'; readonly schema: SchemaObject; readonly description?: string }>
  >;
}

type Controller = abstract new (...args: never[]) => object;

/** The operationId @nestjs/swagger gives a handler: `<Controller>_<method>`. */
export const operationIdOf = (controller: Controller, method: string): string => `${controller.name}_${method}`;

const ROUTES = new Map<string, RouteDoc>();

function route<C extends Controller>(controller: C, method: keyof InstanceType<C> & string, doc: RouteDoc): void {
  ROUTES.set(operationIdOf(controller, method), doc);
}

const json = (name: SchemaName, description: string): Answer => ({ description, schema: schemaRef(name) });
const ndjson = (name: SchemaName, description: string): Answer => ({
  description,
  schema: schemaRef(name),
  mediaType: 'application/x-ndjson',
});
const text = (description: string, mediaType = 'text/plain'): Answer => ({ description, schema: { type: 'string' }, mediaType });

const NOT_FOUND = 'It does not exist (or never existed, for a history).';
const PUT_ERRORS = {
  409: 'metadata.resourceVersion is not the stored one (or names an object that does not exist): read it again and retry.',
  422: 'The object is invalid; details.causes names each field, as the API server does.',
};

const WARNING_HEADER = {
  Warning: {
    description:
      'As kube-apiserver sends warnings, one header each (`299 - "text"`): for a `resources` list, each name with a quantity above zero that no quota covering the namespace limits without scopes, so nothing is charged for it (with the nearest standard name: `requests.cpus` → `requests.cpu`, `pod` → `pods`); then each quota the request leaves near its limit (QUOTA_WARNING_PERCENT). The request is admitted all the same.',
    schema: { type: 'string' } as SchemaObject,
  },
};

/** PUT (create or replace), GET, history and DELETE of a stored object: the same four handlers on each controller. */
function definitionRoutes(
  controller: abstract new (...args: never[]) => { put: unknown; get: unknown; history: unknown; delete: unknown },
  kind: SchemaName,
  errors: { readonly put: Readonly<Record<number, string>>; readonly delete?: Readonly<Record<number, string>> },
): void {
  route(controller, 'put', {
    summary: `Create or replace a ${kind}`,
    body: {
      schema: schemaRef(kind),
      description: `The ${kind}; metadata.resourceVersion, when given, must be the stored one (409 otherwise).`,
    },
    answers: { 201: json(kind, 'Created.'), 200: json(kind, 'Replaced (or unchanged).') },
    errors: errors.put,
  });
  route(controller, 'get', { summary: `Read a ${kind}`, answers: { 200: json(kind, `The ${kind}.`) }, errors: { 404: NOT_FOUND } });
  route(controller, 'history', {
    summary: `Every change of a ${kind}'s definition`,
    answers: { 200: json('DefinitionChangePage', 'Who changed it, when, before and after; oldest first.') },
    errors: { 404: NOT_FOUND },
  });
  route(controller, 'delete', {
    summary: `Delete a ${kind}`,
    answers: { 200: json(kind, 'Its last state.') },
    errors: { 404: NOT_FOUND, ...errors.delete },
  });
}

const TOO_MANY_NAMESPACES = 'It would cover more than SHARED_QUOTA_NAMESPACES_MAX namespaces.';
definitionRoutes(ResourceQuotasController, 'ResourceQuota', {
  put: {
    ...PUT_ERRORS,
    403: 'A quota limiting count/resourcequotas has no room for another, or the namespace holds QUOTAS_PER_NAMESPACE_MAX.',
  },
});
definitionRoutes(LimitRangesController, 'LimitRange', {
  put: { ...PUT_ERRORS, 403: 'The namespace holds LIMIT_RANGES_PER_NAMESPACE_MAX limit ranges.' },
});
definitionRoutes(ClusterResourceQuotasController, 'ClusterResourceQuota', { put: { ...PUT_ERRORS, 403: TOO_MANY_NAMESPACES } });
definitionRoutes(HierarchicalResourceQuotasController, 'HierarchicalResourceQuota', { put: { ...PUT_ERRORS, 403: TOO_MANY_NAMESPACES } });
definitionRoutes(NamespaceObjectsController, 'Namespace', {
  put: PUT_ERRORS,
  delete: { 403: 'default, kube-system and kube-public are never deleted (NamespaceLifecycle).' },
});
route(ResourceQuotasController, 'list', {
  summary: 'List the ResourceQuotas of a namespace',
  answers: { 200: json('ResourceQuotaList', "With the projection's usage.") },
  errors: {},
});
route(LimitRangesController, 'list', {
  summary: 'List the LimitRanges of a namespace',
  answers: { 200: json('LimitRangeList', 'The LimitRanges.') },
  errors: {},
});
route(ClusterResourceQuotasController, 'list', {
  summary: 'List the ClusterResourceQuotas',
  answers: { 200: json('ClusterResourceQuotaList', 'The ClusterResourceQuotas.') },
  errors: {},
});
route(HierarchicalResourceQuotasController, 'list', {
  summary: 'List the HierarchicalResourceQuotas of a namespace',
  answers: { 200: json('HierarchicalResourceQuotaList', 'The HierarchicalResourceQuotas.') },
  errors: {},
});

for (const controller of [ClusterResourceQuotasController, HierarchicalResourceQuotasController]) {
  route(controller, 'usageAt', {
    summary: 'Usage of a quota over several namespaces, now or at an instant',
    answers: { 200: json('SharedQuotaUsage', "Its usage in all and each covered namespace's part.") },
    errors: { 404: NOT_FOUND },
  });
  route(controller, 'queue', {
    summary: 'The reservations waiting for room in a quota over several namespaces',
    answers: { 200: json('SharedQuotaQueue', 'Per waiting namespace, in the order its fair drain serves them.') },
    errors: { 404: NOT_FOUND },
  });
  route(controller, 'usageSeries', {
    summary: 'Usage of a quota over several namespaces, sampled over a range',
    answers: {
      200: json('SharedQuotaUsageSeries', 'Points evenly spaced over the range, with its limit changes and the denials naming it.'),
    },
    errors: { 404: NOT_FOUND },
  });
}
route(NamespaceObjectsController, 'applied', {
  summary: 'The ClusterResourceQuotas covering a namespace',
  answers: { 200: json('AppliedClusterResourceQuotaList', "OpenShift's AppliedClusterResourceQuotaList.") },
  errors: {},
});
route(NamespaceObjectsController, 'appliedOne', {
  summary: 'One ClusterResourceQuota covering a namespace',
  answers: { 200: json('AppliedClusterResourceQuota', 'It.') },
  errors: { 404: NOT_FOUND },
});

const review = { schema: schemaRef('AdmissionReviewRequest'), description: 'The AdmissionReview kube-apiserver sends.' };
route(AdmissionReviewController, 'mutate', {
  summary: 'Mutating webhook: LimitRange defaults',
  body: review,
  answers: {
    200: json(
      'AdmissionReviewResponse',
      "Allowed with the defaults as a JSONPatch, or AlwaysDeny's refusal. A 5XX hands the request to the failurePolicy.",
    ),
  },
  errors: {},
});
route(AdmissionReviewController, 'validate', {
  summary: 'Validating webhook: LimitRange validation and quota',
  body: review,
  answers: {
    200: json(
      'AdmissionReviewResponse',
      'The decision, allowed or denied; an allowed CREATE/UPDATE reserves. A 5XX hands the request to the failurePolicy.',
    ),
  },
  errors: {},
});

route(ReservationsController, 'reserve', {
  summary: 'Reserve quota for an object or a resource list',
  answers: {
    201: { ...json('ReservationGranted', 'Reserved (a repeated requestId answers the first reservation).'), headers: WARNING_HEADER },
    200: { ...json('ReservationNotRecorded', 'Allowed without a reservation: a dry run, or nothing charged.'), headers: WARNING_HEADER },
    202: json('QueuedAnswer', 'It does not fit and asked to `wait`: queued (a repeated requestId answers the same).'),
  },
  errors: {
    429: 'It asked to wait, and the queue is full (QUEUE_PER_NAMESPACE_MAX, QUEUE_TOTAL_MAX).',
    403: 'Denied by a quota or LimitRange: details.denial says which and why, details.stage which admission plugin.',
    404: 'The namespace has no quota or limit range (it is not managed here).',
    409: 'The request contradicts what the ledger holds (a requestId reused for another request, an object uid of another kind).',
    422: 'An invalid object or resource list (a quantity that does not parse is 400, as for a quota); details.causes names the field.',
  },
});
route(ReservationsController, 'commit', {
  summary: 'Commit a reservation once its object exists',
  answers: { 200: json('Reservation', 'Committed (idempotent).') },
  errors: { 404: NOT_FOUND, 409: 'It was released.', 410: 'Its TTL ran out before the commit: it has been released; reserve again.' },
});
route(ReservationsController, 'release', {
  summary: 'Release a reservation, or cancel a queued one',
  answers: {
    200: {
      description: 'Released, or cancelled while queued (idempotent).',
      schema: { oneOf: [schemaRef('Reservation'), schemaRef('QueuedReservation')] },
    },
  },
  errors: { 404: NOT_FOUND, 409: 'It cannot be released in its state.' },
});
route(ReservationsController, 'get', {
  summary: 'A reservation and its history, or its place in the queue (watch=true waits while it is queued)',
  answers: {
    200: {
      description: 'The reservation, or the queued one.',
      schema: { oneOf: [schemaRef('Reservation'), schemaRef('QueuedReservation')] },
    },
  },
  errors: {
    404: NOT_FOUND,
    429: 'watch=true while its principal holds QUEUE_WATCHES_PER_PRINCIPAL_MAX watches open on this server already (Retry-After).',
  },
});
route(QueueController, 'list', {
  summary: "The namespace's queue of reservations waiting for room",
  answers: { 200: json('NamespaceQueue', 'In queue order.') },
  errors: {},
});
route(HistoryController, 'listReservations', {
  summary: 'Reservations by state and age',
  answers: { 200: json('ReservationPage', 'Oldest first.') },
  errors: {},
});
route(WhatIfController, 'ask', {
  summary: 'Would this be admitted now? (appends nothing)',
  answers: { 200: { ...json('WhatIf', 'The decision a reserve would get, allowed or not.'), headers: WARNING_HEADER } },
  errors: {
    404: 'The namespace has no quota or limit range (it is not managed here).',
    422: 'An invalid object or resource list; details.causes names the field.',
  },
});

route(AuditController, 'usage', {
  summary: 'Usage per quota, now (exact) or at an instant',
  answers: { 200: json('NamespaceUsage', 'Usage per quota.') },
  errors: { 404: NOT_FOUND },
});
route(AuditController, 'usageSeries', {
  summary: 'Usage per quota sampled over a range',
  answers: { 200: json('UsageSeries', 'Points evenly spaced over the range, with quota changes and denials as markers.') },
  errors: { 404: NOT_FOUND },
});
route(AuditController, 'unsettled', {
  summary: 'Webhook reservations no reconcile has settled',
  answers: { 200: json('UnsettledReservations', 'By resource.') },
  errors: {},
});
route(AuditController, 'events', {
  summary: "The namespace's ledger stream, paged",
  answers: { 200: json('EventPage', 'Events by position.') },
  errors: {},
});
route(AuditController, 'exportEvents', {
  summary: "The namespace's events as NDJSON",
  answers: { 200: ndjson('Event', 'One event per line, each of this schema.') },
  errors: {},
});
route(AuditController, 'decisions', {
  summary: 'The decisions log',
  answers: { 200: json('DecisionPage', 'Decisions with their explanation.') },
  errors: {},
});
route(AuditController, 'exportDecisions', {
  summary: 'The decisions log as NDJSON',
  answers: { 200: ndjson('Decision', 'One decision per line, each of this schema.') },
  errors: {},
});
route(AuditController, 'decision', {
  summary: 'One decision and why',
  answers: { 200: json('Decision', 'The decision.') },
  errors: { 404: NOT_FOUND },
  parameters: { id: { in: 'path', schema: POSITION_SCHEMA, description: "The decision's id." } },
});
route(NamespacesController, 'list', {
  summary: "Namespaces with their quotas' usage",
  answers: { 200: json('NamespaceSummaryPage', 'By name.') },
  errors: {},
});
route(ProjectionsController, 'lag', {
  summary: 'How far the projection trails the ledger',
  answers: { 200: json('ProjectionLag', 'The checkpoint and its lag.') },
  errors: {},
});
route(WhoAmIController, 'whoami', {
  summary: 'Who the credentials belong to',
  answers: { 200: json('WhoAmI', 'Name, roles and namespaces.') },
  errors: {},
});

route(HealthController, 'healthz', { summary: 'Liveness', answers: { 200: text('`ok` while the process runs.') }, errors: {} });
route(HealthController, 'readyz', {
  summary: 'Readiness',
  answers: {
    200: text('One `[+]name ok` line per check, then `readyz check passed`.'),
    503: text(
      'A `[-]name failed: why` line for each failing check (the why only to an authenticated caller not limited to namespaces; else `reason withheld`), then `readyz check failed`.',
    ),
  },
  errors: {},
  parameters: {
    exclude: {
      in: 'query',
      schema: { type: 'array', items: { type: 'string' } },
      description: 'Checks to leave out (repeatable): database, queue, unsettled-reservations.',
    },
  },
});
route(HealthController, 'metricsText', {
  summary: 'Prometheus metrics',
  answers: { 200: text('Prometheus text exposition format.') },
  errors: {},
});

/** The route table, by operationId. */
export const ROUTE_DOCS: ReadonlyMap<string, RouteDoc> = ROUTES;
