import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

export interface OpsServer {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * GET /metrics (Prometheus) and GET /healthz for a process without an HTTP API of its own
 * (the projection worker, the reconciler): what a Kubernetes probe and a scrape need.
 */
export async function startOpsServer(options: {
  port: number;
  host: string;
  registry: Registry;
  healthy: () => boolean;
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
    if (path === '/metrics') {
      options.registry.metrics().then(
        (text) => response.writeHead(200, { 'Content-Type': options.registry.contentType }).end(text),
        (error: unknown) => response.writeHead(500).end(String(error)),
      );
      return;
    }
    response.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('not found: GET /metrics or /healthz');
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
