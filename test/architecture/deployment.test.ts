import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KNOWN_KINDS } from '@quota/inventory';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ROLES, TokenSet, sha256Hex } from '../../apps/admission-api/src/auth/tokens.js';
import { MUTATE_PATH, VALIDATE_PATH, webhookConfiguration } from '../../apps/quotactl/src/webhook-config.js';

/**
 * The deployment artifacts (Dockerfile, deploy/compose.yaml, deploy/kubernetes) checked
 * against the code they deploy. No Docker engine or cluster runs here, so the files are parsed
 * and every rule is a function returning the problems it finds: each is run on the real files
 * (no problems) and on a broken copy (the problem is named), so no rule passes vacuously.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DEPLOY = join(ROOT, 'deploy');
const KUBERNETES = join(DEPLOY, 'kubernetes');

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const asObject = (value: unknown): Json => (isObject(value) ? value : {});
const asList = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const asText = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

function get(value: unknown, ...path: (string | number)[]): unknown {
  let current = value;
  for (const key of path) {
    if (Array.isArray(current) && typeof key === 'number') current = current[key];
    else if (isObject(current) && typeof key === 'string') current = current[key];
    else return undefined;
  }
  return current;
}

interface LoadedDocument {
  /** Relative to the repository, with the document's index when the file has several. */
  readonly where: string;
  readonly file: string;
  readonly value: unknown;
}

function yamlFilesUnder(dir: string): string[] {
  return readdirSync(dir)
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return yamlFilesUnder(path);
      return /\.ya?ml$/.test(name) ? [path] : [];
    })
    .sort();
}

function loadYaml(file: string): LoadedDocument[] {
  // merge: compose files share settings through `<<:` merge keys, a YAML 1.1 feature.
  const documents = parseAllDocuments(readFileSync(file, 'utf8'), { merge: true });
  const loaded: LoadedDocument[] = [];
  documents.forEach((document, index) => {
    const where = `${relative(ROOT, file)}${documents.length > 1 ? `#${index}` : ''}`;
    if (document.errors.length > 0) throw new Error(`${where}: ${document.errors.map((e) => e.message).join('; ')}`);
    const value: unknown = document.toJS();
    // A trailing `---` leaves an empty document, which kubectl skips too.
    if (value !== null && value !== undefined) loaded.push({ where, file, value });
  });
  return loaded;
}

const ALL_YAML = yamlFilesUnder(DEPLOY);
const COMPOSE_FILE = join(DEPLOY, 'compose.yaml');
const TOKENS_FILE = join(DEPLOY, 'tokens.example.yaml');
const KUSTOMIZATION_FILE = join(KUBERNETES, 'kustomization.yaml');
/** Files with their own shape, checked by their own rules below. */
const NOT_KUBERNETES_OBJECTS = new Set([COMPOSE_FILE, TOKENS_FILE, KUSTOMIZATION_FILE]);
const MANIFESTS = ALL_YAML.filter((file) => !NOT_KUBERNETES_OBJECTS.has(file)).flatMap(loadYaml);

function manifest(kind: string, name: string): unknown {
  const found = MANIFESTS.filter((d) => get(d.value, 'kind') === kind && get(d.value, 'metadata', 'name') === name);
  if (found.length !== 1) throw new Error(`expected one ${kind} ${name} in deploy/kubernetes, found ${found.length}`);
  return found[0]?.value;
}

const ofKind = (kind: string): unknown[] => MANIFESTS.filter((d) => get(d.value, 'kind') === kind).map((d) => d.value);

// ---------------------------------------------------------------------------------------------
// What the code offers: environment variables, entry points, routes.

/** Every variable the configuration reads (libs/config is the only reader of process.env). */
function variablesReadByConfig(): Set<string> {
  const dir = join(ROOT, 'libs/config/src');
  const names = new Set<string>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts'))) {
    for (const match of readFileSync(join(dir, file), 'utf8').matchAll(/\benv(?:\[\s*|,\s*)'([A-Z][A-Z0-9_]*)'/g)) {
      if (match[1]) names.add(match[1]);
    }
  }
  return names;
}

/** The variables the deployment relies on; each must be one the configuration really reads. */
const DOCUMENTED_VARIABLES = [
  'DATABASE_URL',
  'REDIS_URL',
  'PORT',
  'HOST',
  'LOG_LEVEL',
  'TOKENS_FILE',
  'QUOTA_LEDGER_INSECURE_DEV',
  'TLS_CERT_FILE',
  'TLS_KEY_FILE',
  'TLS_CLIENT_CA_FILE',
  'METRICS_PORT',
  'INVENTORY_SOURCE',
  'INVENTORY_IN_CLUSTER',
] as const;
const CONFIG_VARIABLES = variablesReadByConfig();
/** A manifest may set only what the apps read: anything else is a typo that silently does nothing. */
const ALLOWED_VARIABLES = new Set([...CONFIG_VARIABLES, ...DOCUMENTED_VARIABLES]);
/** Node's own, set by the image. */
const IMAGE_VARIABLES = new Set([...ALLOWED_VARIABLES, 'NODE_ENV']);

const API_MAIN = 'dist/apps/admission-api/src/main.js';
/** The heap the API runs with wherever it is started (bench/lib/service.ts API_NODE_ARGS: sized for its 512Mi container). */
const API_HEAP = ['--max-old-space-size=256', '--max-semi-space-size=8'];
const MIGRATE = 'dist/apps/admission-api/src/migrate.js';
const PROJECTION_MAIN = 'dist/apps/projection-worker/src/main.js';
const RECONCILER_MAIN = 'dist/apps/reconciler/src/main.js';

