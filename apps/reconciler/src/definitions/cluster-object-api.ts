import http from 'node:http';
import https from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import { MANAGED_NAMESPACE_LABEL, MANAGED_SINCE_ANNOTATION, type RegisteredRule } from '@quota/domain';
import { collectionTransport, type WatchTransport } from '@quota/inventory';

/** A kind of cluster object whose objects the reconciler copies into the ledger. */
export interface ObjectKind {
  /** '' for the core group (LimitRange). */
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly kind: string;
  /** Whether its objects live in namespaces (a LedgerQuota) or not (a cluster-wide quota). */
  readonly namespaced: boolean;
}

/** The LedgerQuota kind (deploy/kubernetes/base/ledgerquota-crd.yaml). */
export const LEDGER_QUOTA: ObjectKind = {
  group: 'quota-ledger.io',
  version: 'v1alpha1',
  resource: 'ledgerquotas',
  kind: 'LedgerQuota',
  namespaced: true,
};
/** The LedgerClusterQuota kind (deploy/kubernetes/base/ledgerclusterquota-crd.yaml): the ledger's ClusterResourceQuota. */
export const LEDGER_CLUSTER_QUOTA: ObjectKind = {
  group: 'quota-ledger.io',
  version: 'v1alpha1',
  resource: 'ledgerclusterquotas',
  kind: 'LedgerClusterQuota',
  namespaced: false,
};
/** The LedgerHierarchicalQuota kind (deploy/kubernetes/base/ledgerhierarchicalquota-crd.yaml): the ledger's HierarchicalResourceQuota. */
export const LEDGER_HIERARCHICAL_QUOTA: ObjectKind = {
  group: 'quota-ledger.io',
  version: 'v1alpha1',
  resource: 'ledgerhierarchicalquotas',
  kind: 'LedgerHierarchicalQuota',
  namespaced: true,
};
/** The cluster's own LimitRange (v1): no status, and no controller writes it. */
export const LIMIT_RANGE: ObjectKind = { group: '', version: 'v1', resource: 'limitranges', kind: 'LimitRange', namespaced: true };

/** A cluster object as the API server stores it (only what the sync reads and writes). */
export interface ClusterObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: {
    readonly name: string;
    /** Empty for a cluster-scoped object. */
    readonly namespace: string;
    readonly uid?: string;
    readonly resourceVersion?: string;
    readonly generation?: number;
    readonly labels?: Record<string, string>;
    readonly annotations?: Record<string, string>;
    readonly managedFields?: readonly {
      readonly manager?: string;
      readonly operation?: string;
      readonly time?: string;
      readonly subresource?: string;
    }[];
  };
  readonly spec?: unknown;
  readonly status?: ObjectStatus;
}

/** The status the reconciler writes on the objects of a kind that has one (the ledger's hard and used). */
export interface ObjectStatus {
  readonly hard?: Record<string, string>;
  readonly used?: Record<string, string>;
  readonly observedGeneration?: number;
  readonly conditions?: readonly {
    readonly type: string;
    readonly status: string;
    readonly reason?: string;
    readonly message?: string;
    readonly lastTransitionTime?: string;
  }[];
}

/** What the sync needs of the cluster: every object of a kind, and a write of one's status. */
export interface ClusterObjectApi {
  /** Every object of the kind in the cluster; undefined when the cluster does not serve the kind (CRD not installed). */
  list(): Promise<ClusterObject[] | undefined>;
  /**
   * PUT of the status subresource (optimistic: a 409 means the object changed since it was listed).
   * `written` hears the resourceVersion the write gave the object: its watch event is our own.
   */
  updateStatus(
    object: ClusterObject,
    status: ObjectStatus,
    written?: (resourceVersion: string) => void,
  ): Promise<'updated' | 'conflict' | 'gone'>;
  /** The kind's changes across the cluster, whole objects: each is synced from its event (absent: the sync only polls). */
  readonly changes?: WatchTransport;
}

export interface ClusterObjectApiOptions {
  readonly kubeconfigPath?: string;
  readonly inCluster?: boolean;
  readonly timeoutMs: number;
}

const MAX_BYTES = 64 * 1024 * 1024;

type Call = (method: string, path: string, body?: unknown, contentType?: string) => Promise<{ status: number; body: string }>;

/** Requests to the API server the kubeconfig (or the pod's ServiceAccount) names, with its credentials. */
function apiServer(options: ClusterObjectApiOptions, what: string): { server: string; config: KubeConfig; call: Call } {
  const config = new KubeConfig();
  if (options.inCluster) config.loadFromCluster();
  else if (options.kubeconfigPath) config.loadFromFile(options.kubeconfigPath);
  else config.loadFromDefault();
  const server = (config.getCurrentCluster()?.server ?? '').replace(/\/+$/, '');
  if (!server) throw new Error(`${what}: the kubeconfig names no API server`);
  const call: Call = async (method, path, body, contentType) => {
    const requestOptions: https.RequestOptions = {};
    await config.applyToHTTPSOptions(requestOptions);
    return send(new URL(`${server}${path}`), method, requestOptions, options.timeoutMs, body, contentType);
  };
  return { server, config, call };
}

/**
 * The reconciler's one write to a Namespace: MANAGED_NAMESPACE_LABEL and MANAGED_SINCE_ANNOTATION
 * set (`since`) or removed (null), by a JSON merge patch that touches nothing else (RBAC: `patch`
 * on namespaces; the admission policy of managed-namespace-label.yaml lets it change only these).
 */
