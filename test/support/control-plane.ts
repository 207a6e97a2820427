import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestPki, type IssueOptions } from './certificates.js';
import { writeAdmissionConfiguration, writeKubeconfig, type AdmissionConfiguration } from './kubeconfig.js';
import { kubectlFor, tokenFor, untilServiceAccount, type Kubectl, type TryKubectl } from './kubectl.js';
import { freePort } from './processes.js';
import { startJanitor, supervise, type Janitor, type Supervised } from './supervised.js';

/**
 * A real Kubernetes control plane for tests, in the manner of controller-runtime's envtest: etcd,
 * kube-apiserver and optionally kube-controller-manager, built from their Go modules by
 * test/kubernetes/build.sh at the versions of test/kubernetes/versions.env. Everything is on
 * 127.0.0.1, on free ports, in one temporary directory; no kubelet, so pods stay Pending.
 */

const VERSIONS_FILE = fileURLToPath(new URL('../kubernetes/versions.env', import.meta.url));
const SERVICE_CLUSTER_IP_RANGE = '10.0.0.0/24';
const SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';

/** versions.env's KEY=value lines. */
export function kubernetesVersions(): Record<string, string> {
  const versions: Record<string, string> = {};
  for (const line of readFileSync(VERSIONS_FILE, 'utf8').split('\n')) {
    const match = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (match?.[1] && match[2] !== undefined) versions[match[1]] = match[2];
  }
  return versions;
}

/** Where build.sh leaves kube-apiserver, kube-controller-manager and etcd (KUBERNETES_BIN_DIR overrides). */
export function kubernetesBinDir(): string {
  if (process.env.KUBERNETES_BIN_DIR) return process.env.KUBERNETES_BIN_DIR;
  const cache = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(cache, 'quota-ledger', `kubernetes-${kubernetesVersions().KUBERNETES_VERSION}`, 'bin');
}

export interface ControlPlaneOptions {
  /**
   * kube-controller-manager's --controllers (e.g. ['resourcequota', 'namespace', 'serviceaccount',
   * 'serviceaccount-token', 'clusterrole-aggregation']); none or empty: no controller manager.
   * The aggregated ClusterRoles (admin, edit, view) have no rules without clusterrole-aggregation.
   */
  controllers?: readonly string[];
  admission?: {
    /** --enable-admission-plugins (added to the defaults, which include ResourceQuota). */
    enable?: readonly string[];
    /**
     * --disable-admission-plugins. Default: ServiceAccount, unless the serviceaccount controller
     * runs (as envtest: without it no namespace gets its `default` ServiceAccount, so the plugin
     * would reject every pod that names none).
     */
    disable?: readonly string[];
    /** An AdmissionConfiguration written here (webhook credentials, plugin configuration)... */
    configuration?: AdmissionConfiguration;
    /** ...or the path of one the caller wrote (--admission-control-config-file). */
    configFile?: string;
  };
  /** Appended after the flags set here (for a single-valued flag, the last one wins). */
  apiServerFlags?: readonly string[];
  controllerManagerFlags?: readonly string[];
  etcdFlags?: readonly string[];
  startTimeoutMs?: number;
}