/** Problems with a command that should run a compiled entry point of this repository. */
function commandProblems(where: string, command: readonly unknown[]): string[] {
  const script = command.find((part): part is string => typeof part === 'string' && part.endsWith('.js'));
  if (command[0] !== 'node' || script === undefined) return [`${where}: command ${JSON.stringify(command)} does not run "node <script>.js"`];
  const match = /^(?:\/app\/)?dist\/((?:apps|libs)\/.+)\.js$/.exec(script);
  if (!match?.[1]) return [`${where}: ${script} is not a build output under dist/apps or dist/libs`];
  const source = `${match[1]}.ts`;
  return existsSync(join(ROOT, source)) ? [] : [`${where}: ${script} has no source ${source}, so the build will not produce it`];
}

/** The routes a Nest controller declares, as `/prefix/route`. */
function controllerRoutes(file: string, method: 'Get' | 'Post'): Set<string> {
  const source = readFileSync(join(ROOT, file), 'utf8');
  const prefix = /@Controller\(\s*(?:'([^']*)')?\s*\)/.exec(source)?.[1] ?? '';
  const routes = new Set<string>();
  for (const match of source.matchAll(new RegExp(`@${method}\\(\\s*'([^']*)'\\s*\\)`, 'g'))) {
    routes.add(posix.join('/', prefix, match[1] ?? ''));
  }
  return routes;
}

const WEBHOOK_ROUTES = controllerRoutes('apps/admission-api/src/admission-review/admission-review.controller.ts', 'Post');
const HEALTH_ROUTES = controllerRoutes('apps/admission-api/src/health/health.controller.ts', 'Get');

// ---------------------------------------------------------------------------------------------
// Rules for Kubernetes objects.

function objectProblems(where: string, value: unknown): string[] {
  const problems: string[] = [];
  if (!asText(get(value, 'apiVersion'))) problems.push(`${where}: no apiVersion`);
  if (!asText(get(value, 'kind'))) problems.push(`${where}: no kind`);
  if (!asText(get(value, 'metadata', 'name'))) problems.push(`${where}: no metadata.name`);
  return problems;
}

type Role = 'api' | 'worker' | 'init';

function envEntries(container: unknown): Json[] {
  return asList(get(container, 'env')).map(asObject);
}

function envValue(container: unknown, name: string): string | undefined {
  return asText(envEntries(container).find((e) => e['name'] === name)?.['value']);
}

/** A probe's port, by number or by the container port's name. */
function probePort(container: unknown, probe: unknown): number | undefined {
  const port = get(probe, 'httpGet', 'port');
  if (typeof port === 'number') return port;
  const named = asList(get(container, 'ports')).find((p) => get(p, 'name') === port);
  const number = get(named, 'containerPort');
  return typeof number === 'number' ? number : undefined;
}

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
      if (probePort(container, probe) !== port) problems.push(`${name}: ${label} is not on the API port ${port}`);
      // An HTTP probe of an HTTPS port fails the TLS handshake: the pod never becomes ready.
      if (tls && get(probe, 'httpGet', 'scheme') !== 'HTTPS') problems.push(`${name}: ${label} must use scheme HTTPS (TLS is on)`);
    }
  } else if (role === 'worker') {
    if (!liveness) problems.push(`${name}: no livenessProbe`);
    else {
      const metricsPort = Number(envValue(container, 'METRICS_PORT') ?? 9464);
      if (get(liveness, 'httpGet', 'path') !== '/healthz') problems.push(`${name}: livenessProbe does not GET /healthz`);
      if (probePort(container, liveness) !== metricsPort) problems.push(`${name}: livenessProbe is not on METRICS_PORT ${metricsPort}`);
      if (metricsPort === 0) problems.push(`${name}: METRICS_PORT 0 closes the port its livenessProbe needs`);
    }
  } else if (liveness || readiness) {
    problems.push(`${name}: init containers cannot have probes`);
  }

  for (const entry of envEntries(container)) {
    const variable = asText(entry['name']) ?? '';
    if (!ALLOWED_VARIABLES.has(variable)) problems.push(`${name}: sets ${variable}, which no app reads`);
    if (/URL$/.test(variable) && entry['value'] !== undefined) problems.push(`${name}: ${variable} is a literal; connection strings hold credentials and come from a Secret`);
    if (/URL$/.test(variable) && get(entry, 'valueFrom', 'secretKeyRef', 'name') === undefined) problems.push(`${name}: ${variable} does not come from a secretKeyRef`);
  }

  problems.push(...commandProblems(name, [...asList(get(container, 'command')), ...asList(get(container, 'args'))]));
  return problems;
}

/** The app a Deployment must run, by its name. */
const DEPLOYMENTS: Readonly<Record<string, { readonly main: string; readonly role: Role }>> = {
  'quota-ledger-api': { main: API_MAIN, role: 'api' },
  'quota-ledger-projection-worker': { main: PROJECTION_MAIN, role: 'worker' },
  'quota-ledger-reconciler': { main: RECONCILER_MAIN, role: 'worker' },
};

