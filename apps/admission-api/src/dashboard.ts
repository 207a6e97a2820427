import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Request, Response } from 'express';
import { kubeStatus } from './errors/kube-status.js';

export const DASHBOARD_PATH = '/ui';

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
