import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import type { ControlPlane } from './control-plane.js';

/**
 * The kube-apiserver's REST API as a cluster admin (a client certificate of the plane's CA, group
 * system:masters), over one kept-alive connection pool: for tests that make hundreds of calls,
 * where a kubectl process per call would cost more CPU than the call (test/kubernetes/differential).
 * Answers every status; only a transport failure rejects.
 */

export interface KubeAnswer {
  readonly status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Kubernetes objects and Status answers, read by the caller
  readonly body: any;
}

export type PatchType = 'merge' | 'strategic' | 'json';

/** Any Kubernetes object or Status, as the tests read it. */
export type KubeBody = KubeAnswer['body'];

export interface KubeApi {
  /** Any method on any path: the status and the parsed body (a Status on failure). */
  call(method: string, path: string, body?: unknown): Promise<KubeAnswer>;
  get(path: string): Promise<KubeAnswer>;
  create(path: string, object: unknown): Promise<KubeAnswer>;
  patch(path: string, patch: unknown, type?: PatchType): Promise<KubeAnswer>;
  delete(path: string): Promise<KubeAnswer>;
  close(): void;
}

const CONTENT_TYPES: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  json: 'application/json-patch+json',
};

/**
 * The REST API of `plane` as `name` (a member of system:masters), over at most `maxSockets`
 * connections (hundreds of concurrent creates need as many).
 */
export function kubeApi(plane: ControlPlane, options: string | { readonly name?: string; readonly maxSockets?: number } = {}): KubeApi {
  const { name = 'test-admin', maxSockets = 8 } = typeof options === 'string' ? { name: options } : options;
  const { cert, key } = plane.issueCertificate(name, { commonName: name, organization: 'system:masters', client: true });
  const agent = new Agent({
    ca: readFileSync(plane.caCert),
    cert: readFileSync(cert),
    key: readFileSync(key),
    keepAlive: true,
    maxSockets,
  });
  const call = (method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<KubeAnswer> => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(
        `${plane.server}${path}`,
        {
          method,
          agent,
          timeout: 60_000,
          headers: { accept: 'application/json', ...(payload === undefined ? {} : { 'content-type': contentType }) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown = text;
            try {
              parsed = JSON.parse(text);
            } catch {
              // not JSON: keep the text
            }
            resolve({ status: res.statusCode ?? 0, body: parsed });
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within 60 s`)));
      req.on('error', reject);
      req.end(payload);
    });
  };
  return {
    call: (method, path, body) => call(method, path, body),
    get: (path) => call('GET', path),
    create: (path, object) => call('POST', path, object),
    patch: (path, patch, type = 'merge') => call('PATCH', path, patch, CONTENT_TYPES[type]),
    delete: (path) => call('DELETE', path),
    close: () => agent.destroy(),
  };
}