export function createNamespaceMarker(
  options: ClusterObjectApiOptions,
): (name: string, since: string | null) => Promise<'patched' | 'gone'> {
  const { call } = apiServer(options, 'namespaces');
  return async (name, since) => {
    const path = `/api/v1/namespaces/${encodeURIComponent(name)}`;
    const patch = {
      metadata: {
        labels: { [MANAGED_NAMESPACE_LABEL]: since === null ? null : 'true' },
        annotations: { [MANAGED_SINCE_ANNOTATION]: since },
      },
    };
    const answer = await call('PATCH', path, patch, 'application/merge-patch+json');
    if (answer.status === 200) return 'patched';
    if (answer.status === 404) return 'gone';
    throw new Error(`namespaces: PATCH ${path}: ${describe(answer)}`);
  };
}

/**
 * The rules of the ValidatingWebhookConfiguration `name` (every webhook's, together), or
 * 'not-found'; any other answer (a 403: RBAC `get` on it is missing) throws with its Status.
 */
export function createWebhookRulesReader(
  options: ClusterObjectApiOptions,
  name: string,
): () => Promise<readonly RegisteredRule[] | 'not-found'> {
  const { call } = apiServer(options, 'validatingwebhookconfigurations');
  const path = `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${encodeURIComponent(name)}`;
  return async () => {
    const answer = await call('GET', path);
    if (answer.status === 404) return 'not-found';
    if (answer.status !== 200) throw new Error(`GET ${path}: ${describe(answer)}`);
    const configuration = JSON.parse(answer.body) as { webhooks?: readonly { rules?: readonly RegisteredRule[] | null }[] | null };
    return (configuration.webhooks ?? []).flatMap((webhook) => webhook.rules ?? []);
  };
}

/** The objects of `kind` in the cluster the reconciler's inventory lists (same credentials). */
export function createClusterObjectApi(kind: ObjectKind, options: ClusterObjectApiOptions): ClusterObjectApi {
  const { server, config, call } = apiServer(options, kind.resource);
  const root = kind.group === '' ? `/api/${kind.version}` : `/apis/${kind.group}/${kind.version}`;
  return {
    changes: collectionTransport({ server, config, timeoutMs: options.timeoutMs }, `${root}/${kind.resource}`, 'whole'),
    async list() {
      const items: ClusterObject[] = [];
      let token: string | undefined;
      do {
        const answer = await call('GET', `${root}/${kind.resource}?limit=500${token ? `&continue=${encodeURIComponent(token)}` : ''}`);
        if (answer.status === 404 && token === undefined) return undefined;
        if (answer.status !== 200) throw new Error(`${kind.resource}: GET ${root}/${kind.resource}: ${describe(answer)}`);
        const list = JSON.parse(answer.body) as { items?: ClusterObject[] | null; metadata?: { continue?: string } };
        items.push(
          ...(list.items ?? []).map((item) => (kind.namespaced ? item : { ...item, metadata: { ...item.metadata, namespace: '' } })),
        );
        token = list.metadata?.continue || undefined;
      } while (token);
      return items;
    },
    async updateStatus(object, status, written) {
      const { name, namespace } = object.metadata;
      const scope = kind.namespaced ? `/namespaces/${encodeURIComponent(namespace)}` : '';
      const path = `${root}${scope}/${kind.resource}/${encodeURIComponent(name)}/status`;
      const apiVersion = kind.group === '' ? kind.version : `${kind.group}/${kind.version}`;
      const answer = await call('PUT', path, { apiVersion, kind: kind.kind, metadata: object.metadata, spec: object.spec, status });
      if (answer.status === 200 || answer.status === 201) {
        const version = resourceVersionIn(answer.body);
        if (version) written?.(version);
        return 'updated';
      }
      if (answer.status === 409) return 'conflict';
      if (answer.status === 404) return 'gone';
      throw new Error(`${kind.resource}: PUT ${path}: ${describe(answer)}`);
    },
  };
}

function resourceVersionIn(body: string): string | undefined {
  try {
    const version = (JSON.parse(body) as { metadata?: { resourceVersion?: unknown } }).metadata?.resourceVersion;
    return typeof version === 'string' && version !== '' ? version : undefined;
  } catch {
    return undefined;
  }
}

function describe(answer: { status: number; body: string }): string {
  try {
    const status = JSON.parse(answer.body) as { kind?: string; message?: string };
    if (status.kind === 'Status' && status.message) return `HTTP ${answer.status}: ${status.message.slice(0, 300)}`;
  } catch {
    // not JSON
  }
  return `HTTP ${answer.status}`;
}

function send(
  url: URL,
  method: string,
  options: https.RequestOptions,
  timeoutMs: number,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers = {
      ...(options.headers as http.OutgoingHttpHeaders | undefined),
      accept: 'application/json',
      ...(payload ? { 'content-type': contentType } : {}),
    };
    const request = (url.protocol === 'https:' ? https.request : http.request)(
      url,
      { ...options, method, headers, signal: AbortSignal.timeout(timeoutMs) },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_BYTES) request.destroy(new Error(`the answer is over the ${MAX_BYTES}-byte limit`));
          else chunks.push(chunk);
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}
