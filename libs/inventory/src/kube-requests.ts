import http from 'node:http';
import https from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import type { InventoryError } from './inventory.js';
import { messageOf, type callDeadline } from './limits.js';
import { isRecord } from './objects.js';

/**
 * One GET against the API server for the Kubernetes inventory (kubernetes.ts): where and with
 * which credentials (the kubeconfig, its server), the request itself on plain node:http(s) with
 * a real abort and a byte limit, and the Status a refusal carries.
 */

/** What every request of one Kubernetes inventory needs: where, with which credentials, within which bounds. */
export interface Listing {
  readonly server: string;
  readonly config: KubeConfig;
  readonly pageSize: number;
  readonly timeoutMs: number;
  readonly maxObjects: number;
  readonly maxBytes: number;
}

/** The kubeconfig the options name: the in-cluster service account, a file, or the default ($KUBECONFIG, then ~/.kube/config). */
export function loadKubeConfig(options: { readonly kubeconfigPath?: string; readonly inCluster?: boolean }): KubeConfig {
  const config = new KubeConfig();
  try {
    if (options.inCluster) config.loadFromCluster();
    else if (options.kubeconfigPath) config.loadFromFile(options.kubeconfigPath);
    else config.loadFromDefault();
  } catch (error) {
    throw new Error(
      `kubernetes inventory: cannot load the ${options.inCluster ? 'in-cluster configuration' : `kubeconfig${options.kubeconfigPath ? ` ${options.kubeconfigPath}` : ''}`}: ${messageOf(error)}`,
      { cause: error },
    );
  }
  return config;
}

/** The API server's base URL without a trailing slash (it may carry a path, as behind a proxy). */
export function serverOf(config: KubeConfig): string {
  const cluster = config.getCurrentCluster();
  let url: URL | undefined;
  try {
    url = cluster ? new URL(cluster.server) : undefined;
  } catch {
    url = undefined;
  }
  // loadFromCluster outside a pod yields https://undefined:undefined.
  if (!cluster || !url || url.hostname === 'undefined' || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw new Error(
      `kubernetes inventory: the current context names no usable API server${cluster ? ` (server: ${JSON.stringify(cluster.server)})` : ''}`,
    );
  }
  // client-node sends credentials over plain http only when TLS verification is waived on purpose.
  if (url.protocol === 'http:' && !cluster.skipTLSVerify)
    throw new Error(`kubernetes inventory: ${cluster.server} is plain http; set insecure-skip-tls-verify on the cluster to allow it`);
  return cluster.server.replace(/\/+$/, '');
}

/** The raw answer to one GET within the call's deadline, or the error `fail` makes of why there is none. */
export async function send(
  ctx: Listing,
  url: URL,
  call: ReturnType<typeof callDeadline>,
  fail: (message: string, cause?: unknown) => InventoryError,
  accept = 'application/json',
): Promise<RawResponse> {
  try {
    const requestOptions: https.RequestOptions = {};
    await ctx.config.applyToHTTPSOptions(requestOptions);
    return await get(url, requestOptions, call.signal, ctx.maxBytes, accept);
  } catch (error) {
    throw fail(call.why() ?? messageOf(error), error);
  }
}

/** An answer's body as JSON, or the error `fail` makes of it. */
export function jsonOf(response: RawResponse, fail: (message: string, cause?: unknown) => InventoryError): unknown {
  try {
    return JSON.parse(response.body) as unknown;
  } catch (error) {
    throw fail('the answer is not JSON', error);
  }
}

export interface RawResponse {
  readonly status: number;
  readonly body: string;
}

/** One GET, read whole into a string, refused past `maxBytes`; `signal` ends it at any point. */
function get(url: URL, options: https.RequestOptions, signal: AbortSignal, maxBytes: number, accept: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? https.request : http.request;
    const headers = { ...(options.headers as http.OutgoingHttpHeaders | undefined), accept };
    const request = send(url, { ...options, method: 'GET', headers, signal }, (response) => {
      const declared = Number(response.headers['content-length'] ?? 0);
      if (declared > maxBytes) {
        request.destroy(new Error(`the answer of ${declared} bytes is over the ${maxBytes}-byte limit`));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      // The last chunks and 'end' may already be queued when the limit is passed: remember why.
      let tooLarge: Error | undefined;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (tooLarge) return;
        if (size <= maxBytes) chunks.push(chunk);
        else request.destroy((tooLarge = new Error(`the answer is over the ${maxBytes}-byte limit`)));
      });
      response.on('end', () =>
        tooLarge ? reject(tooLarge) : resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end();
  });
}

/** `HTTP 403 Forbidden: pods is forbidden: …` from a Kubernetes Status body, or the bare status. */
export function describeStatus(response: RawResponse): string {
  let status: unknown;
  try {
    status = JSON.parse(response.body);
  } catch {
    status = undefined;
  }
  if (isRecord(status) && status['kind'] === 'Status') {
    const reason = typeof status['reason'] === 'string' ? ` ${status['reason']}` : '';
    const message = typeof status['message'] === 'string' ? `: ${status['message'].slice(0, 300)}` : '';
    return `HTTP ${response.status}${reason}${message}`;
  }
  return `HTTP ${response.status}`;
}
