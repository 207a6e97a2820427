import { ADMISSION_PLUGIN_NAMES } from './admission-config.js';
import { integer, postgresUrl, type VariableDefinition } from './variable-definition.js';

/**
 * The variables of the reference's later sections: admission, the projection worker, the
 * reconciler and its inventory, logs, metrics and shutdown, the development start, and quotactl
 * (how the ledger runs). Part of VARIABLES (variables.ts).
 */

export const OPERATION_VARIABLES = {
  // Admission
  ADMISSION_BATCH_MAX: integer('admission', 64, 1, 1000, 'Most requests for one namespace decided in one transaction.', {
    see: 'concepts/ledger.md',
  }),
  ADMISSION_GROUP_MAX: integer('admission', 256, 1, 10_000, 'Most requests of all namespaces decided in one transaction (group commit).', {
    see: 'concepts/ledger.md',
  }),
  ADMISSION_GROUPS_IN_FLIGHT: integer(
    'admission',
    2,
    1,
    64,
    'Group commits in flight at once, each on one pooled connection (at most `DATABASE_POOL_SIZE`).',
  ),
  ADMISSION_RETRY_MAX: integer('admission', 12, 1, 100, 'Attempts of one transaction (serialization conflicts) before 503.'),
  RESERVATION_TTL_MAX_SECONDS: integer(
    'admission',
    7 * 24 * 3600,
    1,
    365 * 24 * 3600,
    'Longest `ttlSeconds` a REST reservation may ask for (7 days by default).',
  ),
  QUEUE_WAIT_MAX_SECONDS: integer('admission', 3600, 1, 7 * 24 * 3600, 'Longest `wait.seconds` a queued REST reservation may ask for.', {
    see: 'concepts/queue.md',
  }),
  QUEUE_PER_NAMESPACE_MAX: integer(
    'admission',
    100,
    1,
    10_000,
    'Most reservations queued in one namespace; past it a reserve with a wait answers 429.',
    { see: 'concepts/queue.md' },
  ),
  QUEUE_TOTAL_MAX: integer(
    'admission',
    10_000,
    1,
    1_000_000,
    'Most reservations queued in all namespaces together; past it a reserve with a wait answers 429.',
    { see: 'concepts/queue.md' },
  ),
  QUEUE_PASS_MAX: integer(
    'admission',
    8,
    0,
    1000,
    'Reservations behind a queued one that may be admitted before it (BestEffortFIFO); then it blocks the queue.',
    { see: 'concepts/queue.md' },
  ),
  QUEUE_PASS_SECONDS: integer(
    'admission',
    60,
    0,
    7 * 24 * 3600,
    'Seconds a queued reservation may be passed by smaller ones behind it; then it blocks the queue.',
    { see: 'concepts/queue.md' },
  ),
  QUEUE_BLOCK_SHARE_PERCENT: integer(
    'admission',
    50,
    1,
    100,
    "Most one principal's blocking queued reservations may ask for together, in percent of each quota's hard limit; past it they wait without blocking (100: no bound).",
    { see: 'concepts/queue.md' },
  ),
  QUEUE_WATCHES_PER_PRINCIPAL_MAX: integer(
    'admission',
    8,
    1,
    1000,
    'Most `?watch=true` reads of queued reservations one principal may hold open at once, per API process; one more answers 429.',
    {
      see: 'concepts/queue.md',
    },
  ),
  QUEUE_SWEEP_INTERVAL_MS: integer(
    'admission',
    1000,
    100,
    3_600_000,
    'How often the API expires queued reservations past their deadline and wakes those a shared quota has room for.',
    {
      see: 'concepts/queue.md',
    },
  ),
  QUOTAS_PER_NAMESPACE_MAX: integer(
    'admission',
    16,
    1,
    1000,
    'Most ResourceQuotas one namespace may hold (every admission there reads them all).',
  ),
  LIMIT_RANGES_PER_NAMESPACE_MAX: integer('admission', 16, 1, 1000, 'Most LimitRanges one namespace may hold.'),
  SHARED_QUOTA_NAMESPACES_MAX: integer(
    'admission',
    1000,
    1,
    100_000,
    'Most namespaces one ClusterResourceQuota or HierarchicalResourceQuota may cover when it is defined and at every relabel (every admission there rewrites its head).',
    { see: 'concepts/shared-quotas.md' },
  ),
  QUOTA_WARNING_PERCENT: integer(
    'admission',
    90,
    0,
    100,
    'An allowed admission warns (AdmissionReview `warnings`, REST `Warning` headers) of every resource it charged that is now at or above this percent of a hard limit; `0`: never.',
  ),
  ADMISSION_PLUGINS_ENABLE: {
    group: 'admission',
    kind: 'list',
    values: ADMISSION_PLUGIN_NAMES,
    defaultText: 'unset (`NamespaceLifecycle`, `LimitRanger`, `ResourceQuota` run)',
    meaning: "Comma list of admission plugins added to the defaults, as kube-apiserver's `--enable-admission-plugins`.",
    see: 'admission-plugins.md',
  },
  ADMISSION_PLUGINS_DISABLE: {
    group: 'admission',
    kind: 'list',
    values: ADMISSION_PLUGIN_NAMES,
    meaning: "Comma list of admission plugins removed from the defaults, as kube-apiserver's `--disable-admission-plugins`.",
    see: 'admission-plugins.md',
  },
  ADMISSION_CONFIG_FILE: {
    group: 'admission',
    kind: 'file',
    meaning: "kube-apiserver's `AdmissionConfiguration` file (YAML or JSON), read at boot: the ResourceQuota plugin's `limitedResources`.",
    see: 'admission-plugins.md',
  },

  // Projection worker
  PROJECTION_BATCH_SIZE: integer(
    'projection',
    1000,
    1,
    100_000,
    'Events the projection worker applies per transaction at most (and at most 8 MiB of them).',
  ),
  PROJECTION_STEP_MAX: integer(
    'projection',
    250,
    1,
    100_000,
    'Most events the projection worker applies in one step (smaller, steadier steps compete less with admissions).',
  ),
  PROJECTION_COALESCE_MS: integer('projection', 25, 0, 10_000, 'How long the worker lets notifications gather before a step.'),
  PROJECTION_POLL_MS: integer(
    'projection',
    1000,
    10,
    600_000,
    "The worker's polling fallback when no NOTIFY arrives (the ledger notifies after each committed batch).",
  ),
  SNAPSHOT_EVERY: integer(
    'projection',
    10_000,
    10,
    1_000_000,
    'Events between two snapshots of a namespace (where `usage?at=` folds from for versions the projection has not reached).',
  ),

  // Reconciler and inventory
  RECONCILE_INTERVAL_SECONDS: integer('reconciler', 60, 1, 86_400, 'Every namespace is reconciled this often.', {
    defaultText:
      '`600` when the reconciler watches (`INVENTORY_SOURCE=kubernetes`, `RECONCILE_WATCH=true`): the pass is then a safety net; else `60`',
    see: 'concepts/reconciliation.md',
  }),
  RECONCILE_WATCH: {
    group: 'reconciler',
    kind: 'oneOf',
    values: ['true', 'false'],
    default: 'true',
    meaning:
      'With `INVENTORY_SOURCE=kubernetes`: watch every charged kind across the cluster and settle a namespace as soon as one of its objects is deleted or a pod of it finishes (RBAC `watch`).',
    see: 'concepts/reconciliation.md#released-on-the-spot',
  },
  RECONCILE_MANAGED_LABEL: {
    group: 'reconciler',
    kind: 'oneOf',
    values: ['true', 'false'],
    default: 'true',
    meaning:
      "With `INVENTORY_SOURCE=kubernetes`: label every namespace the ledger manages `quota-ledger.io/managed` (and take it off every other), which the webhooks' default `namespaceSelector` requires; a namespace's first count then waits until its label is in place (RBAC `patch` on namespaces). `false` only where the webhooks are sent every namespace (`quotactl webhook-config --namespaces all`).",
    see: 'operations/blast-radius.md#which-namespaces-are-sent',
  },
  RECONCILE_WEBHOOK_CONFIGURATION: {
    group: 'reconciler',
    kind: 'text',
    default: 'quota-ledger',
    meaning:
      'With `INVENTORY_SOURCE=kubernetes`: the ValidatingWebhookConfiguration the webhooks are registered by (`quotactl webhook-config --name`). The reconciler reads its rules every interval (at most every 5 minutes) and reports the object counts quotas name that it does not send (`quota_ledger_reconciler_unrouted_counts`, `/readyz`); RBAC `get` on it.',
    see: 'install/webhook-configuration.md#a-quota-on-a-kind-the-registration-does-not-send',
  },
  RECONCILE_GRACE_SECONDS: integer('reconciler', 120, 0, 86_400, 'A reservation younger than this is never released as stale.', {
    see: 'concepts/reconciliation.md',
  }),
  RECONCILE_CONCURRENCY: integer('reconciler', 4, 1, 256, 'Namespace jobs one reconciler process runs at once.'),
  RECONCILE_AFTER_DELETE_SECONDS: integer(
    'reconciler',
    5,
    0,
    3600,
    'Delay of the prompt reconcile the webhook queues after an admitted DELETE (and of the read of a reviewed Namespace).',
  ),
  INVENTORY_SOURCE: {
    group: 'reconciler',
    kind: 'oneOf',
    values: ['none', 'kubernetes', 'postgres', 'http'],
    default: 'none',
    meaning: 'Where the reconciler lists the objects that exist.',
    see: 'concepts/reconciliation.md#choosing-an-inventory-source',
  },
  QUOTA_AWAITS_FIRST_COUNT: {
    group: 'reconciler',
    kind: 'oneOf',
    values: ['true', 'false'],
    defaultText: '`true` when `INVENTORY_SOURCE` is not `none`, else `false`',
    meaning:
      'A namespace made managed awaits its first count (its quotas answer `status unknown` until the reconciler has listed what exists). Set it on the API too (the kustomize base does), which has no `INVENTORY_SOURCE` of its own.',
    see: 'concepts/reconciliation.md#the-first-count',
  },
  NAMESPACE_LABELS_FROM: {
    group: 'reconciler',
    kind: 'oneOf',
    values: ['cluster', 'reviews'],
    defaultText: '`cluster` with `INVENTORY_SOURCE=kubernetes`, else `reviews`',
    meaning:
      "Where Namespaces' labels are taken from: `cluster`, the stored object as the reconciler reads it back (the webhook's review records nothing); `reviews`, the webhook's review as it passes. Set `cluster` on the API when a reconciler lists the cluster (the kustomize base does).",
    see: 'concepts/shared-quotas.md',
  },
  INVENTORY_KUBECONFIG: { group: 'reconciler', kind: 'file', meaning: 'The kubernetes source: a kubeconfig file.' },
  INVENTORY_IN_CLUSTER: {
    group: 'reconciler',
    kind: 'oneOf',
    values: ['true', 'false'],
    default: 'false',
    meaning: "The kubernetes source: use the pod's service account.",
  },
  INVENTORY_DATABASE_URL: {
    group: 'reconciler',
    kind: 'url',
    protocols: postgresUrl,
    defaultText: 'required with `INVENTORY_SOURCE=postgres`',
    meaning: "The postgres source: the platform's database.",
  },
  INVENTORY_RELATION: {
    group: 'reconciler',
    kind: 'text',
    defaultText: 'required with `INVENTORY_SOURCE=postgres`',
    meaning: 'The postgres source: a table or view (`name` or `schema.name`) with columns `namespace, kind, name, uid, object jsonb`.',
  },
  INVENTORY_URL: {
    group: 'reconciler',
    kind: 'url',
    protocols: ['http:', 'https:'],
    defaultText: 'required with `INVENTORY_SOURCE=http`',
    meaning: 'The http source: the reconciler GETs `{url}/namespaces/{ns}/objects`.',
  },
  INVENTORY_TOKEN: { group: 'reconciler', kind: 'text', meaning: 'The http source: sent as a bearer token.' },
  INVENTORY_CACHE: {
    group: 'reconciler',
    kind: 'oneOf',
    values: ['true', 'false'],
    default: 'true',
    meaning:
      'The kubernetes source: list from watch-fed caches, one per kind across the cluster (one LIST per kind at start, then WATCH; a namespace listing is read from memory). `false`: list every kind of the namespace from the kube-apiserver at each listing.',
    see: 'operations/scale.md',
  },
  INVENTORY_CACHE_MAX_OBJECTS: integer(
    'reconciler',
    500_000,
    1,
    100_000_000,
    "The kubernetes source's cache: objects one kind may hold. Past it the kind's cache is emptied, its listings fail closed (nothing is released from it) and it is listed again after 5 minutes.",
  ),
  INVENTORY_CACHE_MAX_BYTES: integer(
    'reconciler',
    268_435_456,
    1024,
    68_719_476_736,
    "The kubernetes source's cache: bytes (of the kept facts, as JSON) one kind may hold; past it, as past INVENTORY_CACHE_MAX_OBJECTS.",
  ),
  INVENTORY_TIMEOUT_MS: integer('reconciler', 10_000, 100, 600_000, 'Longest a listing may take.'),
  INVENTORY_PAGE_SIZE: integer(
    'reconciler',
    500,
    1,
    10_000,
    "The kubernetes inventory's page size (`limit`): each list follows `continue` to its end; a list whose continue token expired (410) is read again whole.",
  ),
  CUSTOM_RESOURCES: {
    group: 'reconciler',
    kind: 'list',
    defaultText: 'empty',
    meaning:
      "Custom resources the inventory lists besides Kubernetes' kinds: `resource.group/version=Kind`, comma-separated (at most 64), e.g. `widgets.example.com/v1=Widget`.",
    see: 'concepts/reconciliation.md#choosing-an-inventory-source',
  },

  // Logs, metrics and shutdown
  LOG_LEVEL: {
    group: 'lifecycle',
    kind: 'oneOf',
    values: ['debug', 'info', 'warn', 'error'],
    default: 'info',
    meaning: 'The least severe log line written (JSON lines on stdout).',
  },
  METRICS_PORT: integer(
    'lifecycle',
    9464,
    0,
    65535,
    "The projection worker's and the reconciler's `/metrics` + `/healthz` (`0`: none). The API serves them on `PORT`.",
    {
      see: 'operations/index.md#metrics',
    },
  ),
  SHUTDOWN_DRAIN_SECONDS: integer(
    'lifecycle',
    10,
    0,
    600,
    'The API after SIGTERM/SIGINT: `/readyz` fails `[-]shutdown` at once while every request is still served, this long, so that load balancers and endpoints stop sending to it; then it closes (a second signal ends the drain at once).',
    { defaultText: '`10` (`npm start`: none)', see: 'operations/index.md#rollouts-refuse-nothing' },
  ),
  SHUTDOWN_TIMEOUT_MS: integer(
    'lifecycle',
    25_000,
    0,
    600_000,
    'Longest a graceful shutdown may take (the API: its close, after the drain) before the process exits anyway.',
  ),

  // Development start
  QUOTA_LEDGER_DATA_DIR: {
    group: 'development',
    kind: 'text',
    default: '.quota-ledger',
    meaning: "`npm start`: the embedded PostgreSQL's data, its password, the development token.",
  },
  EMBEDDED_POSTGRES_PORT: integer('development', 54329, 1, 65535, "`npm start`: the embedded PostgreSQL's port (127.0.0.1 only)."),

  // quotactl
  QUOTA_LEDGER_SERVER: {
    group: 'quotactl',
    kind: 'url',
    protocols: ['http:', 'https:'],
    default: 'http://127.0.0.1:8080',
    meaning: "quotactl's default for `--server`.",
    see: 'cli.md',
  },
  QUOTA_LEDGER_TOKEN: {
    group: 'quotactl',
    kind: 'text',
    defaultText: 'unset (then `./.quota-ledger/dev-token`)',
    meaning: "quotactl's default for `--token`.",
  },
  QUOTA_LEDGER_CA_FILE: { group: 'quotactl', kind: 'file', meaning: "quotactl's default for `--certificate-authority`." },
  QUOTA_LEDGER_REQUEST_TIMEOUT: {
    group: 'quotactl',
    kind: 'text',
    default: '30',
    meaning:
      "quotactl's default for `--request-timeout`: seconds, or a duration with a unit (`500ms`, `30s`, `2m`, `1h`); `0` waits forever.",
  },
} as const satisfies Record<string, VariableDefinition>;
