import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Answer } from './api.js';
import { createTestPki } from './certificates.js';
import { startControlPlane, type ControlPlane, type ControlPlaneOptions } from './control-plane.js';
import { createTestDatabase, TEST_PG_ADMIN_URL, type TestDatabase } from './database.js';
import { ROOT } from './deploy.js';
import { httpsJson } from './https-json.js';
import { writeKubeconfig, type AdmissionConfiguration } from './kubeconfig.js';
import { ensureBuilt, freePort } from './processes.js';
import { startJanitor, supervise, type Supervised } from './supervised.js';
import { writeTokensFile } from './tokens.js';

/**
 * Our stack, as built (`dist/apps/...`), against a real control plane (test/support/control-plane.ts),
 * installed as the README's "Registering the webhook with a Kubernetes cluster" tells users:
 *
 * - the admission API over HTTPS (a serving certificate from the plane's CA for 127.0.0.1), with a
 *   TOKENS_FILE holding the kube-apiserver's `webhook` token (trustUserInfo), an admin, an auditor
 *   and a tenant's `admission` token; NAMESPACE_LABELS_FROM=cluster and QUOTA_AWAITS_FIRST_COUNT=true
 *   as the kustomize base sets them;
 * - the projection worker;
 * - the reconciler with INVENTORY_SOURCE=kubernetes, authenticated by a ServiceAccount token bound
 *   to deploy/kubernetes/base/rbac.yaml's ClusterRole (applied to the plane), never an admin;
 * - BullMQ on PostgreSQL, in the test's own database (nothing shared with other tests);
 * - the admission policy that keeps the managed label the reconciler's (managed-namespace-label.yaml);
 * - the webhooks registered with `kubectl apply` of what the built `quotactl webhook-config`
 *   prints (the plane's CA as caBundle), sending every namespace (`--namespaces all`) unless
 *   `namespaces: 'managed'` (the install's default: only those the reconciler labelled, which
 *   test/kubernetes/managed-namespaces.test.ts runs; the other tests predate the label and
 *   create their namespaces unlabelled); the kube-apiserver presents the webhook token from the
 *   kubeconfig its --admission-control-config-file names, so the plane is started after the API's
 *   port is chosen: `prepareLedgerStack()` first, then the plane, then `startLedgerStack()`, or
 *   `startLedgerCluster()` for all three.
 *
 * Every process goes through supervise(): `setpriv --pdeathsig KILL` and a janitor that kills what
 * is left once the test process is gone, even by SIGKILL. The database is dropped by stop().
 */

const API_MAIN = join(ROOT, 'dist/apps/admission-api/src/main.js');
const MIGRATE = join(ROOT, 'dist/apps/admission-api/src/migrate.js');
const WORKER_MAIN = join(ROOT, 'dist/apps/projection-worker/src/main.js');
const RECONCILER_MAIN = join(ROOT, 'dist/apps/reconciler/src/main.js');
const QUOTACTL = join(ROOT, 'dist/apps/quotactl/src/main.js');
const RBAC = join(ROOT, 'deploy/kubernetes/base/rbac.yaml');
const MANAGED_LABEL_POLICY = join(ROOT, 'deploy/kubernetes/base/managed-namespace-label.yaml');
const NAMESPACE_MANIFEST = join(ROOT, 'deploy/kubernetes/base/namespace.yaml');
export const RECONCILER_SERVICE_ACCOUNT = { namespace: 'quota-ledger', name: 'quota-ledger-reconciler' };

export type AppName = 'api' | 'worker' | 'reconciler';
type Env = Record<string, string>;

export interface LedgerTokens {
  /** The kube-apiserver's (roles [webhook], trustUserInfo). */
  readonly webhook: string;
  readonly admin: string;
  readonly auditor: string;
  /** A tenant's REST admission token: its AdmissionReviews are refused 403. */
  readonly admission: string;
}

export interface PreparedStack {
  readonly port: number;
  /** With `none`: the unauthenticated webhook listener's port (WEBHOOK_UNAUTHENTICATED_PORT), where the webhooks are registered. */
  readonly unauthenticatedPort?: number;
  readonly tokens: LedgerTokens;
  /** For startControlPlane's `admission.configuration`: the webhook credentials for both webhooks at 127.0.0.1:port. */
  readonly admission: AdmissionConfiguration;
  /** With client-certificate credentials: the CA that signed the kube-apiserver's (TLS_CLIENT_CA_FILE), in a directory of its own. */
  readonly clientCa?: { readonly dir: string; readonly caCert: string };
}

