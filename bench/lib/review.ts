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
        object: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name, namespace },
          spec: { containers: [{ name: 'app', image: 'x', resources: { requests: { cpu: '1m' } } }] },
        },
        dryRun: false,
      },
    },
  };
}

/**
 * The same review of a pod as a Deployment's ReplicaSet makes it and the kube-apiserver sends it
 * (about 5 KB): owner references, managedFields, labels and annotations, two containers with
 * environment, probes and volume mounts, volumes, tolerations and a status. Most of it admission
 * never reads; `REVIEW=apiserver` measures it (bench/profile-api.ts).
 */
export function apiserverPodReview(namespace: string): RequestSpec {
  const spec = podReview(namespace);
  const request = (spec.body as { request: { name: string; uid: string; object: Record<string, unknown> } }).request;
  const { name } = request;
  request.object = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: apiserverPodMetadata(name, namespace, request.uid),
    spec: apiserverPodSpec(),
    status: { phase: 'Pending', qosClass: 'Burstable' },
  };
  return spec;
}

/** One of the pod's containers, as a Deployment's template gives it. */
function apiserverContainer(container: string, cpu: string) {
  return {
    name: container,
    image: `registry.example.com/team/${container}:1.27.3`,
    imagePullPolicy: 'IfNotPresent',
    ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
    env: Array.from({ length: 12 }, (_, i) => ({ name: `SETTING_${i}`, value: `value-of-setting-number-${i}` })),
    resources: { requests: { cpu, memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
    livenessProbe: {
      httpGet: { path: '/healthz', port: 8080, scheme: 'HTTP' },
      initialDelaySeconds: 10,
      periodSeconds: 10,
      timeoutSeconds: 1,
      successThreshold: 1,
      failureThreshold: 3,
    },
    readinessProbe: {
      httpGet: { path: '/readyz', port: 8080, scheme: 'HTTP' },
      periodSeconds: 5,
      timeoutSeconds: 1,
      successThreshold: 1,
      failureThreshold: 3,
    },
    volumeMounts: [
      { name: 'config', mountPath: '/etc/app' },
      { name: 'kube-api-access', readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
    ],
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
  };
}

/** The pod's metadata as the ReplicaSet controller writes it: labels, annotations, its owner, managedFields. */
function apiserverPodMetadata(name: string, namespace: string, uid: string) {
  return {
    name,
    generateName: 'web-6d4cf56db6-',
    namespace,
    uid,
    creationTimestamp: '2026-12-02T10:00:00Z',
    labels: { app: 'web', 'pod-template-hash': '6d4cf56db6', 'app.kubernetes.io/part-of': 'shop', team: 'checkout' },
    annotations: {
      'kubectl.kubernetes.io/restartedAt': '2026-12-01T09:00:00Z',
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': '9090',
    },
    ownerReferences: [
      {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        name: 'web-6d4cf56db6',
        uid: '5b1e7a52-9c41-4c5e-8a3c-2f6f2c1d9e10',
        controller: true,
        blockOwnerDeletion: true,
      },
    ],
    managedFields: [
      {
        manager: 'kube-controller-manager',
        operation: 'Update',
        apiVersion: 'v1',
        time: '2026-12-02T10:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': {
            'f:generateName': {},
            'f:labels': { '.': {}, 'f:app': {}, 'f:pod-template-hash': {} },
            'f:ownerReferences': { '.': {}, 'k:{"uid":"5b1e7a52"}': {} },
          },
          'f:spec': { 'f:containers': { 'k:{"name":"app"}': { '.': {}, 'f:env': {}, 'f:image': {}, 'f:resources': {} } } },
        },
      },
    ],
  };
}

/** The pod's spec as the API server stores it, defaults filled in: volumes, two containers, tolerations. */
function apiserverPodSpec() {
  return {
    volumes: [
      { name: 'config', configMap: { name: 'web-config', defaultMode: 420 } },
      {
        name: 'kube-api-access',
        projected: {
          defaultMode: 420,
          sources: [
            { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
            { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          ],
        },
      },
    ],
    containers: [apiserverContainer('app', '1m'), apiserverContainer('sidecar', '1m')],
    restartPolicy: 'Always',
    terminationGracePeriodSeconds: 30,
    dnsPolicy: 'ClusterFirst',
    serviceAccountName: 'web',
    securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
    schedulerName: 'default-scheduler',
    tolerations: [
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ],
    priority: 0,
    enableServiceLinks: true,
    preemptionPolicy: 'PreemptLowerPriority',
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
