import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import type { TLSSocket } from 'node:tls';
import { HttpException, Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { AppConfig } from '@quota/config';
import type { Request } from 'express';
import { kubeStatus } from '../errors/kube-status.js';
import { APP_CONFIG } from '../config/app-config.module.js';
import { ROLES, TokenSet, type Principal } from './tokens.js';

/**
 * Who the request is, settled once per request by `Authenticator.identify` (before the rate
 * limit, which counts by principal): the principal, or why there is none.
 */
export interface AuthenticatedRequest extends Request {
  principal?: Principal;
  /** Set when authentication failed or found nothing: the message of the 401. */
  authFailure?: string;
}

const TOKENS_RELOAD_POLL_MS = 2000;

/** Set on a request by the unauthenticated webhook listener (unauthenticated-webhook.ts): nothing it sends is a credential. */
export const UNAUTHENTICATED_WEBHOOK = Symbol('quota-ledger:unauthenticated-webhook');

/**
 * Who calls the unauthenticated webhook listener (WEBHOOK_UNAUTHENTICATED_PORT): a managed
 * control plane's API server, which presents no credential, or anyone who reaches the port. It
 * may send reviews and nothing else; its userInfo is never trusted; it is limited by address.
 */
export const UNAUTHENTICATED_KUBE_APISERVER: Principal = Object.freeze({
  name: 'unauthenticated:kube-apiserver',
  roles: new Set<'webhook'>(['webhook']),
  namespaces: 'all',
  via: 'unauthenticated-webhook',
  trustUserInfo: false,
});

export function unauthorized(message: string): HttpException {
  return new HttpException(kubeStatus(401, message), 401);
}

export function forbidden(message: string): HttpException {
  return new HttpException(kubeStatus(403, message), 403);
}

/** Throws 403 when a namespace-scoped principal asks about a namespace outside its scope. */
export function assertNamespaceAllowed(request: Request, namespace: string): void {
  const principal = (request as AuthenticatedRequest).principal;
  if (!principal || principal.namespaces === 'all' || principal.namespaces.has(namespace)) return;
  throw forbidden(
    `"${principal.name}" may act only in namespace${principal.namespaces.size > 1 ? 's' : ''} ${[...principal.namespaces].join(', ')}; this request is for namespace "${namespace}"`,
  );
}

/** Throws 403 when a namespace-scoped principal would change something cluster-scoped (`what`). */
export function assertClusterWide(request: Request, what: string): void {
  const principal = (request as AuthenticatedRequest).principal;
  if (!principal || principal.namespaces === 'all') return;
  throw forbidden(
    `"${principal.name}" may act only in namespace${principal.namespaces.size > 1 ? 's' : ''} ${[...principal.namespaces].join(', ')}; ${what} is cluster-scoped`,
  );
}

/**
 * Who is calling: a bearer token from TOKENS_FILE, else a client certificate verified against
 * TLS_CLIENT_CA_FILE (the kube-apiserver's), else nobody (401). With QUOTA_LEDGER_INSECURE_DEV
 * and no tokens file, everyone is an anonymous admin — the API says so loudly at boot.
 * The tokens file is re-read when it changes, so tokens rotate without a restart; a broken
 * edit keeps the previous set and logs why.
 */
@Injectable()
export class Authenticator implements OnApplicationShutdown {
  private readonly logger = new Logger('auth');
  private tokens: TokenSet | undefined;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    const file = config.tokensFile;
    if (file) {
      this.tokens = TokenSet.parse(readText(file), file);
      this.warnOfOldReviewers(this.tokens);
      watchFile(file, { interval: TOKENS_RELOAD_POLL_MS, persistent: false }, () => this.reload(file));
    } else if (!config.insecureDev) {
      throw new Error(
        'no tokens configured: set TOKENS_FILE to a file of hashed bearer tokens (see docs/security.md), or set QUOTA_LEDGER_INSECURE_DEV=true on a development machine to accept every caller as an anonymous admin',
      );
    }
  }

  /** True when there are no tokens and every caller is let in (development only). */
  get open(): boolean {
    return this.tokens === undefined;
  }

  /**
   * Settles who the request is, once: reads only headers and the TLS session, never the body.
   * Sets `principal`, or `authFailure` when a credential is wrong or one is needed.
   */
  identify(request: AuthenticatedRequest): Principal | undefined {
    if (request.principal || request.authFailure !== undefined) return request.principal;
    if ((request as { [UNAUTHENTICATED_WEBHOOK]?: boolean })[UNAUTHENTICATED_WEBHOOK])
      return (request.principal = UNAUTHENTICATED_KUBE_APISERVER);
    try {
      request.principal = this.authenticate(request);
    } catch (error) {
      request.authFailure = error instanceof HttpException ? (error.getResponse() as { message: string }).message : 'authentication failed';
    }
    return request.principal;
  }

  private authenticate(request: Request): Principal {
    const header = request.headers.authorization;
    if (header !== undefined) {
      const match = /^Bearer ([\x21-\x7e]+)$/i.exec(header.trim());
      if (!match?.[1]) throw unauthorized('the Authorization header must be "Bearer TOKEN"');
      if (!this.tokens) return this.anonymous(request);
      const principal = this.tokens.authenticate(match[1]);
      if (!principal) throw unauthorized('the bearer token is not recognized (unknown, revoked or mistyped)');
      return principal;
    }
    const certificate = this.clientCertificate(request);
    if (certificate) return certificate;
    if (!this.tokens) return this.anonymous(request);
    throw unauthorized('authentication required: send "Authorization: Bearer TOKEN"');
  }

  private anonymous(request: Request): Principal {
    // Development only: an authenticating proxy's X-Remote-User still names the actor.
    const header = request.headers['x-remote-user'];
    const name = Array.isArray(header) ? header[0] : header;
    return {
      name: name && name.length <= 253 ? name : 'anonymous',
      roles: new Set(ROLES),
      namespaces: 'all',
      via: 'insecure-development',
      trustUserInfo: true,
    };
  }

  private clientCertificate(request: Request): Principal | undefined {
    const tls = this.config.tls;
    if (!tls?.clientCaFile) return undefined;
    const socket = request.socket as Partial<TLSSocket>;
    if (!socket.encrypted || !socket.authorized || typeof socket.getPeerCertificate !== 'function') return undefined;
    const subject = socket.getPeerCertificate().subject as Record<string, string | string[]> | undefined;
    const common = subject?.['CN'];
    const name = (Array.isArray(common) ? common[0] : common) ?? 'client-certificate';
    return {
      name,
      roles: new Set([tls.clientCertRole]),
      namespaces: 'all',
      via: 'client-certificate',
      trustUserInfo: tls.clientCertTrustUserInfo,
    };
  }

  private reload(file: string): void {
    try {
      const next = TokenSet.parse(readText(file), file);
      this.tokens = next;
      this.logger.log(`reloaded ${next.size} token(s) from ${file}`);
      this.warnOfOldReviewers(next);
    } catch (error) {
      this.logger.error(`kept the previous tokens: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private warnOfOldReviewers(tokens: TokenSet): void {
    for (const name of tokens.withoutWebhookRole) {
      this.logger.warn(
        `token "${name}" has trustUserInfo but not the webhook role: AdmissionReviews need the role webhook (add it to the token's roles), so its reviews are refused with 403 and kube-apiserver applies the webhook's failurePolicy`,
      );
    }
  }

  onApplicationShutdown(): void {
    if (this.config.tokensFile) unwatchFile(this.config.tokensFile);
  }
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`TOKENS_FILE ${file} cannot be read: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}
