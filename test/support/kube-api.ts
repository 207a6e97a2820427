import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import type { ControlPlane } from './control-plane.js';

/**
 * The kube-apiserver's REST API straight from the test, as the plane's admin (its kubeconfig's
 * client certificate), for what kubectl would do too slowly: hundreds of concurrent creates.
 */
export interface KubeApi {
  /** The status and the parsed body (a Status on failure). */
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: KubeBody }>;
  close(): void;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Kubernetes objects and Status, read by the tests
export type KubeBody = any;

export function kubeApi(plane: ControlPlane, { maxSockets = 64 } = {}): KubeApi {
  const config = JSON.parse(readFileSync(plane.kubeconfig, 'utf8')) as { users: { user: Record<string, string> }[] };
  const user = config.users[0]?.user ?? {};
  const agent = new Agent({
    ca: readFileSync(plane.caCert),
    cert: readFileSync(user['client-certificate'] ?? ''),
    key: readFileSync(user['client-key'] ?? ''),
    keepAlive: true,
    maxSockets,
  });
  return {
    call: (method, path, body) =>
      new Promise((resolve, reject) => {
        const payload = body === undefined ? undefined : JSON.stringify(body);
        const req = request(`${plane.server}${path}`, { method, agent, timeout: 60_000, headers: { accept: 'application/json', ...(payload ? { 'content-type': 'application/json' } : {}) } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: KubeBody = text;
            try {
              parsed = JSON.parse(text);
            } catch {
              // not JSON
            }
            resolve({ status: res.statusCode ?? 0, body: parsed });
          });
        });
        req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within 60 s`)));
        req.on('error', reject);
        req.end(payload);
      }),
    close: () => agent.destroy(),
  };
}