function deploymentProblems(deployment: unknown): string[] {
  const name = asText(get(deployment, 'metadata', 'name')) ?? '?';
  const where = `Deployment ${name}`;
  const expected = DEPLOYMENTS[name];
  if (!expected) return [`${where}: not one of ${Object.keys(DEPLOYMENTS).join(', ')}`];
  const pod = get(deployment, 'spec', 'template', 'spec');
  const problems: string[] = [];
  const containers = asList(get(pod, 'containers'));
  if (containers.length !== 1) problems.push(`${where}: expected one container, found ${containers.length}`);
  for (const container of containers) {
    problems.push(...containerProblems(where, container, pod, expected.role));
    const command = asList(get(container, 'command'));
    if (!command.includes(expected.main)) problems.push(`${where}: does not run ${expected.main}`);
    if (expected.main === API_MAIN && !API_HEAP.every((flag) => command.includes(flag))) problems.push(`${where}: does not run the API with its heap flags ${API_HEAP.join(' ')}`);
  }
  for (const container of asList(get(pod, 'initContainers'))) problems.push(...containerProblems(where, container, pod, 'init'));
  if (get(pod, 'securityContext', 'runAsNonRoot') !== true) problems.push(`${where}: the pod's securityContext does not set runAsNonRoot`);
  if (get(pod, 'securityContext', 'seccompProfile', 'type') !== 'RuntimeDefault') problems.push(`${where}: no RuntimeDefault seccomp profile (restricted Pod Security)`);

  const selector = asObject(get(deployment, 'spec', 'selector', 'matchLabels'));
  const labels = asObject(get(deployment, 'spec', 'template', 'metadata', 'labels'));
  if (Object.keys(selector).length === 0 || !Object.entries(selector).every(([k, v]) => labels[k] === v)) {
    problems.push(`${where}: spec.selector does not match the pod template's labels`);
  }
  return problems;
}

/** The verbs a reader needs; anything more would let the reconciler change the cluster. */
const READ_VERBS = new Set(['get', 'list', 'watch']);
/** group → resources the reconciler may read: every kind the inventory lists (the domain's one list), plus the Namespaces it records. */
const READABLE: Readonly<Record<string, readonly string[]>> = [...KNOWN_KINDS.map((k) => k.groupResource), { group: '', resource: 'namespaces' }].reduce<Record<string, string[]>>(
  (byGroup, { group, resource }) => ({ ...byGroup, [group]: [...(byGroup[group] ?? []), resource] }),
  {},
);

