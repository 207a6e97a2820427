import { integer, postgresUrl, type VariableDefinition } from './variable-definition.js';

/**
 * The variables of the reference's first sections: the HTTP server, the database and queue, and
 * security (how the processes listen, what they connect to, who may call them). Part of VARIABLES
 * (variables.ts).
 */

/** The default request body limit: Kubernetes accepts objects of ~3 MiB, plus room for the AdmissionReview around them. */
export const DEFAULT_BODY_LIMIT_BYTES = 3 * 1024 * 1024 + 64 * 1024;

export const SERVER_VARIABLES = {
  // HTTP server
  PORT: integer('server', 8080, 0, 65535, 'HTTP(S) port of the admission API.'),
  HOST: {
    group: 'server',
    kind: 'text',
    default: '0.0.0.0',
    defaultText: '`0.0.0.0` (`npm start`: `127.0.0.1`)',
    meaning: "Listen address of the API and of the workers' `/metrics` + `/healthz`.",
  },
  HTTP_REQUEST_TIMEOUT_MS: integer(
    'server',
    30_000,
    1000,
    600_000,
    'Longest a request may take from its first byte to the answer (headers within 20 s); then 408 or the connection is closed.',
  ),
  BODY_LIMIT_BYTES: integer(
    'server',
    DEFAULT_BODY_LIMIT_BYTES,
    1024,
    64 * 1024 * 1024,
    'Largest admission request body (3 MiB + 64 KiB by default: Kubernetes accepts ~3 MiB objects); larger gets 413. Definitions take at most 512 KiB.',
    { see: 'security.md#limits' },
  ),
  BODIES_IN_FLIGHT_MAX_BYTES: integer(
    'server',
    64 * 1024 * 1024,
    1024,
    4 * 1024 * 1024 * 1024,
    'Request bodies being read at once, all requests together (one principal: a quarter); past it 429. At least `BODY_LIMIT_BYTES`.',
    { see: 'security.md#limits' },
  ),
  RATE_LIMIT_PER_SECOND: integer(
    'server',
    500,
    0,
    1_000_000,
    "Requests per second one authenticated principal (else one address) may make, per replica; `0` turns the limit off. The kube-apiserver's reviews are never limited.",
    { see: 'security.md#rate-limit-by-principal' },
  ),
  RATE_LIMIT_BURST: integer('server', 1000, 1, 1_000_000, 'Requests one client may make at once above its rate before 429.'),
  WEBHOOK_UNAUTHENTICATED_RATE_PER_SECOND: integer(
    'server',
    100,
    0,
    1_000_000,
    "Reviews per second one address may send to the unauthenticated webhook listener, per replica (burst `WEBHOOK_UNAUTHENTICATED_RATE_BURST`); past it 429, which the API server's failurePolicy answers. Far below `RATE_LIMIT_PER_SECOND`: whoever reaches that port can forge reviews that hold quota until the reconciler's grace period ends. A managed control plane that admits more writes than this from one address raises it; `0` turns it off.",
    { see: 'install/managed-control-planes.md' },
  ),
  WEBHOOK_UNAUTHENTICATED_RATE_BURST: integer(
    'server',
    200,
    1,
    1_000_000,
    'Reviews one address may send to the unauthenticated webhook listener at once above its rate before 429.',
  ),
  WEBHOOK_UNAUTHENTICATED_PORT: integer(
    'server',
    0,
    0,
    65535,
    'A second HTTPS listener serving only the webhook routes, to anyone, as `unauthenticated:kube-apiserver` (managed control planes, whose API servers present no credential); needs TLS and `NAMESPACE_LABELS_FROM=cluster`, and must differ from `PORT`. `0`: no such listener.',
    { defaultText: 'unset (no listener)', see: 'install/managed-control-planes.md' },
  ),

  // Database and queue
  DATABASE_URL: {
    group: 'database',
    kind: 'url',
    protocols: postgresUrl,
    defaultText: 'unset (`npm start`: the embedded PostgreSQL)',
    meaning:
      "The ledger's PostgreSQL; the apps refuse to start without one. `npm run migrate` applies the migrations to it (creating the database if needed). Several hosts as libpq writes them (`postgres://a:5432,b:5432/db?target_session_attrs=read-write`): every pool connects to the first that answers as the primary, and again after a failover (several hosts need `REDIS_URL`).",
    see: 'operations/failover.md',
  },
  DATABASE_REQUIRE_SYNCHRONOUS_STANDBY: {
    group: 'database',
    kind: 'flag',
    default: 'false',
    meaning:
      'The API refuses to start, and `/readyz` fails `[-]synchronous-standby`, unless the primary has `synchronous_standby_names` set, `synchronous_commit` at `on` or `remote_apply`, and a synchronous standby streaming: an admission is then acknowledged only once a standby holds it.',
    see: 'operations/failover.md',
  },
  DATABASE_RUNTIME_ROLE: {
    group: 'database',
    kind: 'text',
    defaultText: 'unset (the apps connect as the role that owns the schema)',
    meaning:
      "`npm run migrate` only: the role of the apps' `DATABASE_URL`, which must not own the schema. After migrating (as the owner), it grants this role what the apps need and nothing more: no UPDATE, DELETE or TRUNCATE of the append-only tables, no DDL, so the apps cannot disable the append-only triggers. The role must exist (CloudNativePG: `spec.managed.roles`).",
    see: 'install/database.md#two-roles-the-owner-migrates-the-apps-run-as-another',
  },
  DATABASE_READ_URL: {
    group: 'database',
    kind: 'url',
    protocols: postgresUrl,
    meaning: 'A hot standby of `DATABASE_URL` (PostgreSQL streaming replication): the API reads history there.',
    see: 'operations/replicas.md',
  },
  READ_REPLICA_WAIT_MS: integer(
    'database',
    1000,
    0,
    30_000,
    'Longest a read with `?minPosition=` waits for the standby to replay that event before the primary answers.',
    {
      see: 'operations/replicas.md',
    },
  ),
  REDIS_URL: {
    group: 'database',
    kind: 'url',
    protocols: ['redis:', 'rediss:'],
    defaultText: "unset (BullMQ's PostgreSQL backend in `DATABASE_URL`, schema `bullmq`)",
    meaning: "Redis for BullMQ's reconcile queue. Run it with `maxmemory-policy noeviction`.",
  },
  DATABASE_POOL_SIZE: integer(
    'database',
    8,
    1,
    200,
    'PostgreSQL connections the admission API may hold (throughput peaks at 4–16 on 2 cores; keep it small). The projection worker holds 4, the reconciler one per `RECONCILE_CONCURRENCY` job (at least 2).',
  ),
  STATEMENT_TIMEOUT_MS: integer(
    'database',
    5000,
    100,
    600_000,
    "Longest any statement of the API, the reconciler or the projection worker may run (a `--rebuild` is not bounded), and a transaction may sit idle. Keep it below the webhooks' `timeoutSeconds`.",
  ),

  // Security
  TOKENS_FILE: {
    group: 'security',
    kind: 'file',
    meaning:
      'YAML file of hashed bearer tokens with their roles; re-read when it changes. Required unless `QUOTA_LEDGER_INSECURE_DEV=true`.',
    see: 'security.md',
  },
  QUOTA_LEDGER_INSECURE_DEV: {
    group: 'security',
    kind: 'flag',
    default: 'false',
    meaning:
      'Development only: lets the API start without `TOKENS_FILE`, and then every caller is an anonymous admin with every role (logged as a warning at boot). With `TOKENS_FILE` set (as `npm start` sets it) every call still needs a token.',
  },
  TLS_CERT_FILE: {
    group: 'security',
    kind: 'file',
    meaning: 'HTTPS: the serving certificate (PEM), with `TLS_KEY_FILE`; reloaded when it changes.',
    see: 'security.md#https',
  },
  TLS_KEY_FILE: { group: 'security', kind: 'file', meaning: 'HTTPS: the serving key (PEM), with `TLS_CERT_FILE`.' },
  TLS_CLIENT_CA_FILE: {
    group: 'security',
    kind: 'file',
    meaning: 'Also accept client certificates signed by this CA (as the kube-apiserver authenticates to a webhook); needs `TLS_CERT_FILE`.',
  },
  TLS_CLIENT_CERT_ROLE: {
    group: 'security',
    kind: 'oneOf',
    values: ['webhook', 'admin', 'admission', 'auditor'],
    default: 'webhook',
    meaning: 'The role a verified client certificate gets, named by its CN.',
  },
  TLS_CLIENT_CERT_TRUST_USER_INFO: {
    group: 'security',
    kind: 'oneOf',
    values: ['true', 'false'],
    default: 'true',
    meaning: 'Record the `userInfo.username` of reviews sent with such a certificate as "on behalf of".',
    see: 'security.md#two-identities-on-every-write',
  },
} as const satisfies Record<string, VariableDefinition>;
