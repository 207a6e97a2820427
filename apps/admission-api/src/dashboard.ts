import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AppConfig } from '@quota/config';
import type { Request, Response } from 'express';
import { Authenticator } from './auth/authenticator.js';
import { APP_CONFIG } from './config/app-config.module.js';
import { kubeStatus } from './errors/kube-status.js';

export const DASHBOARD_PATH = '/ui';
/** What the sign-in page needs to know before it has a token (no credentials, no secrets). */
export const DASHBOARD_SESSION_PATH = `${DASHBOARD_PATH}/session.json`;

/**
 * `GET /ui/session.json`: whether the page must ask for a token at all (an open development API
 * lets everyone in, so asking would be a 401 for nothing), and under the zero-setup start
 * (development mode with the tokens file it writes) where its development token is kept. The
 * token itself is never served: only the path of the file a developer can read on their machine.
 */
export interface DashboardSession {
  readonly authentication: 'token' | 'open';
  readonly devTokenFile?: string;
}

/** The file the zero-setup start keeps its token in: `dev-token` beside the `tokens.yaml` it writes (apps/standalone/src/dev-token.ts). */
export function dashboardSession(config: Pick<AppConfig, 'insecureDev' | 'tokensFile'>, open: boolean): DashboardSession {
  if (open) return { authentication: 'open' };
  if (!config.insecureDev || !config.tokensFile) return { authentication: 'token' };
  const devTokenFile = join(dirname(config.tokensFile), 'dev-token');
  return existsSync(devTokenFile) ? { authentication: 'token', devTokenFile } : { authentication: 'token' };
}

/**
 * Whether a request to `/` comes from a browser: one that prefers HTML to JSON (`*\/*`, as
 * curl sends, counts as HTML). A client that asks for JSON keeps the API's JSON 404.
 */
const wantsPage = (request: Request): boolean => request.accepts(['html', 'json']) === 'html';

/**
 * The page may load only our own script, style and data: no CDN, no inline script, no frames.
 * The dashboard needs nothing else, and a token kept in session storage is safe only while no
 * foreign script runs beside it.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** dist/ui of the package this file belongs to (from src in tests, from dist in production). */
export function defaultDashboardDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return join(dir, 'dist', 'ui');
}

/**
 * Serves the dashboard's built files (npm run build writes them with Vite) under /ui/.
 * File names under assets/ carry a content hash, so they are cached for good; index.html is
 * revalidated on every load so a new build shows at once. Without a build, /ui answers 404
 * with the command that makes one.
 */
export function serveDashboard(app: INestApplication, dir: string = defaultDashboardDir()): void {
  const express = app as NestExpressApplication;
  const instance = express.getHttpAdapter().getInstance();
  // The service's root leads a person to the dashboard; every other unknown path stays a JSON 404.
  instance.get('/', (request: Request, response: Response, next: () => void) => {
    if (wantsPage(request)) response.redirect(302, `${DASHBOARD_PATH}/`);
    else next();
  });
  const session = dashboardSession(app.get<symbol, AppConfig>(APP_CONFIG), app.get(Authenticator).open);
  instance.get(DASHBOARD_SESSION_PATH, (_request: Request, response: Response) => {
    response.setHeader('Cache-Control', 'no-store');
    response.setHeader('X-Content-Type-Options', 'nosniff');
    response.json(session);
  });
  // Express routes ignore a trailing slash, so only the bare path is redirected (to the directory, where relative asset URLs resolve).
  instance.get(DASHBOARD_PATH, (request: Request, response: Response, next: () => void) => {
    if (request.path === DASHBOARD_PATH) response.redirect(301, `${DASHBOARD_PATH}/`);
    else next();
  });
  if (!existsSync(join(dir, 'index.html'))) {
    instance.use(`${DASHBOARD_PATH}/`, (_request: Request, response: Response) => {
      response.status(404).json(kubeStatus(404, `the dashboard is not built (no ${join(dir, 'index.html')}): run npm run build`));
    });
    return;
  }
  express.useStaticAssets(dir, {
    prefix: `${DASHBOARD_PATH}/`,
    index: 'index.html',
    redirect: false,
    fallthrough: true,
    setHeaders(response, path) {
      response.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
      response.setHeader('X-Content-Type-Options', 'nosniff');
      response.setHeader('Referrer-Policy', 'no-referrer');
      response.setHeader('Cache-Control', path.includes(`${join('ui', 'assets')}`) ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
}