function clusterRoleProblems(role: unknown): string[] {
  const problems: string[] = [];
  const granted = new Set<string>();
  for (const [index, rule] of asList(get(role, 'rules')).entries()) {
    const where = `ClusterRole rules[${index}]`;
    if (get(rule, 'nonResourceURLs') !== undefined) problems.push(`${where}: grants nonResourceURLs`);
    for (const verb of asList(get(rule, 'verbs'))) {
      if (!READ_VERBS.has(String(verb))) problems.push(`${where}: grants the verb ${String(verb)}; only get, list and watch are allowed`);
    }
    for (const group of asList(get(rule, 'apiGroups'))) {
      for (const resource of asList(get(rule, 'resources'))) {
        const allowed = READABLE[String(group)];
        if (!allowed?.includes(String(resource))) problems.push(`${where}: grants ${String(resource)} in group "${String(group)}", which the reconciler does not read`);
        if (asList(get(rule, 'verbs')).includes('list')) granted.add(`${String(group)}/${String(resource)}`);
      }
    }
  }
  // One forbidden list fails a whole listing, so every kind the inventory lists must be granted.
  for (const { groupResource } of [...KNOWN_KINDS, { groupResource: { group: '', resource: 'namespaces' } }]) {
    if (!granted.has(`${groupResource.group}/${groupResource.resource}`)) problems.push(`ClusterRole: no list on ${groupResource.resource} in group "${groupResource.group}", which the kubernetes inventory lists`);
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Rules for the compose file and the Dockerfile.

function dependsOnOf(service: unknown): Map<string, string | undefined> {
  const raw = get(service, 'depends_on');
  if (Array.isArray(raw)) return new Map(raw.map((target) => [String(target), undefined]));
  return new Map(Object.entries(asObject(raw)).map(([target, spec]) => [target, asText(get(spec, 'condition'))]));
}

function composeEnvironment(service: unknown): Map<string, string> {
  const raw = get(service, 'environment');
  if (Array.isArray(raw)) {
    return new Map(raw.map((line) => String(line).split('=')).map(([key = '', ...rest]) => [key, rest.join('=')]));
  }
  return new Map(Object.entries(asObject(raw)).map(([key, value]) => [key, String(value)]));
}

function composeProblems(compose: unknown): string[] {
  const problems: string[] = [];
  const services = asObject(get(compose, 'services'));
  for (const [name, service] of Object.entries(services)) {
    const where = `compose service ${name}`;
    for (const [target, condition] of dependsOnOf(service)) {
      if (!(target in services)) {
        problems.push(`${where}: depends_on the unknown service ${target}`);
        continue;
      }
      if (condition !== undefined && !['service_started', 'service_healthy', 'service_completed_successfully'].includes(condition)) {
        problems.push(`${where}: depends_on ${target} with the unknown condition ${condition}`);
      }
      // service_healthy on a service without a healthcheck never becomes true: the stack hangs.
      const check = get(services[target], 'healthcheck');
      if (condition === 'service_healthy' && (check === undefined || get(check, 'disable') === true)) {
        problems.push(`${where}: waits for ${target} to be healthy, but ${target} has no healthcheck`);
      }
    }
    const build = get(service, 'build');
    const context = asText(get(build, 'context')) ?? asText(build);
    if (context !== undefined) {
      const dockerfile = asText(get(build, 'dockerfile')) ?? 'Dockerfile';
      if (!existsSync(join(DEPLOY, context, dockerfile))) problems.push(`${where}: the build context ${context} has no ${dockerfile}`);
    }
    const image = asText(get(service, 'image')) ?? '';
    if (context !== undefined || image.startsWith('quota-ledger')) {
      const raw = get(service, 'command');
      const command = Array.isArray(raw) ? raw : asText(raw)?.split(/\s+/) ?? [];
      if (command.length === 0) problems.push(`${where}: no command (every app service names its entry point)`);
      else problems.push(...commandProblems(where, command));
      for (const variable of composeEnvironment(service).keys()) {
        if (!ALLOWED_VARIABLES.has(variable)) problems.push(`${where}: sets ${variable}, which no app reads`);
      }
    }
    for (const volume of asList(get(service, 'volumes'))) {
      const source = typeof volume === 'string' ? volume.split(':')[0] : asText(get(volume, 'source'));
      if (source !== undefined && /^[./]/.test(source) && !existsSync(join(DEPLOY, source))) problems.push(`${where}: mounts ${source}, which does not exist`);
    }
  }
  return problems;
}

interface DockerInstruction {
  readonly keyword: string;
  readonly args: string;
}

function dockerInstructions(text: string): DockerInstruction[] {
  const instructions: DockerInstruction[] = [];
  let pending = '';
  for (const line of text.split('\n')) {
    if (pending === '' && /^\s*(#|$)/.test(line)) continue;
    pending += line.replace(/\\\s*$/, ' ');
    if (/\\\s*$/.test(line)) continue;
    const match = /^\s*([A-Za-z]+)\s+([\s\S]*)$/.exec(pending);
    if (match?.[1]) instructions.push({ keyword: match[1].toUpperCase(), args: (match[2] ?? '').trim() });
    pending = '';
  }
  return instructions;
}

function dockerfileProblems(text: string): string[] {
  const problems: string[] = [];
  const instructions = dockerInstructions(text);
  const stages = instructions.filter((i) => i.keyword === 'FROM');
  if (stages.length < 2) problems.push(`Dockerfile: ${stages.length} FROM stage(s); the build tools must stay out of the runtime image (at least 2)`);
  const stageNames = new Set(stages.map((s) => /\sAS\s+(\S+)/i.exec(s.args)?.[1]).filter((n): n is string => n !== undefined));
  for (const stage of stages) {
    if (!/^node:20[-.\w]*$/.test(stage.args.split(/\s+/)[0] ?? '')) problems.push(`Dockerfile: FROM ${stage.args} is not a node:20 image`);
  }
  for (const copy of instructions.filter((i) => i.keyword === 'COPY')) {
    const from = /--from=(\S+)/.exec(copy.args)?.[1];
    if (from !== undefined && !stageNames.has(from)) problems.push(`Dockerfile: COPY --from=${from} names no stage`);
  }
  for (const run of instructions.filter((i) => i.keyword === 'RUN')) {
    if (/\bnpm ci\b/.test(run.args)) problems.push('Dockerfile: npm ci refuses this lockfile on platforms it lacks optional packages for; use npm install');
  }
  const lastFrom = instructions.lastIndexOf(stages[stages.length - 1] as DockerInstruction);
  const runtime = instructions.slice(lastFrom + 1);
  const user = runtime.filter((i) => i.keyword === 'USER').pop()?.args.split(':')[0];
  if (user === undefined) problems.push('Dockerfile: the runtime stage has no USER, so it runs as root');
  else if (user === 'root' || user === '0') problems.push(`Dockerfile: the runtime stage runs as ${user}`);
  for (const env of runtime.filter((i) => i.keyword === 'ENV')) {
    for (const match of env.args.matchAll(/([A-Z_][A-Z0-9_]*)=/g)) {
      if (match[1] && !IMAGE_VARIABLES.has(match[1])) problems.push(`Dockerfile: ENV ${match[1]} is read by no app`);
    }
  }
  const cmd = runtime.filter((i) => i.keyword === 'CMD').pop();
  if (cmd === undefined) problems.push('Dockerfile: no CMD in the runtime stage');
  else {
    let command: unknown;
    try {
      command = JSON.parse(cmd.args);
    } catch {
      command = undefined;
    }
    // The exec form: with a shell in between, SIGTERM reaches the shell and not node, so the graceful shutdown never runs.
    if (!Array.isArray(command)) problems.push(`Dockerfile: CMD ${cmd.args} is not in exec (JSON array) form`);
    else problems.push(...commandProblems('Dockerfile CMD', command));
  }
  if (!runtime.some((i) => i.keyword === 'EXPOSE' && i.args.split(/\s+/).includes('8080'))) problems.push('Dockerfile: the runtime stage does not EXPOSE 8080');
  return problems;
}

// ---------------------------------------------------------------------------------------------

const clone = <T>(value: T): T => structuredClone(value);

/** The one container of a Deployment in a (cloned) manifest, to break it in a test. */
function firstContainer(deployment: unknown): Json {
  const container = get(deployment, 'spec', 'template', 'spec', 'containers', 0);
  if (!isObject(container)) throw new Error('no container');
  return container;
}

describe('deploy/: every YAML file parses', () => {
  it('finds the manifests, the compose file and the example tokens', () => {
    const names = ALL_YAML.map((f) => relative(ROOT, f));
    expect(names).toEqual(
      expect.arrayContaining([
        'deploy/compose.yaml',
        'deploy/tokens.example.yaml',
        'deploy/kubernetes/namespace.yaml',
        'deploy/kubernetes/rbac.yaml',
        'deploy/kubernetes/api.yaml',
        'deploy/kubernetes/projection-worker.yaml',
        'deploy/kubernetes/reconciler.yaml',
        'deploy/kubernetes/kustomization.yaml',
      ]),
    );
    for (const file of ALL_YAML) expect(() => loadYaml(file), relative(ROOT, file)).not.toThrow();
  });
});

describe('deploy/kubernetes', () => {
  it('every document has apiVersion, kind and metadata.name', () => {
    expect(MANIFESTS.length).toBeGreaterThan(0);
    expect(MANIFESTS.flatMap((d) => objectProblems(d.where, d.value))).toEqual([]);
  });

  it('a document without metadata.name is reported', () => {
    expect(objectProblems('x.yaml', { apiVersion: 'v1', kind: 'Service', metadata: {} })).toEqual(['x.yaml: no metadata.name']);
  });

  it('every namespaced object lives in the quota-ledger namespace the webhook leaves out', () => {
    const clusterScoped = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding']);
    const misplaced = MANIFESTS.filter((d) => !clusterScoped.has(String(get(d.value, 'kind'))) && get(d.value, 'metadata', 'namespace') !== 'quota-ledger');
    expect(misplaced.map((d) => d.where)).toEqual([]);
    expect(get(manifest('Namespace', 'quota-ledger'), 'kind')).toBe('Namespace');
  });

  it('the kustomization lists every manifest, and only files that exist', () => {
    const [kustomization] = loadYaml(KUSTOMIZATION_FILE);
    const resources = asList(get(kustomization?.value, 'resources')).map(String);
    for (const resource of resources) expect(existsSync(join(KUBERNETES, resource)), resource).toBe(true);
    const manifests = yamlFilesUnder(KUBERNETES)
      .filter((f) => f !== KUSTOMIZATION_FILE)
      .map((f) => relative(KUBERNETES, f));
    expect([...resources].sort()).toEqual([...manifests].sort());
    expect(get(kustomization?.value, 'namespace')).toBe('quota-ledger');
  });

  it('runs each of the three apps in exactly one Deployment', () => {
    const deployments = ofKind('Deployment');
    expect(deployments.map((d) => get(d, 'metadata', 'name')).sort()).toEqual(Object.keys(DEPLOYMENTS).sort());
  });

  it('every Deployment runs non-root, with resources, probes and only variables the apps read', () => {
    expect(ofKind('Deployment').flatMap(deploymentProblems)).toEqual([]);
  });

  describe('the Deployment rules bite', () => {
    const api = (): unknown => clone(manifest('Deployment', 'quota-ledger-api'));
    const worker = (): unknown => clone(manifest('Deployment', 'quota-ledger-reconciler'));

    it('a container without a resources block fails', () => {
      const broken = worker();
      delete firstContainer(broken)['resources'];
      expect(deploymentProblems(broken).join('\n')).toMatch(/no resources\.requests\.cpu/);
    });

    it('a container that may run as root fails', () => {
      const broken = api();
      const container = firstContainer(broken);
      container['securityContext'] = { ...asObject(container['securityContext']), runAsNonRoot: false, runAsUser: 0 };
      const problems = deploymentProblems(broken).join('\n');
      expect(problems).toMatch(/may run as root/);
      expect(problems).toMatch(/runAsUser 0/);
    });

    it('a writable root filesystem or kept capabilities fail', () => {
      const broken = worker();
      firstContainer(broken)['securityContext'] = { runAsNonRoot: true, allowPrivilegeEscalation: false };
      const problems = deploymentProblems(broken).join('\n');
      expect(problems).toMatch(/readOnlyRootFilesystem/);
      expect(problems).toMatch(/drop ALL/);
    });

    it('the API without a readiness probe fails', () => {
      const broken = api();
      delete firstContainer(broken)['readinessProbe'];
      expect(deploymentProblems(broken).join('\n')).toMatch(/no readinessProbe/);
    });

    it('an API probe over plain HTTP fails once TLS is on', () => {
      const broken = api();
      const probe = asObject(firstContainer(broken)['livenessProbe']);
      probe['httpGet'] = { ...asObject(probe['httpGet']), scheme: 'HTTP' };
      expect(deploymentProblems(broken).join('\n')).toMatch(/livenessProbe must use scheme HTTPS/);
    });

    it('a readiness probe of a path the API does not serve fails', () => {
      const broken = api();
      const probe = asObject(firstContainer(broken)['readinessProbe']);
      probe['httpGet'] = { ...asObject(probe['httpGet']), path: '/ready' };
      expect(deploymentProblems(broken).join('\n')).toMatch(/does not GET \/readyz/);
    });

    it('a worker without a liveness probe, or probing another port than METRICS_PORT, fails', () => {
      const missing = worker();
      delete firstContainer(missing)['livenessProbe'];
      expect(deploymentProblems(missing).join('\n')).toMatch(/no livenessProbe/);
      const elsewhere = worker();
      const probe = asObject(firstContainer(elsewhere)['livenessProbe']);
      probe['httpGet'] = { path: '/healthz', port: 8080 };
      expect(deploymentProblems(elsewhere).join('\n')).toMatch(/not on METRICS_PORT 9464/);
    });

    it('a misspelt variable fails', () => {
      const broken = worker();
      const container = firstContainer(broken);
      container['env'] = [...asList(container['env']), { name: 'INVENTORY_SOURSE', value: 'kubernetes' }];
      expect(deploymentProblems(broken).join('\n')).toMatch(/sets INVENTORY_SOURSE, which no app reads/);
    });

    it('a literal DATABASE_URL fails', () => {
      const broken = worker();
      const container = firstContainer(broken);
      container['env'] = asList(container['env']).map((e) => (get(e, 'name') === 'DATABASE_URL' ? { name: 'DATABASE_URL', value: 'postgres://u:p@db/q' } : e));
      expect(deploymentProblems(broken).join('\n')).toMatch(/DATABASE_URL is a literal/);
    });

    it('a command whose script the build does not produce fails', () => {
      const broken = worker();
      firstContainer(broken)['command'] = ['node', 'dist/apps/reconciler/src/mian.js'];
      const problems = deploymentProblems(broken).join('\n');
      expect(problems).toMatch(/has no source apps\/reconciler\/src\/mian\.ts/);
      expect(problems).toMatch(/does not run dist\/apps\/reconciler\/src\/main\.js/);
    });
  });

  describe('the API', () => {
    const deployment = manifest('Deployment', 'quota-ledger-api');
    const pod = get(deployment, 'spec', 'template', 'spec');
    const container = firstContainer(deployment);
    const mounts = asList(container['volumeMounts']).map(asObject);
    const volumes = asList(get(pod, 'volumes')).map(asObject);

    /** The Secret mounted at the directory holding this file, or undefined. */
    function secretHolding(file: string): { secret: string | undefined; subPath: unknown } | undefined {
      const mount = mounts.find((m) => m['mountPath'] === posix.dirname(file));
      if (!mount) return undefined;
      const volume = volumes.find((v) => v['name'] === mount['name']);
      return { secret: asText(get(volume, 'secret', 'secretName')), subPath: mount['subPath'] };
    }

    it('runs 2 replicas and migrates in an initContainer before starting', () => {
      expect(get(deployment, 'spec', 'replicas')).toBe(2);
      const init = asList(get(pod, 'initContainers'));
      expect(init.map((c) => asList(get(c, 'command')))).toEqual([['node', MIGRATE]]);
      expect(asList(container['command'])).not.toContain(MIGRATE);
    });

    it('reads its certificate from the quota-ledger-tls Secret, mounted whole so renewals reach it', () => {
      expect(envValue(container, 'TLS_CERT_FILE')).toBe('/tls/tls.crt');
      expect(envValue(container, 'TLS_KEY_FILE')).toBe('/tls/tls.key');
      expect(secretHolding('/tls/tls.crt')).toEqual({ secret: 'quota-ledger-tls', subPath: undefined });
    });

    it('reads TOKENS_FILE from a mounted Secret, and is never started insecure', () => {
      const tokens = envValue(container, 'TOKENS_FILE');
      expect(tokens).toBeDefined();
      expect(secretHolding(tokens ?? '')).toEqual({ secret: 'quota-ledger-tokens', subPath: undefined });
      expect(envValue(container, 'QUOTA_LEDGER_INSECURE_DEV')).toBeUndefined();
    });

    it('takes DATABASE_URL and REDIS_URL from the quota-ledger-db Secret, Redis optionally', () => {
      const refs = Object.fromEntries(envEntries(container).map((e) => [e['name'], get(e, 'valueFrom', 'secretKeyRef')]));
      expect(refs['DATABASE_URL']).toMatchObject({ name: 'quota-ledger-db' });
      expect(refs['REDIS_URL']).toMatchObject({ name: 'quota-ledger-db', optional: true });
    });

    it('is reached through the Service quota-ledger on 443, which selects its pods and reaches its port', () => {
      const service = manifest('Service', 'quota-ledger');
      const port = asList(get(service, 'spec', 'ports')).find((p) => get(p, 'port') === 443);
      expect(port).toBeDefined();
      const target = get(port, 'targetPort');
      const containerPort = asList(container['ports']).find((p) => get(p, 'name') === target || get(p, 'containerPort') === target);
      expect(get(containerPort, 'containerPort')).toBe(Number(envValue(container, 'PORT') ?? 8080));
      const labels = asObject(get(deployment, 'spec', 'template', 'metadata', 'labels'));
      const selector = asObject(get(service, 'spec', 'selector'));
      expect(Object.entries(selector).every(([k, v]) => labels[k] === v)).toBe(true);
    });

    it('has a PodDisruptionBudget that keeps at least one of its pods', () => {
      const budgets = ofKind('PodDisruptionBudget');
      const labels = asObject(get(deployment, 'spec', 'template', 'metadata', 'labels'));
      const mine = budgets.filter((b) => Object.entries(asObject(get(b, 'spec', 'selector', 'matchLabels'))).every(([k, v]) => labels[k] === v));
      expect(mine).toHaveLength(1);
      const minAvailable = get(mine[0], 'spec', 'minAvailable');
      expect(typeof minAvailable === 'number' ? minAvailable : 0).toBeGreaterThanOrEqual(1);
      expect(minAvailable).toBeLessThan(Number(get(deployment, 'spec', 'replicas')));
    });
  });

  describe('the reconciler', () => {
    const deployment = manifest('Deployment', 'quota-ledger-reconciler');
    const container = firstContainer(deployment);

    it('lists the cluster in-cluster, with the ServiceAccount bound to the ClusterRole', () => {
      expect(envValue(container, 'INVENTORY_SOURCE')).toBe('kubernetes');
      expect(envValue(container, 'INVENTORY_IN_CLUSTER')).toBe('true');
      const account = get(deployment, 'spec', 'template', 'spec', 'serviceAccountName');
      expect(account).toBe('quota-ledger-reconciler');
      expect(get(deployment, 'spec', 'template', 'spec', 'automountServiceAccountToken')).not.toBe(false);
      expect(get(manifest('ServiceAccount', 'quota-ledger-reconciler'), 'metadata', 'namespace')).toBe('quota-ledger');
      const binding = manifest('ClusterRoleBinding', 'quota-ledger-reconciler');
      expect(get(binding, 'roleRef')).toMatchObject({ kind: 'ClusterRole', name: 'quota-ledger-reconciler' });
      expect(asList(get(binding, 'subjects'))).toContainEqual({ kind: 'ServiceAccount', name: account, namespace: 'quota-ledger' });
    });

    it('runs 1 or 2 replicas', () => {
      expect([1, 2]).toContain(get(deployment, 'spec', 'replicas'));
    });
  });

  describe('the ClusterRole', () => {
    const role = manifest('ClusterRole', 'quota-ledger-reconciler');

    it('grants only get/list/watch, on what the reconciler reads, and all of it', () => {
      expect(clusterRoleProblems(role)).toEqual([]);
    });

    it('a write verb fails', () => {
      const broken = clone(role) as Json;
      broken['rules'] = [...asList(broken['rules']), { apiGroups: [''], resources: ['pods'], verbs: ['delete'] }];
      expect(clusterRoleProblems(broken).join('\n')).toMatch(/grants the verb delete/);
    });

    it('a wildcard or an unrelated resource fails', () => {
      const broken = clone(role) as Json;
      broken['rules'] = [...asList(broken['rules']), { apiGroups: ['*'], resources: ['*'], verbs: ['get'] }];
      expect(clusterRoleProblems(broken).join('\n')).toMatch(/grants \* in group "\*"/);
    });

    it('a role without list on namespaces fails: the reconciler records the cluster\'s Namespaces', () => {
      const broken = clone(role) as Json;
      broken['rules'] = asList(broken['rules']).map((r) => ({ ...(r as Json), resources: asList(get(r, 'resources')).filter((x) => x !== 'namespaces') }));
      expect(clusterRoleProblems(broken).join('\n')).toMatch(/no list on namespaces in group ""/);
    });

    it('a kind the inventory lists but the role does not grant fails', () => {
      const broken = clone(role) as Json;
      broken['rules'] = asList(broken['rules']).filter((r) => !asList(get(r, 'apiGroups')).includes('batch'));
      expect(clusterRoleProblems(broken).join('\n')).toMatch(/no list on jobs in group "batch"/);
    });
  });
});

describe('deploy/compose.yaml', () => {
  const [loaded] = loadYaml(COMPOSE_FILE);
  const compose = loaded?.value;
  const services = asObject(get(compose, 'services'));

  it('has the six services, each depending only on services that exist', () => {
    expect(Object.keys(services).sort()).toEqual(['api', 'migrate', 'postgres', 'projection-worker', 'reconciler', 'redis']);
    expect(composeProblems(compose)).toEqual([]);
  });

  it('migrates once, after PostgreSQL is healthy, and starts the API only after a successful migration', () => {
    expect(get(services['migrate'], 'command')).toEqual(['node', MIGRATE]);
    expect(get(services['migrate'], 'restart')).toBe('no');
    expect(dependsOnOf(services['migrate']).get('postgres')).toBe('service_healthy');
    expect(String(asList(get(services['postgres'], 'healthcheck', 'test')).join(' '))).toMatch(/pg_isready/);
    for (const app of ['api', 'projection-worker', 'reconciler']) {
      expect(dependsOnOf(services[app]).get('migrate'), app).toBe('service_completed_successfully');
    }
  });

  it('publishes the API on 8080 with the example tokens mounted read-only', () => {
    const api = services['api'];
    expect(asList(get(api, 'ports'))).toContain('8080:8080');
    const environment = composeEnvironment(api);
    expect(environment.get('HOST')).toBe('0.0.0.0');
    expect(environment.get('TOKENS_FILE')).toBe('/config/tokens.yaml');
    expect(environment.get('DATABASE_URL')).toMatch(/^postgres(ql)?:\/\/[^@]+@postgres:5432\//);
    expect(environment.get('REDIS_URL')).toMatch(/^redis:\/\/redis:6379/);
    expect(asList(get(api, 'volumes'))).toContain('./tokens.example.yaml:/config/tokens.yaml:ro');
  });

  it('builds every app service from the repository root and runs the reconciler without an inventory', () => {
    for (const app of ['migrate', 'api', 'projection-worker', 'reconciler']) {
      expect(get(services[app], 'build', 'context'), app).toBe('..');
    }
    expect(composeEnvironment(services['reconciler']).get('INVENTORY_SOURCE')).toBe('none');
  });

  it('an unknown depends_on target fails', () => {
    const broken = clone(compose) as Json;
    const api = asObject(get(broken, 'services', 'api'));
    api['depends_on'] = { ...asObject(api['depends_on']), databse: { condition: 'service_started' } };
    expect(composeProblems(broken).join('\n')).toMatch(/depends_on the unknown service databse/);
  });

  it('waiting for a service without a healthcheck to be healthy fails', () => {
    const broken = clone(compose) as Json;
    delete asObject(get(broken, 'services', 'postgres'))['healthcheck'];
    expect(composeProblems(broken).join('\n')).toMatch(/waits for postgres to be healthy, but postgres has no healthcheck/);
  });

  it('a command whose script does not exist, or a variable no app reads, fails', () => {
    const broken = clone(compose) as Json;
    const worker = asObject(get(broken, 'services', 'projection-worker'));
    worker['command'] = ['node', 'dist/apps/projection/src/main.js'];
    worker['environment'] = { ...asObject(worker['environment']), METRIC_PORT: '9464' };
    const problems = composeProblems(broken).join('\n');
    expect(problems).toMatch(/has no source apps\/projection\/src\/main\.ts/);
    expect(problems).toMatch(/sets METRIC_PORT/);
  });
});

describe('deploy/tokens.example.yaml', () => {
  const text = readFileSync(TOKENS_FILE, 'utf8');

  it('is a tokens file the API accepts, with an entry for each role', () => {
    const set = TokenSet.parse(text, TOKENS_FILE);
    const [loaded] = loadYaml(TOKENS_FILE);
    const roles = new Set(asList(get(loaded?.value, 'tokens')).flatMap((t) => asList(get(t, 'roles'))));
    expect([...roles].sort()).toEqual([...ROLES].sort());
    expect(set.size).toBe(asList(get(loaded?.value, 'tokens')).length);
  });

  it('explains how to make a token and says the examples must never be used', () => {
    expect(text).toMatch(/openssl rand -hex 32/);
    expect(text).toMatch(/printf %s "?\$?TOKEN"? \| sha256sum/);
    expect(text).toMatch(/never use/i);
  });

  it('each example digest is the sha-256 of the example token written beside it', () => {
    const pairs = [...text.matchAll(/#\s*token:\s*(\S+)[\s\S]*?sha256:\s*"([0-9a-f]{64})"/g)];
    expect(pairs).toHaveLength(ROLES.length);
    const set = TokenSet.parse(text, TOKENS_FILE);
    for (const [, token = '', digest] of pairs) {
      expect(token).toMatch(/example/);
      expect(sha256Hex(token)).toBe(digest);
      expect(set.authenticate(token)).toBeDefined();
    }
  });
});

describe('Dockerfile', () => {
  const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');

  it('builds in one stage and runs as a non-root user in another, the API by default', () => {
    expect(dockerfileProblems(text)).toEqual([]);
    const cmd = dockerInstructions(text).filter((i) => i.keyword === 'CMD').pop();
    expect(JSON.parse(cmd?.args ?? '[]')).toEqual(['node', ...API_HEAP, API_MAIN]);
  });

  it('copies exactly what the build compiles (tsconfig.build.json includes)', () => {
    const build = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8')) as { include?: string[] };
    const copied = dockerInstructions(text)
      .filter((i) => i.keyword === 'COPY' && !i.args.includes('--from'))
      .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    for (const include of build.include ?? []) expect(copied, include).toContain(include);
  });

  it('a single stage fails', () => {
    const single = text.replace(/^FROM node:20-bookworm-slim AS build\n[\s\S]*?(?=^FROM )/m, '').replace(/^COPY --from=build .*$/gm, '');
    expect(dockerfileProblems(single).join('\n')).toMatch(/1 FROM stage/);
  });

  it('running as root, or no USER at all, fails', () => {
    expect(dockerfileProblems(text.replace(/^USER .*$/m, 'USER root')).join('\n')).toMatch(/runs as root/);
    expect(dockerfileProblems(text.replace(/^USER .*$/m, '')).join('\n')).toMatch(/has no USER/);
  });

  it('npm ci, or a shell-form CMD, fails', () => {
    expect(dockerfileProblems(text.replace('RUN npm install', 'RUN npm ci')).join('\n')).toMatch(/npm ci refuses/);
    expect(dockerfileProblems(text.replace(/^CMD .*$/m, `CMD node ${API_MAIN}`)).join('\n')).toMatch(/exec \(JSON array\) form/);
  });

  it('.dockerignore keeps local outputs and the git history out of the build context', () => {
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', '.git', '.quota-ledger', 'coverage', 'bench/results', 'test/e2e/screenshots']));
  });
});

describe('the environment the artifacts rely on', () => {
  it('every documented variable is one the configuration reads', () => {
    expect(DOCUMENTED_VARIABLES.filter((v) => !CONFIG_VARIABLES.has(v))).toEqual([]);
  });
});

describe('the generated webhook configuration', () => {
  const service = manifest('Service', 'quota-ledger');
  const namespace = asText(get(service, 'metadata', 'namespace')) ?? '';
  const name = asText(get(service, 'metadata', 'name')) ?? '';
  const caBundlePem = '-----BEGIN CERTIFICATE-----\nMIIBexampleCAexampleCA\n-----END CERTIFICATE-----\n';
  const [mutating, validating] = webhookConfiguration({ caBundlePem, service: { namespace, name, port: 443 } });
  const webhooks = [...mutating.webhooks, ...validating.webhooks];

  it('carries the CA bundle in base64, decoding to the PEM it was given', () => {
    for (const webhook of webhooks) expect(Buffer.from(webhook.clientConfig.caBundle, 'base64').toString('utf8')).toBe(caBundlePem);
  });

  it("points at the API's real webhook routes, through the Service of api.yaml", () => {
    expect(WEBHOOK_ROUTES).toEqual(new Set([MUTATE_PATH, VALIDATE_PATH]));
    expect(mutating.webhooks[0]?.clientConfig.service).toEqual({ namespace, name, port: 443, path: MUTATE_PATH });
    expect(validating.webhooks[0]?.clientConfig.service).toEqual({ namespace, name, port: 443, path: VALIDATE_PATH });
    const ports = asList(get(service, 'spec', 'ports')).map((p) => get(p, 'port'));
    for (const webhook of webhooks) expect(ports).toContain(webhook.clientConfig.service?.port);
  });

  it("leaves out the API's own namespace, so a failurePolicy of Fail cannot block its pods", () => {
    const deploymentNamespace = get(manifest('Deployment', 'quota-ledger-api'), 'metadata', 'namespace');
    for (const webhook of webhooks) {
      expect(webhook.namespaceSelector.matchExpressions).toContainEqual(expect.objectContaining({ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: expect.arrayContaining([deploymentNamespace, 'kube-system']) }));
    }
  });

  it('validates every kind the reconciler lists, except ResourceQuota objects themselves', () => {
    const covered = new Set(validating.webhooks[0]?.rules.flatMap((r) => r.apiGroups.flatMap((g) => r.resources.map((res) => `${g}/${res}`))));
    const missing = KNOWN_KINDS.filter((k) => k.groupResource.resource !== 'resourcequotas')
      .map((k) => `${k.groupResource.group}/${k.groupResource.resource}`)
      .filter((gr) => !covered.has(gr));
    expect(missing).toEqual([]);
  });

  it('keeps the timeout within the API server limit and above the longest database statement', () => {
    // A webhook timeout shorter than a statement turns a slow decision into the failurePolicy
    // instead of the API's own 503 (README: keep timeoutSeconds above STATEMENT_TIMEOUT_MS).
    const statementMs = Number(envValue(firstContainer(manifest('Deployment', 'quota-ledger-api')), 'STATEMENT_TIMEOUT_MS') ?? 5000);
    for (const webhook of webhooks) {
      expect(webhook.timeoutSeconds).toBeLessThanOrEqual(30);
      expect(webhook.timeoutSeconds * 1000).toBeGreaterThan(statementMs);
    }
  });
});