/**
 * How the kube-apiserver authenticates to the webhooks (docs/install/kubernetes.md, step 5): the
 * `webhook` token, a client certificate (CN apiserver-webhook-client) that the API accepts through
 * TLS_CLIENT_CA_FILE, or `none`, a managed control plane's way (docs/install/managed-control-planes.md):
 * no webhook credential in its AdmissionConfiguration, the webhooks registered at the API's
 * unauthenticated listener (WEBHOOK_UNAUTHENTICATED_PORT).
 */
export type WebhookAuth = 'token' | 'client-certificate' | 'none';

export interface LedgerStackOptions {
  /** CUSTOM_RESOURCES entries (`widgets.example.com/v1=Widget`), given to the apps and to `webhook-config --custom-resource`. */
  readonly customResources?: readonly string[];
  /** More `quotactl webhook-config` flags: `--failure-policy Ignore`, `--namespace-selector …`. */
  readonly webhookFlags?: readonly string[];
  /** `--namespaces` of the registration: `all` by default here (see above), `managed` as installed. */
  readonly namespaces?: 'managed' | 'all';
  /** Register the webhooks (default true). */
  readonly register?: boolean;
  /** RECONCILE_GRACE_SECONDS (default 5) and RECONCILE_INTERVAL_SECONDS (default 3). */
  readonly graceSeconds?: number;
  readonly intervalSeconds?: number;
  /** The server the reconciler's kubeconfig names (a proxy in front of the plane); default the plane's. */
  readonly inventoryServer?: string;
  /** How the kube-apiserver authenticates to the webhooks (startLedgerCluster; default the token). */
  readonly webhookAuth?: WebhookAuth;
  /** Variables for every app, then per app (last wins). */
  readonly env?: Env;
  readonly appEnv?: Partial<Record<AppName, Env>>;
}

export interface LedgerStack {
  readonly plane: ControlPlane;
  /** https://127.0.0.1:<port> */
  readonly base: string;
  readonly port: number;
  /** With webhookAuth `none`: the unauthenticated webhook listener's port, where the webhooks are registered. */
  readonly unauthenticatedPort?: number;
  readonly tokens: LedgerTokens;
  readonly database: TestDatabase;
  readonly dir: string;
  /** The ServiceAccount kubeconfig the reconciler lists the cluster with. */
  readonly reconcilerKubeconfig: string;
  /** Milliseconds each start step took. */
  readonly timings: Readonly<Record<string, number>>;
  /** A call to our API over HTTPS, as the admin unless another token is given. */
  request(method: string, path: string, body?: unknown, token?: string): Promise<Answer>;
  /** What `quotactl webhook-config` prints with these flags (the stack's URL, CA and custom resources added). */
  webhookConfig(flags?: readonly string[]): Promise<string>;
  /** kubectl apply of webhookConfig(flags); waits until the kube-apiserver calls both webhooks (unless `wait: false`). */
  registerWebhooks(flags?: readonly string[], options?: { wait?: boolean; probeNamespace?: string }): Promise<string>;
  /** Validate and mutate calls our API has answered so far (its /metrics). */
  webhookCalls(): Promise<{ validate: number; mutate: number }>;
  startApp(name: AppName, env?: Env): Promise<void>;
  stopApp(name: AppName): Promise<void>;
  logs(name: AppName): string;
  /** The /metrics URL of the worker or the reconciler (plain http on 127.0.0.1). */
  metricsUrl(name: 'worker' | 'reconciler'): string;
  /** The processes of the stack now running (not the plane's). */
  pids(): number[];
  /** A query on the ledger's database (read what the API does not show). */
  sql<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  stop(): Promise<void>;
}

/** Step one: the API's port and tokens, so that the plane can be started with the webhook credentials. */
export async function prepareLedgerStack(auth: WebhookAuth = 'token'): Promise<PreparedStack> {
  const port = await freePort();
  const token = (): string => randomBytes(32).toString('hex');
  const tokens = { webhook: token(), admin: token(), auditor: token(), admission: token() };
  if (auth === 'none')
    return { port, tokens, unauthenticatedPort: await freePort(), admission: { validatingWebhooks: [], mutatingWebhooks: [] } };
  const pki = auth === 'client-certificate' ? createTestPki() : undefined;
  const certificate = pki?.issue('kube-apiserver-webhooks', { commonName: 'apiserver-webhook-client', client: true });
  const credentials = certificate ? { clientCertificate: certificate.cert, clientKey: certificate.key } : { token: tokens.webhook };
  const client = { server: `127.0.0.1:${port}`, credentials };
  return {
    port,
    tokens,
    admission: { validatingWebhooks: [client], mutatingWebhooks: [client] },
    ...(pki ? { clientCa: { dir: pki.dir, caCert: pki.caCert } } : {}),
  };
}

