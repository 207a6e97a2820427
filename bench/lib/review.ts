import type { Pod } from '@quota/domain';
import type { AdmitCommand } from '@quota/ledger';
import type { Classifier, RequestSpec } from './load.js';

let sequence = 0;
const runId = Date.now().toString(36);

/**
 * An AdmissionReview v1 for a new pod asking for 1m CPU, with a fresh uid and name: what
 * kube-apiserver sends the validating webhook for each create.
 */
export function podReview(namespace: string): RequestSpec {
  const n = sequence++;
  const name = `p${n}`;
  return {
    kind: 'admission',
    method: 'POST',
    path: '/v1/admission/validate',
    body: {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: `${runId}-${n}`,
        kind: { group: '', version: 'v1', kind: 'Pod' },
        resource: { group: '', version: 'v1', resource: 'pods' },
        name,
        namespace,
        operation: 'CREATE',
        userInfo: { username: 'system:serviceaccount:ci:deployer' },
        object: { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace }, spec: { containers: [{ name: 'app', image: 'x', resources: { requests: { cpu: '1m' } } }] } },
        dryRun: false,
      },
    },
  };
}

/** A ResourceQuota named `compute` with these hard limits, as the admin API takes it. */
export function quotaPut(namespace: string, hard: Record<string, string>): RequestSpec {
  return {
    kind: 'setup',
    method: 'PUT',
    path: `/v1/namespaces/${namespace}/resourcequotas/compute`,
    body: { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'compute', namespace }, spec: { hard } },
  };
}

/** The same pod as an in-process admission (LedgerCommands.admit), the n-th of a run, keyed as a webhook review. */
export function podAdmission(namespace: string, n: number): AdmitCommand {
  const object: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `p${n}`, uid: `u${n}` },
    spec: { containers: [{ name: 'app', image: 'x', resources: { requests: { cpu: '1m' } } }] },
  };
  return {
    namespace,
    source: 'webhook',
    request: { operation: 'CREATE', groupResource: { group: '', resource: 'pods' }, namespace, name: `p${n}`, object },
    requestKey: `review:${n}`,
    dryRun: false,
    requester: 'bench',
  };
}

/** An answer as the loads count it: an admission allowed (ok) or denied, any other request ok when 200; anything else an error. */
export const classifyReview: Classifier = (spec, answer) => {
  if (answer.status !== 200) return 'error';
  if (spec.kind !== 'admission') return 'ok';
  const allowed = (JSON.parse(answer.body) as { response?: { allowed?: boolean } }).response?.allowed;
  return allowed === true ? 'ok' : allowed === false ? 'denied' : 'error';
};
