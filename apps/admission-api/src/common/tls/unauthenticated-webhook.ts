import { createServer, type Server } from 'node:https';
import type { IncomingMessage, RequestListener, Server as HttpServer } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import type { AppConfig } from '@quota/config';
import { UNAUTHENTICATED_WEBHOOK } from '../../auth/authenticator.js';
import { kubeStatus } from '../../errors/kube-status.js';
import { reloadOnChange, secureContextOptions } from './tls.js';
import { answerContinueWhenRead } from '../edge/expect-continue.js';
import { applyTimeouts } from '../edge/timeouts.js';

/** The only routes the unauthenticated listener serves (lower case, no trailing slash). */
const ROUTES = new Set(['/v1/admission/validate', '/v1/admission/mutate']);

function served(request: IncomingMessage): boolean {
  if (request.method !== 'POST') return false;
  const path = (request.url ?? '').split('?')[0]?.toLowerCase() ?? '';
  return ROUTES.has(path.endsWith('/') ? path.slice(0, -1) : path);
}

/**
 * For managed control planes (EKS, GKE, AKS), whose API servers present no credential to a
 * webhook: a second HTTPS listener (WEBHOOK_UNAUTHENTICATED_PORT; server authentication only)
 * that serves the two webhook routes and nothing else. Whoever calls it is the principal
 * `unauthenticated:kube-apiserver` (role webhook, userInfo never trusted, limited by address),
 * whatever credential it sends. What a forged review can do there: reserve quota that the
 * reconciler releases after its grace period (nothing it sends commits, releases or relabels:
 * NAMESPACE_LABELS_FROM=cluster is required), and learn what a pod's creator learns (whether it
 * fits, and a denial's used and hard). Restrict it to the control plane with a NetworkPolicy.
 */
export async function listenUnauthenticatedWebhook(app: INestApplication, config: AppConfig): Promise<Server | undefined> {
  const port = config.webhookUnauthenticatedPort;
  if (port === undefined || !config.tls) return undefined;
  // What the main listener does with a request: Express, then Nest's router (app.ts).
  const [handle] = (app.getHttpServer() as HttpServer).listeners('request') as RequestListener[];
  if (!handle) throw new Error('the main listener has no request handler to share');
  // Server authentication only: no client certificate is asked for (none would be trusted here).
  const listener: RequestListener = (request, response) => {
    if (!served(request)) {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify(
          kubeStatus(
            404,
            `this listener serves only POST /v1/admission/validate and /v1/admission/mutate (the unauthenticated webhook for managed control planes)`,
          ),
        ),
      );
      return;
    }
    (request as unknown as Record<symbol, boolean>)[UNAUTHENTICATED_WEBHOOK] = true;
    // Any credential it carries is not one here; nothing reads it.
    delete request.headers.authorization;
    handle(request, response);
  };
  const server = createServer(secureContextOptions({ ...config.tls, clientCaFile: undefined }), listener);
  answerContinueWhenRead(server, listener);
  applyTimeouts(server, config);
  const stopReloading = reloadOnChange(server, { ...config.tls, clientCaFile: undefined }, () => undefined);
  // It closes with the main listener (app.close(), after the drain), letting requests in flight finish.
  const main = app.getHttpServer() as Server;
  main.once('close', () => {
    stopReloading();
    server.close();
    server.closeIdleConnections();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, config.host, () => resolve());
  });
  return server;
}
