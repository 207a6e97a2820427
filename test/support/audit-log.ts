import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ControlPlane } from './control-plane.js';

/**
 * kube-apiserver's audit log of one user's requests (Metadata level: the request URI and the
 * answer's code), written to its stdout and so into the plane's kube-apiserver.log: what the
 * server itself saw of a client, e.g. the reconciler's pages and continue tokens.
 */
export interface AuditedRequest {
  readonly verb: string;
  readonly requestURI: string;
  readonly code: number;
}

/** apiServerFlags for a plane that audits `user`'s requests; the policy file is read at start, then `cleanup()`. */
export function auditFlags(user: string): { flags: string[]; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'ql-audit-'));
  const policy = join(dir, 'policy.json');
  writeFileSync(
    policy,
    JSON.stringify({
      apiVersion: 'audit.k8s.io/v1',
      kind: 'Policy',
      omitStages: ['RequestReceived'],
      rules: [{ level: 'Metadata', users: [user] }, { level: 'None' }],
    }),
  );
  return { flags: [`--audit-policy-file=${policy}`, '--audit-log-path=-'], cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The audited requests so far, in order. */
export function auditedRequests(plane: ControlPlane): AuditedRequest[] {
  const log = readFileSync(join(plane.dir, 'kube-apiserver.log'), 'utf8');
  const requests: AuditedRequest[] = [];
  for (const line of log.split('\n')) {
    if (!line.startsWith('{"kind":"Event"')) continue;
    const event = JSON.parse(line) as { verb: string; requestURI: string; stage: string; responseStatus?: { code?: number } };
    if (event.stage === 'ResponseComplete')
      requests.push({ verb: event.verb, requestURI: event.requestURI, code: event.responseStatus?.code ?? 0 });
  }
  return requests;
}
