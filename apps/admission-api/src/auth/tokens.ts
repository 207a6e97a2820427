import { createHash, timingSafeEqual } from 'node:crypto';
import { parse } from 'yaml';

/**
 * admin: definitions (quotas, limit ranges, namespaces, shared quotas); admission: a tenant's REST
 * reservations and what-ifs; auditor: history; webhook: the kube-apiserver's AdmissionReviews (and
 * only them). A review speaks for the cluster (its Namespace reviews move namespaces between shared
 * quotas, its reservations are settled from what the cluster holds), so it is a role of its own.
 */
export const ROLES = ['admin', 'admission', 'auditor', 'webhook'] as const;
export type Role = (typeof ROLES)[number];

/** Who is calling, once authenticated. */
export interface Principal {
  /** The token's (or client certificate's) name: recorded as the actor of what it writes. */
  readonly name: string;
  readonly roles: ReadonlySet<Role>;
  /** The namespaces it may touch; `all` when unscoped. */
  readonly namespaces: ReadonlySet<string> | 'all';
  readonly via: 'token' | 'client-certificate' | 'insecure-development' | 'unauthenticated-webhook';
  /**
   * It relays other users' requests (the kube-apiserver): the `userInfo.username` of the
   * AdmissionReviews it sends is recorded as "on behalf of". For any other principal that
   * claim is ignored.
   */
  readonly trustUserInfo: boolean;
}

interface TokenEntry {
  readonly digest: Buffer;
  readonly principal: Principal;
}

export class TokenFileError extends Error {
  constructor(file: string, problem: string) {
    super(`tokens file ${file}: ${problem}`);
    this.name = 'TokenFileError';
  }
}

const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;
/** Tokens are random strings; anything longer is not one of ours and is not hashed. */
const TOKEN_LENGTH_MAX = 512;

export function sha256Hex(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * The configured bearer tokens, kept only as SHA-256 digests. A fast hash is right here:
 * tokens are long random strings (`openssl rand -hex 32`), not passwords, so there is
 * nothing to brute-force; what must not happen is a timing leak, so every lookup compares
 * the presented digest with every entry in constant time.
 */
export class TokenSet {
  private constructor(private readonly entries: readonly TokenEntry[]) {}

  get size(): number {
    return this.entries.length;
  }

  /** Parses the YAML (or JSON) text of a tokens file; any mistake names the entry and field. */
  static parse(text: string, file: string): TokenSet {
    let document: unknown;
    try {
      document = parse(text);
    } catch (error) {
      throw new TokenFileError(file, `is not valid YAML: ${error instanceof Error ? error.message : String(error)}`);
    }
    const list = (document as { tokens?: unknown } | null)?.tokens;
    if (!Array.isArray(list) || list.length === 0) throw new TokenFileError(file, 'must have a non-empty `tokens:` list');
    const names = new Set<string>();
    const digests = new Set<string>();
    const entries = list.map((raw: unknown, index): TokenEntry => {
      const at = `tokens[${index}]`;
      if (typeof raw !== 'object' || raw === null) throw new TokenFileError(file, `${at} must be a mapping`);
      const entry = raw as Record<string, unknown>;
      for (const key of Object.keys(entry)) {
        if (!['name', 'sha256', 'roles', 'namespaces', 'trustUserInfo'].includes(key)) {
          throw new TokenFileError(file, `${at}: unknown field "${key}" (expected name, sha256, roles, namespaces, trustUserInfo)`);
        }
      }
      const name = entry['name'];
      if (typeof name !== 'string' || name.length === 0 || name.length > 253)
        throw new TokenFileError(file, `${at}.name must be a string of 1 to 253 characters`);
      if (names.has(name)) throw new TokenFileError(file, `${at}.name "${name}" appears twice`);
      names.add(name);
      const digest = entry['sha256'];
      if (typeof digest !== 'string' || !SHA256_HEX.test(digest)) {
        throw new TokenFileError(
          file,
          `${at}.sha256 must be 64 lowercase hex digits (printf %s "$TOKEN" | sha256sum); never put the token itself in this file`,
        );
      }
      if (digests.has(digest)) throw new TokenFileError(file, `${at}: the same token is listed twice`);
      digests.add(digest);
      const roles = entry['roles'];
      if (!Array.isArray(roles) || roles.length === 0 || !roles.every((r): r is Role => (ROLES as readonly unknown[]).includes(r))) {
        throw new TokenFileError(file, `${at}.roles must be a non-empty list of ${ROLES.join(', ')}`);
      }
      const namespaces = entry['namespaces'];
      let scope: ReadonlySet<string> | 'all' = 'all';
      if (namespaces !== undefined && namespaces !== null) {
        if (
          !Array.isArray(namespaces) ||
          namespaces.length === 0 ||
          !namespaces.every((n): n is string => typeof n === 'string' && NAMESPACE.test(n))
        ) {
          throw new TokenFileError(file, `${at}.namespaces must be a non-empty list of namespace names (leave it out for every namespace)`);
        }
        scope = new Set(namespaces);
      }
      const trustUserInfo = entry['trustUserInfo'] ?? false;
      if (typeof trustUserInfo !== 'boolean') throw new TokenFileError(file, `${at}.trustUserInfo must be true or false`);
      return {
        digest: Buffer.from(digest, 'hex'),
        principal: { name, roles: new Set(roles), namespaces: scope, via: 'token', trustUserInfo },
      };
    });
    return new TokenSet(entries);
  }

  /**
   * Tokens that look like the kube-apiserver's as it was configured before the webhook role
   * (`admission` with `trustUserInfo: true`): their reviews are now refused, which under
   * `failurePolicy: Fail` stops the cluster's writes. Named at boot and on every reload.
   */
  get withoutWebhookRole(): string[] {
    return this.entries
      .filter((e) => e.principal.trustUserInfo && e.principal.roles.has('admission') && !e.principal.roles.has('webhook'))
      .map((e) => e.principal.name);
  }

  /** The principal whose token this is, or undefined. Takes the same time whichever entry matches. */
  authenticate(token: string): Principal | undefined {
    if (token.length === 0 || token.length > TOKEN_LENGTH_MAX) return undefined;
    const presented = createHash('sha256').update(token, 'utf8').digest();
    let found: Principal | undefined;
    for (const entry of this.entries) {
      if (timingSafeEqual(presented, entry.digest)) found = entry.principal;
    }
    return found;
  }
}