export interface ControlPlane {
  /** https://127.0.0.1:<port> */
  readonly server: string;
  /** The CA that signed the apiserver's serving certificate and every client certificate here. */
  readonly caCert: string;
  /** A kubeconfig for an admin (client certificate, group system:masters). */
  readonly kubeconfig: string;
  readonly dir: string;
  /** What /version reports, e.g. v1.37.2. */
  readonly version: string;
  /** The Go processes (etcd, kube-apiserver, kube-controller-manager if started). */
  readonly pids: readonly number[];
  /** Milliseconds each start step took, and in total. */
  readonly timings: Readonly<Record<string, number>>;
  /** kubectl as the admin; rejects (with its stderr) when it exits non-zero. */
  kubectl: Kubectl;
  /** kubectl as the admin; resolves with its exit code, for the commands expected to fail. */
  tryKubectl: TryKubectl;
  /** kubectl apply -f - */
  apply(manifests: string): Promise<string>;
  /** Creates a namespace; waits for its `default` ServiceAccount when the serviceaccount controller runs. */
  createNamespace(name: string): Promise<void>;
  /**
   * A token (TokenRequest via `kubectl create token`) for a ServiceAccount, created if missing and,
   * with `clusterRole`, bound to that ClusterRole cluster-wide.
   */
  tokenFor(
    serviceAccount: { namespace: string; name: string },
    options?: { clusterRole?: string; durationSeconds?: number },
  ): Promise<string>;
  /** A kubeconfig for this cluster with a bearer token (e.g. one from tokenFor). */
  kubeconfigForToken(name: string, token: string): string;
  /** A certificate signed by this plane's CA (for a webhook's server, another client). */
  issueCertificate(name: string, options: IssueOptions): { cert: string; key: string };
  /** The tail of a process's log: 'etcd', 'kube-apiserver', 'kube-controller-manager'. */
  logs(name: string): string;
  /** SIGTERM, then SIGKILL; removes the directory. */
  stop(): Promise<void>;
}

