import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

export interface OpsServer {
  readonly port: number;
  close(): Promise<void>;
}

/** What GET /readyz answers: ready or not, and the detail that says why (served as JSON either way). */
export interface Readiness {
  readonly ready: boolean;
  readonly detail: Readonly<Record<string, unknown>>;
}

/**
 * GET /metrics (Prometheus), GET /healthz and, given `readiness`, GET /readyz for a process
 * without an HTTP API of its own (the projection worker, the reconciler): what a Kubernetes probe
 * and a scrape need.
 */
export async function startOpsServer(options: {
  port: number;
  host: string;
  registry: Registry;
  healthy: () => boolean;
  readiness?: () => Readiness;
}): Promise<OpsServer> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET') {
      response.writeHead(405, { Allow: 'GET' }).end();
      return;
    }
    if (path === '/healthz') {
      const ok = options.healthy();
      response.writeHead(ok ? 200 : 503, { 'Content-Type': 'text/plain; charset=utf-8' }).end(ok ? 'ok' : 'unhealthy');
      return;
    }
    if (path === '/readyz' && options.readiness) {
      const { ready, detail } = options.readiness();
      response.writeHead(ready ? 200 : 503, { 'Content-Type': 'application/json' }).end(JSON.stringify({ ready, ...detail }));
      return;
    }
    if (path === '/metrics') {
      options.registry.metrics().then(
        (text) => response.writeHead(200, { 'Content-Type': options.registry.contentType }).end(text),
        (error: unknown) => response.writeHead(500).end(String(error)),
      );
      return;
    }
    response
      .writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' })
      .end(`not found: GET /metrics, /healthz${options.readiness ? ' or /readyz' : ''}`);
  });
  server.requestTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : options.port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
