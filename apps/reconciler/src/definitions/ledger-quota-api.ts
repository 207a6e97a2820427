import http from 'node:http';
import https from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';

/** The group, version and plural of the LedgerQuota kind (deploy/kubernetes/base/ledgerquota-crd.yaml). */
export const LEDGER_QUOTA_GROUP = 'quota-ledger.io';
export const LEDGER_QUOTA_VERSION = 'v1alpha1';
export const LEDGER_QUOTA_RESOURCE = 'ledgerquotas';
const ROOT = `/apis/${LEDGER_QUOTA_GROUP}/${LEDGER_QUOTA_VERSION}`;

/** A LedgerQuota as the API server stores it (only what the sync reads and writes). */
export interface LedgerQuotaObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace: string;
    readonly uid?: string;
    readonly resourceVersion?: string;
    readonly generation?: number;
    readonly labels?: Record<string, string>;
    readonly annotations?: Record<string, string>;
    readonly managedFields?: readonly { readonly manager?: string; readonly operation?: string; readonly time?: string; readonly subresource?: string }[];
  };
  readonly spec?: unknown;
  readonly status?: LedgerQuotaStatus;
}

export interface LedgerQuotaStatus {
  readonly hard?: Record<string, string>;
  readonly used?: Record<string, string>;
  readonly observedGeneration?: number;
  readonly conditions?: readonly { readonly type: string; readonly status: string; readonly reason?: string; readonly message?: string; readonly lastTransitionTime?: string }[];
}

/** What the sync needs of the cluster: every LedgerQuota, and a write of one's status. */
export interface LedgerQuotaApi {
  /** Every LedgerQuota in the cluster; undefined when the cluster does not serve the kind (CRD not installed). */
  list(): Promise<LedgerQuotaObject[] | undefined>;
  /** PUT of the status subresource (optimistic: a 409 means the object changed since it was listed). */
  updateStatus(object: LedgerQuotaObject, status: LedgerQuotaStatus): Promise<'updated' | 'conflict' | 'gone'>;
}

export interface LedgerQuotaApiOptions {
  readonly kubeconfigPath?: string;
  readonly inCluster?: boolean;
  readonly timeoutMs: number;
}

const MAX_BYTES = 64 * 1024 * 1024;

/** The LedgerQuota API of the cluster the reconciler's inventory lists (same credentials). */
export function createLedgerQuotaApi(options: LedgerQuotaApiOptions): LedgerQuotaApi {
  const config = new KubeConfig();
  if (options.inCluster) config.loadFromCluster();
  else if (options.kubeconfigPath) config.loadFromFile(options.kubeconfigPath);
  else config.loadFromDefault();
  const server = (config.getCurrentCluster()?.server ?? '').replace(/\/+$/, '');
  if (!server) throw new Error('ledger quotas: the kubeconfig names no API server');
  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: string }> => {
    const requestOptions: https.RequestOptions = {};
    await config.applyToHTTPSOptions(requestOptions);
    return send(new URL(`${server}${path}`), method, requestOptions, options.timeoutMs, body);
  };
  return {
    async list() {
      const items: LedgerQuotaObject[] = [];
      let token: string | undefined;
      do {
        const answer = await call('GET', `${ROOT}/${LEDGER_QUOTA_RESOURCE}?limit=500${token ? `&continue=${encodeURIComponent(token)}` : ''}`);
        if (answer.status === 404 && token === undefined) return undefined;
        if (answer.status !== 200) throw new Error(`ledger quotas: GET ${ROOT}/${LEDGER_QUOTA_RESOURCE}: ${describe(answer)}`);
        const list = JSON.parse(answer.body) as { items?: LedgerQuotaObject[] | null; metadata?: { continue?: string } };
        items.push(...(list.items ?? []));
        token = list.metadata?.continue || undefined;
      } while (token);
      return items;
    },
    async updateStatus(object, status) {
      const { name, namespace } = object.metadata;
      const path = `${ROOT}/namespaces/${encodeURIComponent(namespace)}/${LEDGER_QUOTA_RESOURCE}/${encodeURIComponent(name)}/status`;
      const answer = await call('PUT', path, { apiVersion: `${LEDGER_QUOTA_GROUP}/${LEDGER_QUOTA_VERSION}`, kind: 'LedgerQuota', metadata: object.metadata, spec: object.spec, status });
      if (answer.status === 200 || answer.status === 201) return 'updated';
      if (answer.status === 409) return 'conflict';
      if (answer.status === 404) return 'gone';
      throw new Error(`ledger quotas: PUT ${path}: ${describe(answer)}`);
    },
  };
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

function send(url: URL, method: string, options: https.RequestOptions, timeoutMs: number, body?: unknown): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers = { ...(options.headers as http.OutgoingHttpHeaders | undefined), accept: 'application/json', ...(payload ? { 'content-type': 'application/json' } : {}) };
    const request = (url.protocol === 'https:' ? https.request : http.request)(url, { ...options, method, headers, signal: AbortSignal.timeout(timeoutMs) }, (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BYTES) request.destroy(new Error(`the answer is over the ${MAX_BYTES}-byte limit`));
        else chunks.push(chunk);
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(payload);
  });
}