/** GET over TLS with this plane's CA; answers the status and body, or undefined when nothing listens yet. */
function httpsGet(
  url: string,
  tls: { ca?: Buffer; cert?: Buffer; key?: Buffer; rejectUnauthorized?: boolean },
): Promise<{ status: number; body: string } | undefined> {
  return new Promise((resolve) => {
    const req = request(url, { ...tls, timeout: 2_000 }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', () => resolve(undefined));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

async function waitFor(what: Supervised, ready: () => Promise<boolean>, deadline: number): Promise<void> {
  for (;;) {
    if (what.exited()) throw new Error(`${what.name} exited while starting:\n${what.logTail()}`);
    if (await ready()) return;
    if (Date.now() > deadline) throw new Error(`${what.name} was not ready in time:\n${what.logTail()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Starts a control plane; see ControlPlaneOptions. Reject: it could not start (nothing is left running). */
export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const bin = kubernetesBinDir();
  for (const binary of ['etcd', 'kube-apiserver', ...(options.controllers?.length ? ['kube-controller-manager'] : [])]) {
    if (!existsSync(join(bin, binary))) throw new Error(`no ${binary} in ${bin}: run test/kubernetes/build.sh`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'ql-k8s-'));
  const janitor = startJanitor(dir);
  const processes: Supervised[] = [];
  try {
    return await start(options, bin, dir, janitor, processes);
  } catch (error) {
    await stopAll(processes, dir, janitor);
    throw error;
  }
}

async function stopAll(processes: readonly Supervised[], dir: string, janitor: Janitor): Promise<void> {
  // The apiserver and the controller manager first (together), then their storage.
  const [etcd, ...rest] = processes;
  await Promise.all(rest.map((p) => p.stop()));
  await etcd?.stop();
  janitor.dismiss();
  rmSync(dir, { recursive: true, force: true });
}

async function start(
  options: ControlPlaneOptions,
  bin: string,
  dir: string,
  janitor: Janitor,
  processes: Supervised[],
): Promise<ControlPlane> {
  const started = Date.now();
  const deadline = started + (options.startTimeoutMs ?? 60_000);
  const timings: Record<string, number> = {};
  const step = async <T>(name: string, work: () => Promise<T> | T): Promise<T> => {
    const begun = Date.now();
    const result = await work();
    timings[name] = Date.now() - begun;
    return result;
  };

  const pki = await step('certificates', () => makePki(join(dir, 'pki')));
  const etcdUrl = await step('etcd', () => startEtcd(options, bin, dir, processes, deadline));
  const port = await freePort();
  const server = `https://127.0.0.1:${port}`;
  const kubeconfig = writeKubeconfig(join(dir, 'admin.kubeconfig'), server, pki.caCert, pki.admin);
  const version = await step('kube-apiserver', () => startApiServer(options, bin, dir, processes, { pki, etcdUrl, port, deadline }));
  if (options.controllers?.length) {
    await step('kube-controller-manager', () => startControllerManager(options, bin, dir, processes, { pki, server, deadline }));
  }
  timings.total = Date.now() - started;

  return handle(options, { server, kubeconfig, dir, version, timings, pki, processes, janitor });
}

function handle(
  options: ControlPlaneOptions,
  {
    server,
    kubeconfig,
    dir,
    version,
    timings,
    pki,
    processes,
    janitor,
  }: {
    server: string;
    kubeconfig: string;
    dir: string;
    version: string;
    timings: Record<string, number>;
    pki: Pki;
    processes: Supervised[];
    janitor: Janitor;
  },
): ControlPlane {
  const { kubectl, tryKubectl } = kubectlFor(kubeconfig);
  const runsServiceAccounts = options.controllers?.includes('serviceaccount') ?? false;
  return {
    server,
    caCert: pki.caCert,
    kubeconfig,
    dir,
    version,
    pids: processes.map((p) => p.pid),
    timings,
    kubectl,
    tryKubectl,
    apply: (manifests) => kubectl(['apply', '-f', '-'], manifests),
    createNamespace: async (name) => {
      await kubectl(['create', 'namespace', name]);
      if (runsServiceAccounts) await untilServiceAccount(tryKubectl, name, 'default', Date.now() + 30_000);
    },
    tokenFor: (serviceAccount, tokenOptions = {}) => tokenFor(kubectl, serviceAccount, tokenOptions),
    kubeconfigForToken: (name, token) => writeKubeconfig(join(dir, `${name}.kubeconfig`), server, pki.caCert, { token }),
    issueCertificate: (name, issueOptions) => pki.issue(name, issueOptions),
    logs: (name) => processes.find((p) => p.name === name)?.logTail(16_000) ?? '',
    stop: () => stopAll(processes, dir, janitor),
  };
}

type Pki = ReturnType<typeof makePki>;

function makePki(dir: string) {
  mkdirSync(dir, { recursive: true });
  const pki = createTestPki(dir);
  const serving = pki.issue('kube-apiserver', {
    commonName: 'kube-apiserver',
    dnsNames: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'],
    // 10.0.0.1: the `kubernetes` Service's ClusterIP, the first address of the service range.
    ipAddresses: ['127.0.0.1', '10.0.0.1'],
  });
  const admin = pki.issue('admin', { commonName: 'admin', organization: 'system:masters', client: true });
  // Its own name (RBAC's bootstrap policy knows system:kube-controller-manager) but a member of
  // system:masters: with --use-service-account-credentials=false every controller acts as it.
  const controllerManager = pki.issue('kube-controller-manager', {
    commonName: 'system:kube-controller-manager',
    organization: 'system:masters',
    client: true,
  });
  const serviceAccounts = pki.keyPair('service-accounts');
  return {
    caCert: pki.caCert,
    issue: pki.issue,
    serving,
    serviceAccounts,
    admin: { clientCertificate: admin.cert, clientKey: admin.key },
    controllerManager: { clientCertificate: controllerManager.cert, clientKey: controllerManager.key },
  };
}

async function startEtcd(
  options: ControlPlaneOptions,
  bin: string,
  dir: string,
  processes: Supervised[],
  deadline: number,
): Promise<string> {
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const etcd = supervise(dir, 'etcd', join(bin, 'etcd'), [
    '--name=test',
    `--data-dir=${join(dir, 'etcd')}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=test=${peer}`,
    // A test's data is thrown away: no fsync (as envtest), and little logging.
    '--unsafe-no-fsync=true',
    '--log-level=warn',
    ...(options.etcdFlags ?? []),
  ]);
  processes.push(etcd);
  await waitFor(
    etcd,
    async () => {
      try {
        return (await fetch(`${client}/health`)).ok;
      } catch {
        return false;
      }
    },
    deadline,
  );
  return client;
}

function admissionFlags(options: ControlPlaneOptions, dir: string): string[] {
  const admission = options.admission ?? {};
  const runsServiceAccounts = options.controllers?.includes('serviceaccount') ?? false;
  const disable = admission.disable ?? (runsServiceAccounts ? [] : ['ServiceAccount']);
  const configFile =
    admission.configFile ?? (admission.configuration ? writeAdmissionConfiguration(dir, admission.configuration) : undefined);
  return [
    ...(admission.enable?.length ? [`--enable-admission-plugins=${admission.enable.join(',')}`] : []),
    ...(disable.length ? [`--disable-admission-plugins=${disable.join(',')}`] : []),
    ...(configFile ? [`--admission-control-config-file=${configFile}`] : []),
  ];
}

async function startApiServer(
  options: ControlPlaneOptions,
  bin: string,
  dir: string,
  processes: Supervised[],
  { pki, etcdUrl, port, deadline }: { pki: Pki; etcdUrl: string; port: number; deadline: number },
): Promise<string> {
  const apiserver = supervise(dir, 'kube-apiserver', join(bin, 'kube-apiserver'), [
    `--etcd-servers=${etcdUrl}`,
    '--bind-address=127.0.0.1',
    // The `kubernetes` Service's endpoints would have to be a non-loopback address that no pod
    // will ever reach here (there are no nodes): leave them out.
    '--advertise-address=127.0.0.1',
    '--endpoint-reconciler-type=none',
    `--secure-port=${port}`,
    `--cert-dir=${join(dir, 'kube-apiserver')}`,
    `--tls-cert-file=${pki.serving.cert}`,
    `--tls-private-key-file=${pki.serving.key}`,
    `--client-ca-file=${pki.caCert}`,
    `--service-cluster-ip-range=${SERVICE_CLUSTER_IP_RANGE}`,
    `--service-account-issuer=${SERVICE_ACCOUNT_ISSUER}`,
    `--service-account-key-file=${pki.serviceAccounts.publicKey}`,
    `--service-account-signing-key-file=${pki.serviceAccounts.privateKey}`,
    '--authorization-mode=RBAC',
    '--allow-privileged=true',
    '--profiling=false',
    ...admissionFlags(options, dir),
    ...(options.apiServerFlags ?? []),
  ]);
  processes.push(apiserver);
  const tls = { ca: readFileSync(pki.caCert), cert: readFileSync(pki.admin.clientCertificate), key: readFileSync(pki.admin.clientKey) };
  const base = `https://127.0.0.1:${port}`;
  await waitFor(apiserver, async () => (await httpsGet(`${base}/readyz`, tls))?.status === 200, deadline);
  const version = await httpsGet(`${base}/version`, tls);
  return (JSON.parse(version?.body ?? '{}') as { gitVersion?: string }).gitVersion ?? 'unknown';
}

async function startControllerManager(
  options: ControlPlaneOptions,
  bin: string,
  dir: string,
  processes: Supervised[],
  { pki, server, deadline }: { pki: Pki; server: string; deadline: number },
): Promise<void> {
  const kubeconfig = writeKubeconfig(join(dir, 'kube-controller-manager.kubeconfig'), server, pki.caCert, pki.controllerManager);
  const port = await freePort();
  const controllerManager = supervise(dir, 'kube-controller-manager', join(bin, 'kube-controller-manager'), [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    `--cert-dir=${join(dir, 'kube-controller-manager')}`,
    '--leader-elect=false',
    '--use-service-account-credentials=false',
    `--controllers=${(options.controllers ?? []).join(',')}`,
    // The token controller signs legacy Secret tokens with the apiserver's key, and publishes the CA.
    `--service-account-private-key-file=${pki.serviceAccounts.privateKey}`,
    `--root-ca-file=${pki.caCert}`,
    // Tests wait on quota status: recount every 5 s rather than every 5 min.
    '--resource-quota-sync-period=5s',
    ...(options.controllerManagerFlags ?? []),
  ]);
  processes.push(controllerManager);
  // Its serving certificate is self-signed (in --cert-dir); /healthz says the controllers started.
  await waitFor(
    controllerManager,
    async () => (await httpsGet(`https://127.0.0.1:${port}/healthz`, { rejectUnauthorized: false }))?.status === 200,
    deadline,
  );
}
