/** Who is signed in, from GET /v1/whoami. */
export interface WhoAmI {
  readonly name: string;
  readonly roles: readonly string[];
  readonly namespaces: '*' | readonly string[];
}

/** Admins may edit quotas here; every other role only reads (and asks what-ifs, which write nothing). */
export const canEdit = (who: WhoAmI): boolean => who.roles.includes('admin');
/** The audit reads (charts, reservations, decisions) need admin or auditor. */
export const canAudit = (who: WhoAmI): boolean => who.roles.includes('admin') || who.roles.includes('auditor');