/** A plane with the stack's webhook credentials (merged into `planeOptions.admission.configuration`), then the stack. */
export async function startLedgerCluster(planeOptions: ControlPlaneOptions = {}, options: LedgerStackOptions = {}): Promise<LedgerStack> {
  const prepared = await prepareLedgerStack(options.webhookAuth);
  const extra = planeOptions.admission?.configuration;
  const configuration: AdmissionConfiguration = {
    ...extra,
    validatingWebhooks: [...prepared.admission.validatingWebhooks!, ...(extra?.validatingWebhooks ?? [])],
    mutatingWebhooks: [...prepared.admission.mutatingWebhooks!, ...(extra?.mutatingWebhooks ?? [])],
  };
  const plane = await startControlPlane({ ...planeOptions, admission: { ...planeOptions.admission, configuration } });
  try {
    return await startLedgerStack(plane, prepared, options);
  } catch (error) {
    await plane.stop();
    throw error;
  }
}

function run(command: string, args: readonly string[], env: Env): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { env, cwd: ROOT, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${[command, ...args].join(' ')}: ${error.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/** Step two: our stack against `plane`, started with `prepared.admission`. Rejects with nothing left running. */
export async function startLedgerStack(
  plane: ControlPlane,
  prepared: PreparedStack,
  options: LedgerStackOptions = {},
): Promise<LedgerStack> {
  ensureBuilt();
  const timings: Record<string, number> = {};
  const timed = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
    const begun = Date.now();
    const result = await work();
    timings[name] = Date.now() - begun;
    return result;
  };
  const database = await timed('database', () => createTestDatabase('qlk8s'));
  const dir = mkdtempSync(join(tmpdir(), 'ql-stack-'));
  // A test killed outright runs no afterAll: the janitor drops the database too.
  const clientCa = prepared.clientCa ? `; rm -rf '${prepared.clientCa.dir}'` : '';
  const janitor = startJanitor(
    dir,
    `psql -qX '${TEST_PG_ADMIN_URL}' -c 'DROP DATABASE IF EXISTS ${database.name} WITH (FORCE)' >/dev/null 2>&1${clientCa}`,
  );
  const running = new Map<AppName, Supervised>();
  let pool: pg.Pool | undefined;
  const teardown = async (): Promise<void> => {
    // The API first (it queues jobs), then the reconciler, then the worker.
    for (const name of ['api', 'reconciler', 'worker'] as const) await running.get(name)?.stop(15_000);
    await pool?.end();
    await database.drop();
    janitor.dismiss();
    rmSync(dir, { recursive: true, force: true });
    if (prepared.clientCa) rmSync(prepared.clientCa.dir, { recursive: true, force: true });
  };
  try {
    const [reconcilerKubeconfig] = await Promise.all([
      timed('reconciler credentials', () => reconcilerCredentials(plane, join(dir, 'reconciler.kubeconfig'), options.inventoryServer)),
      timed('migrate', () => run(process.execPath, [MIGRATE], { ...(process.env as Env), DATABASE_URL: database.url })),
    ]);
    pool = new pg.Pool({ connectionString: database.url, max: 2 });
    const stack = assemble({ plane, prepared, options, dir, database, pool, running, reconcilerKubeconfig, timings, teardown });
    await timed('apps', () => Promise.all((['api', 'worker', 'reconciler'] as const).map((name) => stack.startApp(name))));
    if (options.register ?? true) await timed('webhooks', () => stack.registerWebhooks());
    return stack;
  } catch (error) {
    const logs = [...running.values()].map((p) => `--- ${p.name}\n${p.logTail(3000)}`).join('\n');
    await teardown();
    throw new Error(`${(error as Error).message}\n${logs}`, { cause: error });
  }
}

/**
 * Applies deploy/kubernetes/base/rbac.yaml (its namespace first) and mints a token for its
 * ServiceAccount once RBAC grants it what the ClusterRole says: the reconciler's credentials.
 */
async function reconcilerCredentials(plane: ControlPlane, kubeconfig: string, server = plane.server): Promise<string> {
  await plane.apply(readFileSync(NAMESPACE_MANIFEST, 'utf8'));
  await plane.apply(readFileSync(RBAC, 'utf8'));
  await plane.apply(readFileSync(MANAGED_LABEL_POLICY, 'utf8'));
  const user = `system:serviceaccount:${RECONCILER_SERVICE_ACCOUNT.namespace}:${RECONCILER_SERVICE_ACCOUNT.name}`;
  const deadline = Date.now() + 30_000;
  // RBAC's authorizer reads bindings from an informer: the grant shows shortly after the apply.
  while ((await plane.tryKubectl(['auth', 'can-i', 'list', 'pods', '--all-namespaces', `--as=${user}`])).stdout.trim() !== 'yes') {
    if (Date.now() > deadline) throw new Error(`${user} was not granted the reconciler's ClusterRole`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const token = (
    await plane.kubectl([
      'create',
      'token',
      RECONCILER_SERVICE_ACCOUNT.name,
      '-n',
      RECONCILER_SERVICE_ACCOUNT.namespace,
      '--duration=7200s',
    ])
  ).trim();
  return writeKubeconfig(kubeconfig, server, plane.caCert, { token });
}

interface Parts {
  plane: ControlPlane;
  prepared: PreparedStack;
  options: LedgerStackOptions;
  dir: string;
  database: TestDatabase;
  pool: pg.Pool;
  running: Map<AppName, Supervised>;
  reconcilerKubeconfig: string;
  timings: Record<string, number>;
  teardown: () => Promise<void>;
}

function assemble(parts: Parts): LedgerStack {
  const { plane, prepared, options, dir, database, pool, running } = parts;
  const base = `https://127.0.0.1:${prepared.port}`;
  const ca = readFileSync(plane.caCert);
  const serving = plane.issueCertificate('quota-ledger-api', { commonName: '127.0.0.1', ipAddresses: ['127.0.0.1'] });
  const tokensFile = writeTokensFile(
    [
      { name: 'kube-apiserver', token: prepared.tokens.webhook, roles: ['webhook'], trustUserInfo: true },
      { name: 'platform-admin', token: prepared.tokens.admin, roles: ['admin', 'auditor'] },
      { name: 'auditor', token: prepared.tokens.auditor, roles: ['auditor'] },
      { name: 'team-ci', token: prepared.tokens.admission, roles: ['admission'] },
    ],
    dir,
  );
  const customResources = (options.customResources ?? []).join(',');
  const common: Env = {
    ...(process.env as Env),
    DATABASE_URL: database.url,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    CUSTOM_RESOURCES: customResources,
    RECONCILE_GRACE_SECONDS: String(options.graceSeconds ?? 5),
    RECONCILE_INTERVAL_SECONDS: String(options.intervalSeconds ?? 3),
    RECONCILE_AFTER_DELETE_SECONDS: '1',
    SHUTDOWN_TIMEOUT_MS: '10000',
    ...options.env,
  };
  delete common.REDIS_URL; // BullMQ on PostgreSQL, in this test's database
  const ports = new Map<AppName, number>();
  const envOf = async (name: AppName): Promise<Env> => {
    if (!ports.has(name)) ports.set(name, name === 'api' ? prepared.port : await freePort());
    const port = String(ports.get(name));
    const own: Record<AppName, Env> = {
      api: {
        PORT: port,
        TOKENS_FILE: tokensFile,
        TLS_CERT_FILE: serving.cert,
        TLS_KEY_FILE: serving.key,
        ...(prepared.clientCa ? { TLS_CLIENT_CA_FILE: prepared.clientCa.caCert } : {}),
        ...(prepared.unauthenticatedPort ? { WEBHOOK_UNAUTHENTICATED_PORT: String(prepared.unauthenticatedPort) } : {}),
        NAMESPACE_LABELS_FROM: 'cluster',
        QUOTA_AWAITS_FIRST_COUNT: 'true',
        SHUTDOWN_DRAIN_SECONDS: '0',
      },
      worker: { METRICS_PORT: port },
      reconciler: { METRICS_PORT: port, INVENTORY_SOURCE: 'kubernetes', INVENTORY_KUBECONFIG: parts.reconcilerKubeconfig },
    };
    return { ...common, ...own[name], ...options.appEnv?.[name] };
  };
  const scripts: Record<AppName, string> = { api: API_MAIN, worker: WORKER_MAIN, reconciler: RECONCILER_MAIN };
  const readyUrl = (name: AppName): string => (name === 'api' ? `${base}/readyz` : `http://127.0.0.1:${ports.get(name)}/healthz`);

  const startApp = async (name: AppName, env: Env = {}): Promise<void> => {
    if (running.get(name) && !running.get(name)?.exited()) throw new Error(`${name} is running`);
    const args = name === 'api' ? ['--max-old-space-size=256', '--max-semi-space-size=8', scripts[name]] : [scripts[name]];
    const app = supervise(dir, name, process.execPath, args, { ...(await envOf(name)), ...env });
    running.set(name, app);
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (app.exited()) throw new Error(`${name} exited while starting:\n${app.logTail()}`);
      const answer = await httpsJson(readyUrl(name), { ca, timeoutMs: 2_000 }).catch(() => undefined);
      if (answer?.status === 200) return;
      if (Date.now() > deadline) throw new Error(`${name} was not ready within 60 s:\n${app.logTail()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  // Where the webhooks are registered: the main port, or the unauthenticated listener's.
  const webhookBase = prepared.unauthenticatedPort ? `https://127.0.0.1:${prepared.unauthenticatedPort}` : base;
  const webhookConfig = (flags: readonly string[] = []): Promise<string> =>
    run(
      process.execPath,
      [
        QUOTACTL,
        'webhook-config',
        '--ca-file',
        plane.caCert,
        '--url',
        webhookBase,
        '--namespaces',
        options.namespaces ?? 'all',
        ...(options.customResources ?? []).flatMap((r) => ['--custom-resource', r]),
        ...flags,
      ],
      process.env as Env,
    );

  return {
    plane,
    base,
    port: prepared.port,
    ...(prepared.unauthenticatedPort ? { unauthenticatedPort: prepared.unauthenticatedPort } : {}),
    tokens: prepared.tokens,
    database,
    dir,
    reconcilerKubeconfig: parts.reconcilerKubeconfig,
    timings: parts.timings,
    request: (method, path, body, token = prepared.tokens.admin) =>
      httpsJson(`${base}${path}`, { method, body, ca, headers: { authorization: `Bearer ${token}` } }),
    webhookConfig,
    async registerWebhooks(flags = options.webhookFlags ?? [], { wait = true, probeNamespace = 'default' } = {}) {
      const yaml = await webhookConfig(flags);
      await plane.apply(yaml);
      if (wait) await untilWebhooksCalled(plane, base, ca, probeNamespace);
      return yaml;
    },
    webhookCalls: () => webhookCalls(base, ca),
    startApp,
    stopApp: async (name) => {
      await running.get(name)?.stop(15_000);
    },
    logs: (name) => running.get(name)?.logTail(64_000) ?? '',
    metricsUrl: (name) => `http://127.0.0.1:${ports.get(name)}/metrics`,
    pids: () => [...running.values()].filter((p) => !p.exited()).map((p) => p.pid),
    sql: async <T>(text: string, params: unknown[] = []) => (await pool.query(text, params)).rows as T[],
    stop: parts.teardown,
  };
}

/** Validate and mutate calls the API has answered, from its /metrics. */
async function webhookCalls(base: string, ca: Buffer): Promise<{ validate: number; mutate: number }> {
  const metrics = await httpsJson(`${base}/metrics`, { ca });
  const calls = { validate: 0, mutate: 0 };
  for (const match of String(metrics.body).matchAll(/^quota_ledger_admission_duration_seconds_count\{([^}]*)\} (\d+)/gm)) {
    const endpoint = /endpoint="(\w+)"/.exec(match[1] ?? '')?.[1];
    if (endpoint === 'validate' || endpoint === 'mutate') calls[endpoint] += Number(match[2]);
  }
  return calls;
}

/**
 * The kube-apiserver reads webhook configurations through an informer: until it has, nothing is
 * sent. A server-side dry run of a pod (both webhooks see pods) is repeated until both were called.
 */
async function untilWebhooksCalled(plane: ControlPlane, base: string, ca: Buffer, namespace: string): Promise<void> {
  const before = await webhookCalls(base, ca);
  const pod = JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'ql-webhook-probe', namespace },
    spec: { containers: [{ name: 'probe', image: 'registry.invalid/probe:1' }] },
  });
  const deadline = Date.now() + 30_000;
  for (;;) {
    await plane.tryKubectl(['create', '--dry-run=server', '-o', 'name', '-f', '-'], pod);
    const now = await webhookCalls(base, ca);
    if (now.validate > before.validate && now.mutate > before.mutate) return;
    if (Date.now() > deadline)
      throw new Error(`the kube-apiserver did not call the webhooks within 30 s (validate ${now.validate}, mutate ${now.mutate})`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
