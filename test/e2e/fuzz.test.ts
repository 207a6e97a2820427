import http from 'node:http';
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_BODY_LIMIT_BYTES } from '@quota/config';
import { bodyLimits } from '../../apps/admission-api/src/common/edge/json-body.js';
import { startApi, type RunningApi } from '../support/api.js';
import {
  type Body,
  DupKeys,
  mutate,
  mutation,
  nested,
  wide,
  NASTY_KEYS,
  type Mutation,
  pathIndex,
  percentEncode,
  Raw,
  serialize,
  weirdInteger,
  weirdKey,
  weirdQuantity,
  weirdSegment,
  weirdString,
  weirdTime,
  weirdValue,
} from './fuzz-arbitraries.js';

/**
 * Property-based fuzzing of the HTTP surface, against the in-process API on its own
 * PostgreSQL database. Whatever arrives, the service must:
 *   1. answer, within REQUEST_TIMEOUT_MS, with anything but a 5xx (the database is up here,
 *      so not even a 503 is deliberate);
 *   2. answer every 4xx the application produces with a Kubernetes Status whose `code` is the
 *      HTTP status (HTTP framing errors that Node's parser answers before any application
 *      code runs carry no X-Request-Id and are only held to rule 1);
 *   3. write nothing for a rejected request: no row appears or changes in any table.
 *      A webhook denial is a 200 and may record a decision; a REST denial (403 with
 *      `details.denial`) may record its decision and nothing else;
 *   4. still be alive and admitting afterwards: /healthz, /readyz and a dry-run admission
 *      after every property, a dry-run admission after every 5xx, and one property that
 *      checks it after every request. Requests sent together must not fail each other.
 *
 * Seeds are fixed so a failure replays; fast-check prints the seed and path. Counterexamples
 * found earlier run first as `examples` (each marked with what it broke): they fail until
 * the service is fixed and stay as regression cases after. Environment knobs:
 *   FUZZ_SEED=<n> FUZZ_RUNS_SCALE=<x>  explore other inputs, or more of them;
 *   FUZZ_SURVEY=1  record violations instead of stopping at the first of each property, and
 *                  print one request per kind of violation at the end (every bug at once);
 *   FUZZ_STATS=1   print the statuses each property got (a fuzzer that hears only 400s tests little).
 */

const BASE_SEED = Number(process.env['FUZZ_SEED'] ?? 20_261_123);
const RUNS_SCALE = Number(process.env['FUZZ_RUNS_SCALE'] ?? 1);
/** Long enough for any honest answer on a loaded CI machine; a request past it is a hang. */
const REQUEST_TIMEOUT_MS = 5000;
/** Bounds one property, shrinking included, so a failing property still ends in time to report. */
const PROPERTY_BUDGET_MS = 20_000;
const POLLUTION_MARK = 'fuzzPolluted';
const STATS = process.env['FUZZ_STATS'] !== undefined;
const statuses = new Map<number, number>();

let api: RunningApi;
let port: number;

// ------------------------------------------------------------------ the namespaces the bodies aim at

/** A quota large enough that valid-looking requests get through to the write path. */
const ROOMY_HARD = {
  pods: '1000000',
  'requests.cpu': '100000',
  'limits.cpu': '100000',
  'requests.memory': '1000Ti',
  'limits.memory': '1000Ti',
  'requests.storage': '1000Ti',
  persistentvolumeclaims: '1000000',
  'count/deployments.apps': '1000000',
  services: '1000000',
  'services.loadbalancers': '1000000',
  'example.com/gpu': '1000000',
  'requests.example.com/gpu': '1000000',
};

async function setUpNamespaces(): Promise<void> {
  const put = async (path: string, body: unknown): Promise<void> => {
    const answer = await api.request('PUT', path, body);
    if (answer.status !== 201) throw new Error(`setting up ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  };
  await put('/v1/namespaces/team-a/resourcequotas/compute', { apiVersion: 'v1', kind: 'ResourceQuota', spec: { hard: ROOMY_HARD } });
  await put('/v1/namespaces/team-a/limitranges/defaults', {
    apiVersion: 'v1',
    kind: 'LimitRange',
    spec: {
      limits: [
        {
          type: 'Container',
          default: { cpu: '300m', memory: '256Mi' },
          defaultRequest: { cpu: '200m', memory: '128Mi' },
          max: { cpu: '8', memory: '64Gi' },
        },
        { type: 'Pod', max: { cpu: '16' } },
        { type: 'PersistentVolumeClaim', max: { storage: '100Ti' } },
      ],
    },
  });
  // One pod fits: the second gets a denial, which is a 200 (webhook) or 403 (REST), not an error.
  await put('/v1/namespaces/team-tight/resourcequotas/compute', {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    spec: { hard: { pods: '1', 'requests.cpu': '100m' } },
  });
  await put('/v1/namespaces/fz-admin/resourcequotas/q0', { apiVersion: 'v1', kind: 'ResourceQuota', spec: { hard: { pods: '1' } } });
  await put('/v1/namespaces/fz-admin/limitranges/l0', {
    apiVersion: 'v1',
    kind: 'LimitRange',
    spec: { limits: [{ type: 'Container', max: { cpu: '1' } }] },
  });
}

// ------------------------------------------------------------------ valid bodies to start from

let fresh = 0;
/** A new suffix per request: repeated review uids or request ids would only replay stored answers. */
const next = (): string => `${Date.now().toString(36)}-${++fresh}`;

const container = (name: string, resources?: Record<string, Record<string, string>>): Body => ({
  name,
  image: 'nginx:1.27',
  ...(resources ? { resources } : {}),
});
const pod = (namespace: string, name: string, id: string, containers: Body[]): Body => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace, uid: `obj-${id}`, labels: { app: 'web' } },
  spec: { containers, restartPolicy: 'Always' },
});

/** An AdmissionReview as kube-apiserver sends it (test/e2e/admission-review.test.ts). */
function review(id: string, operation: string, object: Body, extra: Record<string, Body> = {}): Body {
  const namespace = (extra['namespace'] as string | undefined) ?? 'team-a';
  const resource = (extra['resource'] as Body | undefined) ?? { group: '', version: 'v1', resource: 'pods' };
  const kind = (extra['kind'] as Body | undefined) ?? { group: '', version: 'v1', kind: 'Pod' };
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `review-${id}`,
      kind,
      resource,
      requestKind: kind,
      requestResource: resource,
      name: 'web',
      namespace,
      operation,
      userInfo: { username: 'system:serviceaccount:ci:deployer', uid: 'sa-1', groups: ['system:serviceaccounts', 'system:authenticated'] },
      object,
      oldObject: null,
      dryRun: false,
      options: {
        apiVersion: 'meta.k8s.io/v1',
        kind: operation === 'UPDATE' ? 'UpdateOptions' : operation === 'DELETE' ? 'DeleteOptions' : 'CreateOptions',
      },
      ...extra,
    },
  };
}

const pvc = (id: string, size: string): Body => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name: 'data', namespace: 'team-a', uid: `obj-${id}` },
  spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'fast', resources: { requests: { storage: size } } },
});
const pvcKind = {
  kind: { group: '', version: 'v1', kind: 'PersistentVolumeClaim' },
  resource: { group: '', version: 'v1', resource: 'persistentvolumeclaims' },
};

const REVIEWS: readonly ((id: string) => Body)[] = [
  (id) =>
    review(
      id,
      'CREATE',
      pod('team-a', 'web', id, [container('app', { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } })]),
    ),
  (id) => review(id, 'CREATE', pod('team-a', 'bare', id, [container('app'), container('sidecar', { limits: { cpu: '1' } })])),
  (id) =>
    review(id, 'CREATE', {
      ...(pod('team-a', 'init', id, [container('app')]) as Record<string, Body>),
      spec: { initContainers: [container('init', { requests: { cpu: '2' } })], containers: [container('app')], overhead: { cpu: '10m' } },
    }),
  (id) => review(id, 'UPDATE', pvc(id, '3Gi'), { ...pvcKind, oldObject: pvc(id, '1Gi') }),
  (id) => review(id, 'CREATE', pvc(id, '1Gi'), pvcKind),
  (id) => review(id, 'DELETE', null, { name: 'web', oldObject: pod('team-a', 'web', id, [container('app')]) }),
  (id) =>
    review(
      id,
      'CREATE',
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: 'team-a', uid: `obj-${id}` },
        spec: { replicas: 3, template: { spec: { containers: [container('app')] } } },
      },
      {
        kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
        resource: { group: 'apps', version: 'v1', resource: 'deployments' },
      },
    ),
  (id) =>
    review(
      id,
      'CREATE',
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'lb', namespace: 'team-a', uid: `obj-${id}` },
        spec: { type: 'LoadBalancer', ports: [{ port: 80 }] },
      },
      {
        kind: { group: '', version: 'v1', kind: 'Service' },
        resource: { group: '', version: 'v1', resource: 'services' },
      },
    ),
  (id) =>
    review(
      id,
      'UPDATE',
      { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'web', namespace: 'team-a' }, spec: { replicas: 5 } },
      {
        kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' },
        resource: { group: 'apps', version: 'v1', resource: 'deployments' },
        subResource: 'scale',
        oldObject: { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'web', namespace: 'team-a' }, spec: { replicas: 2 } },
      },
    ),
  (id) => review(id, 'CREATE', pod('team-tight', 'web', id, [container('app', { requests: { cpu: '50m' } })]), { namespace: 'team-tight' }),
  (id) => review(id, 'CREATE', pod('fz-unmanaged', 'web', id, [container('app')]), { namespace: 'fz-unmanaged', dryRun: true }),
];

/** REST reserve bodies (test/e2e/reservations.test.ts and the README). */
const RESERVES: readonly ((id: string) => Body)[] = [
  (id) => ({
    requestId: `req-${id}`,
    kind: 'Pod',
    name: 'web',
    object: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', uid: `uid-${id}` },
      spec: { containers: [container('app', { limits: { cpu: '500m', memory: '64Mi' } })] },
    },
  }),
  (id) => ({
    requestId: `req-${id}`,
    kind: 'Widget',
    resource: 'widgets.example.com',
    name: 'w1',
    resources: { 'example.com/gpu': '1', 'requests.cpu': '10m' },
    ttlSeconds: 600,
  }),
  (id) => ({ kind: 'Widget', resource: 'widgets.example.com', name: `w-${id}`, resources: { 'example.com/gpu': '1' }, dryRun: true }),
  (id) => ({
    requestId: `req-${id}`,
    kind: 'PersistentVolumeClaim',
    apiVersion: 'v1',
    operation: 'UPDATE',
    object: pvc(id, '2Gi'),
    oldObject: pvc(id, '1Gi'),
  }),
  (id) => ({
    kind: 'Deployment',
    apiVersion: 'apps/v1',
    name: 'web',
    object: { metadata: { name: 'web', uid: `uid-${id}` }, spec: { replicas: 1, template: { spec: { containers: [container('app')] } } } },
  }),
];

const QUOTAS: readonly Body[] = [
  {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: 'q1', labels: { team: 'a' }, annotations: { owner: 'x' } },
    spec: { hard: { 'requests.cpu': '2', 'requests.memory': '1.5Gi', pods: '10' } },
  },
  {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: 'q1' },
    spec: { hard: { pods: '5', 'count/deployments.apps': '2' }, scopes: ['NotTerminating', 'NotBestEffort'] },
  },
  {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: 'q1' },
    spec: {
      hard: { 'requests.cpu': '1' },
      scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] },
    },
  },
  { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q0', resourceVersion: '1' }, spec: { hard: { pods: '2' } } },
];

const LIMIT_RANGES: readonly Body[] = [
  {
    apiVersion: 'v1',
    kind: 'LimitRange',
    metadata: { name: 'l1' },
    spec: {
      limits: [
        {
          type: 'Container',
          max: { memory: '1.5Gi', cpu: '2' },
          min: { cpu: '0.1' },
          default: { cpu: '500m' },
          defaultRequest: { cpu: '250m' },
        },
        { type: 'Pod', max: { cpu: '4000m' }, maxLimitRequestRatio: { cpu: '2' } },
        { type: 'PersistentVolumeClaim', max: { storage: '10Gi' }, min: { storage: '1Gi' } },
      ],
    },
  },
  {
    apiVersion: 'v1',
    kind: 'LimitRange',
    metadata: { name: 'l0', resourceVersion: '1' },
    spec: { limits: [{ type: 'Container', max: { cpu: '2' } }] },
  },
];

interface Target {
  readonly name: string;
  readonly method: string;
  /** The path for a body (PUTs take the name from metadata.name when the body has one). */
  path(body: Body): string;
  /** A valid body, new ids each time. */
  readonly seeds: readonly ((id: string) => Body)[];
  readonly webhook?: boolean;
  /** Its largest body (common/edge/json-body.ts): definitions take less than admissions. */
  readonly bodyLimitBytes: number;
}

const ADMISSION_BODY_MAX = bodyLimits('admission', { bodyLimitBytes: DEFAULT_BODY_LIMIT_BYTES }).bytesMax;
const DEFINITION_BODY_MAX = bodyLimits('definition', { bodyLimitBytes: DEFAULT_BODY_LIMIT_BYTES }).bytesMax;

const metadataName = (body: Body): string | undefined => {
  const name = (body as { metadata?: { name?: unknown } } | null)?.metadata?.name;
  return typeof name === 'string' && /^[a-z0-9]{1,10}$/.test(name) ? name : undefined;
};

/** A counterexample names its target (`reserve`) instead of printing its functions. */
const named = (t: Target): Target => Object.assign(t, { [fc.toStringMethod]: () => t.name });
const QUOTA_SEEDS = QUOTAS.map((q) => () => q);
const LIMIT_RANGE_SEEDS = LIMIT_RANGES.map((l) => () => l);

const TARGETS: readonly Target[] = [
  named({
    name: 'validate',
    method: 'POST',
    path: () => '/v1/admission/validate',
    seeds: REVIEWS,
    webhook: true,
    bodyLimitBytes: ADMISSION_BODY_MAX,
  }),
  named({
    name: 'mutate',
    method: 'POST',
    path: () => '/v1/admission/mutate',
    seeds: REVIEWS,
    webhook: true,
    bodyLimitBytes: ADMISSION_BODY_MAX,
  }),
  named({
    name: 'reserve',
    method: 'POST',
    path: () => '/v1/namespaces/team-a/reservations',
    seeds: RESERVES,
    bodyLimitBytes: ADMISSION_BODY_MAX,
  }),
  named({
    name: 'put resourcequota',
    method: 'PUT',
    path: (body) => `/v1/namespaces/fz-admin/resourcequotas/${metadataName(body) ?? 'q1'}`,
    seeds: QUOTA_SEEDS,
    bodyLimitBytes: DEFINITION_BODY_MAX,
  }),
  named({
    name: 'put limitrange',
    method: 'PUT',
    path: (body) => `/v1/namespaces/fz-admin/limitranges/${metadataName(body) ?? 'l1'}`,
    seeds: LIMIT_RANGE_SEEDS,
    bodyLimitBytes: DEFINITION_BODY_MAX,
  }),
];

// ------------------------------------------------------------------ HTTP, and what every answer must satisfy

interface Outgoing {
  readonly method: string;
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: Buffer;
  /** Send the body with Transfer-Encoding: chunked in pieces of this size instead of a Content-Length. */
  readonly chunkBytes?: number;
}

interface Answer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly text: string;
}

const preview = (text: string, max = 600): string =>
  text.length > max ? `${JSON.stringify(text.slice(0, max))}… (${text.length} chars)` : JSON.stringify(text);

function describeRequest(out: Outgoing): string {
  // Whole bodies up to a few KB, so that a failure report is the reproduction.
  const body = out.body
    ? ` body (${out.body.length} bytes${out.chunkBytes ? ', chunked' : ''}): ${preview(out.body.toString('latin1'), 4000)}`
    : ' no body';
  return `${out.method} ${out.path} headers ${JSON.stringify(out.headers ?? {})}${body}`;
}

/** One request over node:http (raw Buffers, any header), failing after REQUEST_TIMEOUT_MS. */
function send(out: Outgoing): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
    };
    const headers: Record<string, string> = { ...out.headers };
    if (out.body && !out.chunkBytes && headers['content-length'] === undefined) headers['content-length'] = String(out.body.length);
    if (out.chunkBytes) headers['transfer-encoding'] = 'chunked';
    const started = performance.now();
    // A connection per request (agent: false): a pooled keep-alive socket that the server closes
    // while it is being reused would read as an ECONNRESET of ours, not the server's fault.
    const request = http.request({ host: '127.0.0.1', port, method: out.method, path: out.path, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        // The server runs in this process: while it blocks the event loop the timer below cannot
        // fire, so an answer that came late is a hang too.
        const elapsedMs = Math.round(performance.now() - started);
        if (elapsedMs > REQUEST_TIMEOUT_MS)
          settle(() =>
            reject(
              new Error(
                `HANG: answered ${response.statusCode} only after ${elapsedMs} ms (the event loop was blocked) to ${describeRequest(out)}`,
              ),
            ),
          );
        else
          settle(() =>
            resolve({ status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks).toString('utf8') }),
          );
      });
      response.on('error', (error) => settle(() => reject(new Error(`reading the answer to ${describeRequest(out)}: ${error.message}`))));
    });
    const timer = setTimeout(() => {
      request.destroy();
      const elapsedMs = Math.round(performance.now() - started);
      settle(() =>
        reject(new Error(`HANG: no answer within ${REQUEST_TIMEOUT_MS} ms (gave up after ${elapsedMs} ms) to ${describeRequest(out)}`)),
      );
    }, REQUEST_TIMEOUT_MS);
    request.on('error', (error) => settle(() => reject(new Error(`sending ${describeRequest(out)}: ${error.message}`))));
    if (out.body && out.chunkBytes) {
      for (let at = 0; at < out.body.length; at += out.chunkBytes) request.write(out.body.subarray(at, at + out.chunkBytes));
      request.end();
    } else {
      request.end(out.body);
    }
  });
}

type Snapshot = Record<string, string>;
let snapshotSql = '';
/** Row counts of every table of the ledger's schema, and the sum of head versions (a head moves without a new row). */
async function snapshot(): Promise<Snapshot> {
  const rows: { s: Snapshot }[] = await api.db.dataSource.query(snapshotSql);
  return rows[0]?.s ?? {};
}
let last: Snapshot = {};

/** A REST denial (403 naming the quota or limit that refused it): its decision is recorded, nothing else. */
const isRestDenial = (answer: Answer, json: unknown): boolean => {
  const details = (json as { details?: { denial?: unknown; stage?: unknown } } | null)?.details;
  return answer.status === 403 && details !== undefined && (details.denial !== undefined || details.stage !== undefined);
};

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * FUZZ_SURVEY=1: record violations instead of failing on the first, and print one request per
 * kind at the end; for finding every bug at once rather than one per property.
 */
const SURVEY = process.env['FUZZ_SURVEY'] !== undefined;
const survey = new Map<string, { count: number; first: string }>();

/** The route of a request, its variable parts blanked, so that violations group by cause. */
function routeOf(method: string, path: string): string {
  const [pathname = '', query] = path.split('?');
  const route = pathname
    .replace(/^\/v1\/namespaces\/[^/]*/, '/v1/namespaces/{ns}')
    .replace(/\/(resourcequotas|limitranges|reservations)\/(?!.*\/(?:history|commit)$)[^/]+/, '/$1/{name}')
    .replace(/\/(resourcequotas|limitranges|reservations)\/[^/]+\/(history|commit)$/, '/$1/{name}/$2');
  const names = query === undefined ? [] : [...new Set(query.split('&').map((pair) => pair.split('=')[0]))].sort();
  return `${method} ${route}${names.length ? `?${names.join('&')}` : ''}`;
}

function violation(kind: string, message: string): void {
  if (!SURVEY) throw new Error(message);
  const entry = survey.get(kind);
  if (entry) entry.count++;
  else survey.set(kind, { count: 1, first: message });
}

/** Property 2: a Kubernetes Status whose code is the HTTP status. */
function checkKubeStatus(answer: Answer, kind: string, context: string): unknown {
  const json = parseJson(answer.text) as Record<string, unknown> | undefined;
  const ok =
    typeof json === 'object' &&
    json !== null &&
    json['kind'] === 'Status' &&
    json['apiVersion'] === 'v1' &&
    json['status'] === 'Failure' &&
    typeof json['message'] === 'string' &&
    json['message'].length > 0 &&
    json['code'] === answer.status;
  if (!ok)
    violation(
      `${kind} ${answer.status} not a Status`,
      `${answer.status} is not a Kubernetes Status (kind, apiVersion v1, status Failure, message, code ${answer.status}): ${preview(answer.text)}\n  request: ${context}`,
    );
  return json;
}

/** Property 3: no table gained or lost a row, no head moved (a REST denial may record its decision). */
function checkNothingWritten(before: Snapshot, after: Snapshot, decisionAllowed: boolean, kind: string, context: string): void {
  const changed = Object.keys({ ...before, ...after }).filter(
    (table) => before[table] !== after[table] && !(decisionAllowed && table === 'admission_decisions'),
  );
  if (changed.length > 0)
    violation(
      `${kind} wrote`,
      `a rejected request wrote: ${changed.map((t) => `${t} ${before[t]} -> ${after[t]}`).join(', ')}\n  request: ${context}`,
    );
}

function checkNotPolluted(kind: string, context: string): void {
  if (Object.prototype.hasOwnProperty.call(Object.prototype, POLLUTION_MARK)) {
    delete (Object.prototype as Record<string, unknown>)[POLLUTION_MARK];
    violation(`${kind} polluted Object.prototype`, `Object.prototype was polluted by ${context}`);
  }
}

/** Property 1, and the answer when there is one (undefined when the request hung, in survey mode). */
async function answerOf(out: Outgoing, kind: string): Promise<Answer | undefined> {
  try {
    const answer = await send(out);
    if (STATS) statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
    return answer;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (!message.startsWith('HANG')) throw error;
    violation(`${kind} HANG`, message);
    return undefined;
  }
}

/**
 * Property 4 in the small: a dry-run admission, REST and webhook, still gets its 200. A GET
 * is not enough: the admission path has its own statements on its own connections.
 * Undefined when both work, else what went wrong.
 */
async function admissionProblem(): Promise<string | undefined> {
  const id = next();
  const rest = await send(
    jsonRequest(byName('reserve'), {
      kind: 'Widget',
      resource: 'widgets.example.com',
      name: `probe-${id}`,
      resources: { 'example.com/gpu': '1' },
      dryRun: true,
    }),
  );
  const webhook = await send(
    jsonRequest(byName('validate'), review(id, 'CREATE', pod('team-a', `probe-${id}`, id, [container('app')]), { dryRun: true })),
  );
  last = await snapshot();
  if (rest.status === 200 && webhook.status === 200) return undefined;
  return `a dry-run reserve answered ${rest.status} ${preview(rest.text, 200)}, a dry-run review ${webhook.status} ${preview(webhook.text, 200)}`;
}

/**
 * Gives the API fresh database connections (its pool makes new ones): a request that broke a
 * connection must not make the runs after it fail, or shrinking would blame them instead.
 */
async function resetApiConnections(): Promise<void> {
  await api.db.dataSource.query(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'quota-ledger-api' AND state = 'idle'`,
  );
  await new Promise((resolve) => setTimeout(resolve, 100));
}

/**
 * Sends one request and checks properties 1–3 (and, for the webhook, that a 200 is an
 * AdmissionReview echoing the uid). After a 5xx, or always with `checkAdmissions`, it also
 * checks that the service still admits: a request that breaks the service for everyone
 * after it is the worse bug, and is reported as such.
 */
async function exchange(out: Outgoing, options: { webhook?: boolean; checkAdmissions?: boolean } = {}): Promise<Answer | undefined> {
  const context = describeRequest(out);
  const kind = routeOf(out.method, out.path);
  const answer = await answerOf(out, kind);
  const before = last;
  const after = await snapshot();
  last = after;
  checkNotPolluted(kind, context);
  if (options.checkAdmissions || (answer && answer.status >= 500)) {
    const problem = await admissionProblem();
    if (problem) {
      await resetApiConnections();
      violation(
        `${kind} breaks later admissions`,
        `after ${context}\n  (answered ${answer?.status ?? 'nothing'} ${preview(answer?.text ?? '', 300)})\n  the service stopped admitting: ${problem}; it admitted again once its database connections were closed`,
      );
    }
  }
  if (!answer) return undefined;
  if (answer.status >= 500) violation(`${kind} ${answer.status}`, `${answer.status} ${preview(answer.text)}\n  request: ${context}`);
  if (answer.status >= 400 && answer.status < 500) {
    const json = checkKubeStatus(answer, kind, context);
    checkNothingWritten(before, after, isRestDenial(answer, json), kind, context);
  }
  if (options.webhook && answer.status === 200) {
    const json = parseJson(answer.text) as
      { apiVersion?: unknown; kind?: unknown; response?: { uid?: unknown; allowed?: unknown } } | undefined;
    const sent = parseJson(out.body?.toString('utf8') ?? '') as { request?: { uid?: unknown } } | undefined;
    const sentUid = sent?.request?.uid;
    const ok =
      json?.apiVersion === 'admission.k8s.io/v1' &&
      json.kind === 'AdmissionReview' &&
      typeof json.response?.allowed === 'boolean' &&
      typeof json.response.uid === 'string' &&
      (typeof sentUid !== 'string' || sentUid === json.response.uid);
    if (!ok)
      violation(
        `${kind} 200 not an AdmissionReview`,
        `a 200 from the webhook that is not an AdmissionReview answer echoing uid ${JSON.stringify(sentUid)}: ${preview(answer.text)}\n  request: ${context}`,
      );
  }
  return answer;
}

const jsonRequest = (target: Target, body: Body, headers: Record<string, string> = {}): Outgoing => ({
  method: target.method,
  path: target.path(body),
  headers: { 'content-type': 'application/json', ...headers },
  body: Buffer.from(serialize(body), 'utf8'),
});

/** A seed per property, from its name: the same whichever properties run (`-t` included). */
function seedFor(name: string): number {
  let hash = BASE_SEED | 0;
  for (const ch of name) hash = (Math.imul(hash, 31) + ch.charCodeAt(0)) | 0;
  return hash;
}

interface CheckOptions<T> {
  /** Counterexamples found earlier, run first whatever the seed: they stay as regression cases once fixed. */
  readonly examples?: readonly T[];
  /** Report the first failure as is: for properties whose every run takes seconds. */
  readonly endOnFailure?: boolean;
  readonly budgetMs?: number;
}

/** fc.assert with a fixed seed per property (reported by fast-check on failure) and a time budget. */
async function check<T>(
  arbitrary: fc.Arbitrary<T>,
  predicate: (value: T) => Promise<void>,
  numRuns: number,
  options: CheckOptions<T> = {},
): Promise<void> {
  await fc.assert(fc.asyncProperty(arbitrary, predicate), {
    seed: seedFor(expect.getState().currentTestName ?? ''),
    numRuns: Math.max(1, Math.round(numRuns * RUNS_SCALE)),
    includeErrorInReport: true,
    examples: (options.examples ?? []).map((example): [T] => [example]),
    ...(options.endOnFailure ? { endOnFailure: true } : {}),
    plugins: [fc.interruptAfterTimeLimit(options.budgetMs ?? PROPERTY_BUDGET_MS)],
  });
}

// ------------------------------------------------------------------ lifecycle

beforeAll(async () => {
  api = await startApi({}, 'qlfuzz');
  port = Number(new URL(api.base).port);
  const tables: { table_name: string }[] = await api.db.dataSource.query(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  // Every table, so a write nobody thought of is caught too (namespace_heads also by its versions: an UPDATE adds no row).
  const counts = tables.map(({ table_name: t }) => `'${t}', (SELECT count(*) FROM "${t}")::text`);
  snapshotSql = `SELECT json_build_object(${[...counts, `'namespace_heads.version'`, `(SELECT coalesce(sum(version), 0) FROM namespace_heads)::text`].join(', ')}) AS s`;
  await setUpNamespaces();
  last = await snapshot();
});

afterAll(async () => {
  if (SURVEY) {
    const kinds = [...survey].sort(([a], [b]) => a.localeCompare(b));
    console.log(
      `survey: ${kinds.length} kinds of violation\n${kinds.map(([k, { count, first }]) => `\n== ${k} (×${count})\n${first}`).join('\n')}`,
    );
  }
  await api?.close();
});

// Property 4: whatever the property before did, the process answers and still reaches its database.
afterEach(async (context) => {
  if (STATS) {
    console.log(
      `${context.task.name}: ${[...statuses]
        .sort(([a], [b]) => a - b)
        .map(([status, n]) => `${status}×${n}`)
        .join(' ')}`,
    );
    statuses.clear();
  }
  const health = await send({ method: 'GET', path: '/healthz' });
  expect([health.status, health.text]).toEqual([200, 'ok']);
  expect((await send({ method: 'GET', path: '/readyz?exclude=queue' })).status).toBe(200);
  const usage = await send({ method: 'GET', path: '/v1/namespaces/team-a/usage' });
  expect(usage.status).toBe(200);
  expect(JSON.parse(usage.text)).toMatchObject({
    namespace: 'team-a',
    quotas: expect.arrayContaining([expect.objectContaining({ name: 'compute' })]),
  });
  const problem = await admissionProblem();
  // The next property must start from a service that admits, whatever this one did to it.
  if (problem) await resetApiConnections();
  expect(problem, 'after this property the service no longer admits').toBeUndefined();
});

// ------------------------------------------------------------------ properties

const targetArb = fc.constantFrom(...TARGETS);
const byName = (name: string): Target => TARGETS.find((t) => t.name === name) as Target;
/** The `at` of a mutation of seed `index` of a target that lands on `path`. */
const at = (seeds: readonly ((id: string) => Body)[], index: number, path: readonly (string | number)[]): number =>
  pathIndex((seeds[index] as (id: string) => Body)('x'), path);

/**
 * Counterexamples the mutation properties found (each answered 500), shrunk by hand to one
 * mutation, and run first on every run. They pass once the service refuses them with a 4xx
 * (or accepts them): they then stay as regression cases.
 */
const MUTATION_EXAMPLES: Readonly<Record<string, readonly (readonly [number, Mutation[]])[]>> = {
  validate: [
    // spec.containers: [null] → TypeError in computePodDefaults (libs/domain/src/limit-range/defaults.ts).
    [0, [{ op: 'set', at: at(REVIEWS, 0, ['request', 'object', 'spec', 'containers', 0]), value: null }]],
    // A NUL in metadata.uid or userInfo.username reaches PostgreSQL: invalid byte sequence for encoding "UTF8": 0x00.
    [0, [{ op: 'set', at: at(REVIEWS, 0, ['request', 'object', 'metadata', 'uid']), value: 'obj\u0000' }]],
    [0, [{ op: 'set', at: at(REVIEWS, 0, ['request', 'userInfo', 'username']), value: 'ci\u0000' }]],
    // A lone surrogate in metadata.uid: jsonb refuses it (invalid input syntax for type json).
    [0, [{ op: 'set', at: at(REVIEWS, 0, ['request', 'object', 'metadata', 'uid']), value: 'obj\ud800' }]],
  ],
  // spec.containers: [null] → the same TypeError, in the mutating webhook.
  mutate: [[0, [{ op: 'set', at: at(REVIEWS, 0, ['request', 'object', 'spec', 'containers', 0]), value: null }]]],
  reserve: [
    // object.spec.containers: [null] → TypeError in defaultPodForAdmission (libs/domain/src/admission/rest.ts);
    // containers: "x" → `pod.spec.containers.map is not a function` there.
    [0, [{ op: 'set', at: at(RESERVES, 0, ['object', 'spec', 'containers', 0]), value: null }]],
    [0, [{ op: 'set', at: at(RESERVES, 0, ['object', 'spec', 'containers']), value: 'x' }]],
    // NUL in name, lone surrogate in requestId: PostgreSQL refuses both when the reservation is written.
    [1, [{ op: 'set', at: at(RESERVES, 1, ['name']), value: 'w\u0000' }]],
    [1, [{ op: 'set', at: at(RESERVES, 1, ['requestId']), value: 'req\ud800' }]],
  ],
  'put resourcequota': [
    // Found by the fuzzer: scopeSelector values ["\u0000"] (also annotations) → 500 when the definition is stored.
    [2, [{ op: 'set', at: at(QUOTA_SEEDS, 2, ['spec', 'scopeSelector', 'matchExpressions', 0, 'values', 0]), value: '\u0000' }]],
    [0, [{ op: 'set', at: at(QUOTA_SEEDS, 0, ['metadata', 'annotations', 'owner']), value: 'x\ud800' }]],
  ],
  'put limitrange': [
    // Found by the fuzzer: an invalid value nested a few thousand levels deep (1,503 objects in the case it
    // found) → goJson (libs/domain/src/validation/field.ts) recurses while printing it into the error
    // message: RangeError: Maximum call stack size exceeded. The same for spec.hard of a ResourceQuota.
    [0, [{ op: 'set', at: at(LIMIT_RANGE_SEEDS, 0, ['spec', 'limits', 0, 'max', 'memory']), value: nested(5000, 'object') }]],
  ],
};

describe('fuzzing the HTTP API', () => {
  it('survives arbitrary JSON on every body route (random values, and random fields under the right envelope)', async () => {
    const envelope = (target: Target): fc.Arbitrary<Body> => {
      const fields = fc.dictionary(weirdKey, weirdValue, { maxKeys: 6 });
      if (target.webhook)
        return fc.record({
          apiVersion: fc.constant('admission.k8s.io/v1'),
          kind: fc.constant('AdmissionReview'),
          request: fields,
        }) as fc.Arbitrary<Body>;
      if (target.name === 'reserve')
        return fc
          .tuple(fc.constantFrom('Pod', 'Widget', 'PersistentVolumeClaim', 'Service'), fields)
          .map(([kind, rest]) => ({ ...rest, kind }));
      const kind = target.name === 'put resourcequota' ? 'ResourceQuota' : 'LimitRange';
      return fields.map((spec) => ({ apiVersion: 'v1', kind, spec }));
    };
    const arbitrary = targetArb.chain((target) =>
      fc.tuple(
        fc.constant(target),
        fc.oneof(
          fc.jsonValue() as fc.Arbitrary<Body>,
          fc.anything().map((v) => JSON.parse(JSON.stringify(v) ?? 'null') as Body),
          envelope(target),
        ),
      ),
    );
    await check(arbitrary, async ([target, body]) => void (await exchange(jsonRequest(target, body), { webhook: target.webhook })), 300, {
      // Found by this property: POST /v1/namespaces/team-a/reservations with 1,313 nested arrays `[[[…1…]]]`
      // (2.6 KB) → 500: class-transformer's plainToInstance recurses before the DTO is validated.
      examples: [[byName('reserve'), nested(5000, 'array')]],
    });
  });

  // Every target gets its own property so that one bug does not hide the others behind it.
  it.each(TARGETS.map((t) => [t.name, t] as const))(
    'survives mutations of valid %s bodies (dropped fields, swapped types, odd quantities and names)',
    async (_name, target) => {
      const arbitrary = fc.tuple(fc.nat({ max: target.seeds.length - 1 }), fc.array(mutation, { minLength: 1, maxLength: 4 }));
      await check(
        arbitrary,
        async ([seed, mutations]) => {
          const body = mutate((target.seeds[seed] as (id: string) => Body)(next()), mutations);
          await exchange(jsonRequest(target, body), { webhook: target.webhook });
        },
        140,
        { examples: (MUTATION_EXAMPLES[target.name] ?? []).map(([seed, mutations]): [number, Mutation[]] => [seed, mutations]) },
      );
    },
  );

  it('puts quantities from the edge of the range everywhere a quantity goes', async () => {
    // Quantities deserve a property of their own: a random mutation lands on one only now and then.
    const arbitrary = fc.tuple(targetArb, fc.nat(), weirdQuantity);
    await check(
      arbitrary,
      async ([target, pick, quantity]) => {
        const body = setQuantity((target.seeds[pick % target.seeds.length] as (id: string) => Body)(next()), pick, quantity);
        await exchange(jsonRequest(target, body), { webhook: target.webhook });
      },
      250,
    );
  });

  describe('query parameters of the audit routes', () => {
    type Pairs = [[string, string], boolean][];
    const overflow = (name: string): [Pairs, boolean] => [[[[name, '9999999999999999999'], false]], false];
    const one = (name: string, value: string): [Pairs, boolean] => [[[[name, value], false]], false];
    /**
     * What the fuzzer found on these routes (each a 500): a position past PostgreSQL's bigint
     * (`value "9999999999999999999" is out of range for type bigint`), a zone offset past
     * PostgreSQL's ±15:59 (`time zone displacement out of range`), ISO 8601 forms IsISO8601
     * accepts and PostgreSQL does not (`2026`, `2026-W01`), a NUL in `requester`.
     */
    const QUERY_EXAMPLES: Readonly<Record<string, readonly [Pairs, boolean][]>> = {
      '/v1/namespaces/team-a/usage': [one('at', '2026-01-01T00:00:00+16:00')],
      '/v1/namespaces/team-a/events': [overflow('after')],
      '/v1/namespaces/team-a/events/export': [overflow('after')],
      '/v1/namespaces/team-a/decisions': [
        one('requester', 'a\u0000a'),
        one('since', '2026'),
        one('until', '2026-W01'),
        one('since', '2026-01-01T00:00:00+16:00'),
        overflow('after'),
      ],
      '/v1/namespaces/team-a/decisions/export': [one('requester', 'a\u0000a'), overflow('after')],
      '/v1/namespaces/team-a/reservations': [one('olderThan', '2026-01-01T00:00:00+16:00')],
      '/v1/namespaces/team-a/resourcequotas/compute/history': [overflow('after')],
      '/v1/namespaces/team-a/limitranges/defaults/history': [overflow('after')],
    };
    const routes: readonly (readonly [string, Readonly<Record<string, fc.Arbitrary<string>>>])[] = [
      ['/v1/namespaces/team-a/usage', { at: weirdTime }],
      ['/v1/namespaces/team-a/events', { after: weirdInteger, limit: weirdInteger }],
      ['/v1/namespaces/team-a/events/export', { after: weirdInteger, until: weirdInteger }],
      [
        '/v1/namespaces/team-a/decisions',
        {
          allowed: fc.constantFrom('true', 'false', 'TRUE', '1', ''),
          since: weirdTime,
          until: weirdTime,
          requester: weirdString,
          after: weirdInteger,
          limit: weirdInteger,
        },
      ],
      [
        '/v1/namespaces/team-a/decisions/export',
        {
          allowed: fc.constantFrom('true', 'false', 'yes'),
          since: weirdTime,
          until: weirdTime,
          requester: weirdString,
          after: weirdInteger,
        },
      ],
      [
        '/v1/namespaces/team-a/reservations',
        {
          state: fc.constantFrom('reserved', 'committed', 'released', 'Reserved', ''),
          olderThan: weirdTime,
          after: fc.oneof(weirdString, fc.base64String()),
          limit: weirdInteger,
        },
      ],
      ['/v1/namespaces/team-a/resourcequotas/compute/history', { after: weirdInteger, limit: weirdInteger }],
      ['/v1/namespaces/team-a/limitranges/defaults/history', { after: weirdInteger, limit: weirdInteger }],
    ];
    it.each(routes)('GET %s survives out-of-range and malformed values', async (path, params) => {
      const names = Object.keys(params);
      const param = fc.oneof(
        {
          arbitrary: fc.constantFrom(...names).chain((name) => fc.tuple(fc.constant(name), params[name] as fc.Arbitrary<string>)),
          weight: 6,
        },
        // Repeated names arrive as arrays, bracketed ones as other keys; unknown names must be refused, not ignored into a crash.
        {
          arbitrary: fc.tuple(
            fc.constantFrom(...names.map((n) => `${n}[]`), ...names.map((n) => `${n}[a]`), ...NASTY_KEYS, 'color'),
            weirdString,
          ),
          weight: 1,
        },
      );
      const arbitrary = fc.tuple(fc.array(fc.tuple(param, fc.boolean()), { maxLength: 4 }), fc.boolean());
      await check(
        arbitrary,
        async ([pairs, bareKey]) => {
          const query = pairs
            .map(([[name, value], raw]) =>
              bareKey && value === '' ? percentEncode(name) : `${percentEncode(name)}=${percentEncode(value, raw)}`,
            )
            .join('&');
          await exchange({ method: 'GET', path: `${path}${query ? `?${query}` : ''}` });
        },
        90,
        { examples: QUERY_EXAMPLES[path] ?? [] },
      );
    });
  });

  it('survives odd characters in every path parameter, URL-encoded or raw', async () => {
    const quotaBody = serialize({ apiVersion: 'v1', kind: 'ResourceQuota', spec: { hard: { pods: '1' } } });
    const limitBody = serialize({ apiVersion: 'v1', kind: 'LimitRange', spec: { limits: [{ type: 'Container', max: { cpu: '1' } }] } });
    const reserveBody = serialize({ kind: 'Widget', resource: 'widgets.example.com', resources: { 'example.com/gpu': '1' }, dryRun: true });
    const routes: readonly (readonly [string, string, string | undefined])[] = [
      ['GET', '/v1/namespaces/{ns}/resourcequotas/{name}', undefined],
      ['PUT', '/v1/namespaces/{ns}/resourcequotas/{name}', quotaBody],
      ['DELETE', '/v1/namespaces/{ns}/resourcequotas/{name}', undefined],
      ['GET', '/v1/namespaces/{ns}/resourcequotas/{name}/history', undefined],
      ['GET', '/v1/namespaces/{ns}/resourcequotas', undefined],
      ['PUT', '/v1/namespaces/{ns}/limitranges/{name}', limitBody],
      ['DELETE', '/v1/namespaces/{ns}/limitranges/{name}', undefined],
      ['GET', '/v1/namespaces/{ns}/limitranges/{name}/history', undefined],
      ['POST', '/v1/namespaces/{ns}/reservations', reserveBody],
      ['GET', '/v1/namespaces/{ns}/reservations/{name}', undefined],
      ['POST', '/v1/namespaces/{ns}/reservations/{name}/commit', undefined],
      ['DELETE', '/v1/namespaces/{ns}/reservations/{name}', undefined],
      ['GET', '/v1/namespaces/{ns}/usage', undefined],
      ['GET', '/v1/namespaces/{ns}/events', undefined],
      ['GET', '/v1/namespaces/{ns}/decisions', undefined],
      ['GET', '/v1/namespaces/{ns}/events/export', undefined],
    ];
    // A valid namespace of its own: a PUT or DELETE that gets through must not change what the other properties rely on.
    const arbitrary = fc.tuple(fc.constantFrom(...routes), fc.oneof(weirdSegment, fc.constant('fz-paths')), weirdSegment);
    await check(
      arbitrary,
      async ([[method, template, body], ns, name]) => {
        const path = template.replace('{ns}', ns).replace('{name}', name);
        await exchange({ method, path, ...(body ? { headers: { 'content-type': 'application/json' }, body: Buffer.from(body) } : {}) });
      },
      300,
    );
  });

  it('survives broken framing of valid bodies: invalid UTF-8, content types and encodings, empty bodies, duplicate keys, __proto__', async () => {
    const framing = fc.oneof(
      fc.record({
        kind: fc.constant('invalid-utf8' as const),
        at: fc.nat(),
        bytes: fc.constantFrom(
          [0x80],
          [0xff],
          [0xfe],
          [0xc0, 0xaf],
          [0xc3],
          [0xed, 0xa0, 0x80],
          [0xf4, 0x90, 0x80, 0x80],
          [0xe2, 0x82],
          [0xf0, 0x9f, 0x98],
        ),
      }),
      fc.record({
        kind: fc.constant('content-type' as const),
        value: fc.constantFrom(
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          'application/yaml',
          'application/merge-patch+json',
          'application/json; charset=latin1',
          'application/json; charset=utf-16',
          'application/json; charset=utf-7',
          'application/json; charset=',
          'application/json; charset=UTF-8',
          'APPLICATION/JSON',
          'application/json;;;',
          'application/*',
          '*/*',
          'application',
          '',
        ),
      }),
      fc.record({
        kind: fc.constant('content-encoding' as const),
        value: fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'x-bogus', 'gzip, gzip', 'compress'),
        compress: fc.boolean(),
      }),
      fc.record({
        kind: fc.constant('body-text' as const),
        text: fc.constantFrom(
          '',
          ' ',
          '\n',
          'null',
          'true',
          '0',
          '""',
          '[]',
          '{}',
          '\ufeff{}',
          '{"a":1}garbage',
          '{"a":1}{"a":2}',
          '{',
          '}',
          '{"a":',
          '{"a":1,}',
          "{'a':1}",
          '{a:1}',
          'NaN',
          '[1,2',
          '\u0000',
        ),
      }),
      fc.record({ kind: fc.constant('duplicate-key' as const), key: weirdKey, value: weirdValue }),
      fc.record({
        kind: fc.constant('proto-keys' as const),
        where: fc.nat(),
        key: fc.constantFrom('__proto__', 'constructor', 'prototype'),
      }),
      fc.record({ kind: fc.constant('headers' as const), remoteUser: weirdString, requestId: weirdString }),
    );
    const arbitrary = fc.tuple(targetArb, fc.nat(), framing);
    await check(
      arbitrary,
      async ([target, pick, frame]) => {
        const body = (target.seeds[pick % target.seeds.length] as (id: string) => Body)(next());
        let text = serialize(body);
        let bytes = Buffer.from(text, 'utf8');
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        switch (frame.kind) {
          case 'invalid-utf8': {
            const at = frame.at % (bytes.length + 1);
            bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(frame.bytes), bytes.subarray(at)]);
            break;
          }
          case 'content-type':
            headers['content-type'] = frame.value;
            break;
          case 'content-encoding':
            headers['content-encoding'] = frame.value;
            if (frame.compress && frame.value === 'gzip') bytes = gzipSync(bytes);
            break;
          case 'body-text':
            bytes = Buffer.from(frame.text, 'utf8');
            break;
          case 'duplicate-key':
            text = `{${JSON.stringify(frame.key)}:${serialize(frame.value)},${text.slice(1, -1)},${JSON.stringify(frame.key)}:${serialize(frame.value)}}`;
            bytes = Buffer.from(text, 'utf8');
            break;
          case 'proto-keys': {
            // A prototype-polluting payload: JSON.parse keeps these as own keys, an unwary merge would not.
            const payload: Body =
              frame.key === 'constructor'
                ? { prototype: { [POLLUTION_MARK]: true } }
                : { [POLLUTION_MARK]: true, allowed: true, kind: 'Status' };
            const mutated = mutate(body, [{ op: 'add', at: frame.where, key: frame.key, value: payload }]);
            bytes = Buffer.from(serialize(mutated), 'utf8');
            break;
          }
          case 'headers':
            // Header values must be visible ASCII (or latin1) for node:http to send them at all.
            headers['x-remote-user'] = Buffer.from(frame.remoteUser, 'utf8')
              .toString('latin1')
              .replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');
            headers['x-request-id'] = frame.requestId.replace(/[^\t\x20-\x7e]/g, '?');
            break;
          default: {
            const never: never = frame;
            throw new Error(`unknown framing ${JSON.stringify(never)}`);
          }
        }
        await exchange(
          { method: target.method, path: target.path(body), headers, body: bytes },
          { webhook: target.webhook && frame.kind !== 'invalid-utf8' },
        );
      },
      300,
    );
  });

  it('survives deeply nested JSON anywhere in a valid body', async () => {
    const arbitrary = fc.tuple(
      targetArb,
      fc.nat(),
      fc.nat(),
      fc.integer({ min: 1, max: 200_000 }),
      fc.constantFrom<'array' | 'object'>('array', 'object'),
    );
    await check<[Target, number, number, number, 'array' | 'object']>(
      arbitrary,
      async ([target, pick, where, depth, kind]) => {
        const body = mutate((target.seeds[pick % target.seeds.length] as (id: string) => Body)(next()), [
          { op: 'set', at: where, value: nested(depth, kind) },
        ]);
        await exchange(jsonRequest(target, body), { webhook: target.webhook });
      },
      60,
      {
        examples: [
          // Found: a reserve body that is 1,314 nested arrays → 500 (class-transformer recursion, as above).
          [byName('reserve'), 0, 0, 5000, 'array'],
          // Found: spec.hard.pods or a LimitRange max nested ~3,000 deep → 500 (goJson recursion in the error message).
          [byName('put resourcequota'), 0, at(QUOTA_SEEDS, 0, ['spec', 'hard', 'pods']), 5000, 'object'],
          [byName('put limitrange'), 0, at(LIMIT_RANGE_SEEDS, 0, ['spec', 'limits', 0, 'max', 'memory']), 5000, 'object'],
        ],
      },
    );
  });

  it('keeps admitting after any one bad request: no request breaks the service for the requests after it', async () => {
    // Only property 4 is judged here (the request's own answer is the other properties' business),
    // so that shrinking keeps what breaks the service rather than what merely fails.
    const deep = fc.option(
      fc.tuple(fc.nat(), fc.integer({ min: 1000, max: 200_000 }), fc.constantFrom<'array' | 'object'>('array', 'object')),
      { freq: 2 },
    );
    const arbitrary = fc.tuple(targetArb, fc.nat(), fc.array(mutation, { maxLength: 3 }), deep);
    await check<[Target, number, Mutation[], [number, number, 'array' | 'object'] | null]>(
      arbitrary,
      async ([target, pick, mutations, nesting]) => {
        const seed = (target.seeds[pick % target.seeds.length] as (id: string) => Body)(next());
        const mutated = mutate(seed, mutations);
        const body = nesting ? mutate(mutated, [{ op: 'set', at: nesting[0], value: nested(nesting[1], nesting[2]) }]) : mutated;
        const out = jsonRequest(target, body);
        const answer = await answerOf(out, routeOf(out.method, out.path));
        const problem = await admissionProblem();
        if (problem) {
          await resetApiConnections();
          violation(
            `${routeOf(out.method, out.path)} breaks later admissions`,
            `after ${describeRequest(out)}\n  (answered ${answer?.status ?? 'nothing'} ${preview(answer?.text ?? '', 300)})\n  the service stopped admitting: ${problem}; it admitted again once its database connections were closed`,
          );
        }
      },
      60,
      {
        // Found: one review whose object.metadata.uid is 200,000 nested arrays (400 KB). pg overflows
        // the stack while serialising it as a query parameter of the named statement "ledger_read",
        // after marking that statement prepared on the connection: from then on every admission and
        // every PUT on that connection fails with `prepared statement "ledger_read" does not exist`
        // (500), as long as traffic keeps the connection from idling out of the pool (10 s).
        examples: [[byName('validate'), 0, [], [at(REVIEWS, 0, ['request', 'object', 'metadata', 'uid']), 200_000, 'array']]],
      },
    );
  });

  it("answers a body over its route's limit (BODY_LIMIT_BYTES, less for definitions) with 413, however it is framed, and one just under it with no 5xx", async () => {
    const arbitrary = fc.tuple(
      targetArb,
      fc.constantFrom('content-length', 'chunked', 'gzip-bomb', 'under-limit'),
      fc.integer({ min: 1, max: 1024 * 1024 }),
    );
    await check(
      arbitrary,
      async ([target, framing, extra]) => {
        const seed = (target.seeds[0] as (id: string) => Body)(next());
        // Padding in a field every body may carry, so that only the size is wrong.
        const pad = (size: number): Buffer => {
          const text = serialize(seed);
          // `{"zz":"` + filler + `",` + the body without its `{`: exactly `size` bytes (the seeds are ASCII).
          const filler = 'x'.repeat(Math.max(0, size - text.length - 8));
          return Buffer.from(`{"zz":"${filler}",${text.slice(1)}`, 'utf8');
        };
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        let out: Outgoing;
        const limit = target.bodyLimitBytes;
        const under = Math.max(limit - extra, serialize(seed).length + 16);
        if (framing === 'under-limit') out = { method: target.method, path: target.path(seed), headers, body: pad(under) };
        else if (framing === 'gzip-bomb')
          out = {
            method: target.method,
            path: target.path(seed),
            headers: { ...headers, 'content-encoding': 'gzip' },
            body: gzipSync(pad(limit + extra)),
          };
        else
          out = {
            method: target.method,
            path: target.path(seed),
            headers,
            body: pad(limit + extra),
            ...(framing === 'chunked' ? { chunkBytes: 64 * 1024 } : {}),
          };
        const answer = await exchange(out, { webhook: target.webhook });
        if (!answer) return;
        const kind = `${routeOf(out.method, out.path)} ${framing}`;
        if (framing === 'under-limit' && answer.status === 413)
          violation(`${kind} 413`, `413 for a body of ${out.body?.length} bytes, under the limit: ${describeRequest(out)}`);
        if (framing !== 'under-limit' && answer.status !== 413)
          violation(
            `${kind} not 413`,
            `${answer.status}, not 413, for a ${framing} body of ${limit + extra} bytes: ${describeRequest(out)}`,
          );
      },
      30,
    );
  });

  it('survives huge flat arrays and objects of many keys, as the whole body or anywhere in a valid one, on every route', async () => {
    // The first attack finding: a 3.2 MB `{"junk":[0,0,…]}` to /healthz (no token needed) was parsed
    // before routing and walked with a path string per element: ~100× its size in memory.
    const everyRoute: readonly Target[] = [
      ...TARGETS,
      ...(
        [
          ['GET', '/healthz'],
          ['POST', '/healthz'],
          ['GET', '/readyz'],
          ['GET', '/metrics'],
          ['POST', '/v1/nothing-here'],
          ['GET', '/v1/namespaces/team-a/usage'],
          ['POST', '/v1/namespaces/team-a/reservations/nope/commit'],
          ['DELETE', '/v1/namespaces/team-a/reservations/nope'],
          ['PUT', '/v1/namespaces/team-a/events'],
        ] as const
      ).map(([method, path]) => named({ name: `${method} ${path}`, method, path: () => path, seeds: [() => ({})], bodyLimitBytes: 0 })),
    ];
    type Shape = ['array' | 'object', number];
    const shape: fc.Arbitrary<Shape> = fc.tuple(
      fc.constantFrom<'array' | 'object'>('array', 'array', 'object'),
      fc.oneof(
        fc.integer({ min: 1, max: 5_000 }),
        fc.integer({ min: 150_000, max: 260_000 }),
        fc.integer({ min: 1_000_000, max: 1_600_000 }),
      ),
    );
    const arbitrary = fc.tuple(fc.constantFrom(...everyRoute), fc.nat(), shape, fc.boolean());
    await check<[Target, number, Shape, boolean]>(
      arbitrary,
      async ([target, where, [kind, length], whole]) => {
        // Objects of a million keys are slow to build here, not there: keep them under the values limit's neighbourhood.
        const size = kind === 'object' ? Math.min(length, 260_000) : length;
        const big = wide(size, kind);
        const seed = (target.seeds[where % target.seeds.length] as (id: string) => Body)(next());
        const body = whole ? big : mutate(seed, [{ op: 'set', at: where, value: big }]);
        const out = jsonRequest(target, body);
        const answer = await exchange(out, { webhook: target.webhook });
        if (!answer || target.bodyLimitBytes === 0) return;
        // A body route never accepts more values than its limit, however they are arranged.
        const values = size + (whole ? 1 : 2);
        if (values > 200_000 && answer.status < 400)
          violation(`${target.name} accepted a wide body`, `${answer.status} for ${values} values: ${describeRequest(out)}`);
      },
      40,
      { examples: [[byName('validate'), 0, ['array', 1_600_000], true]] },
    );
  });

  it('survives truncated bodies and odd request lines and headers on a raw socket', async () => {
    const arbitrary = fc.tuple(targetArb, fc.nat(), rawRequest);
    await check(
      arbitrary,
      async ([target, pick, make]) => {
        const body = Buffer.from(serialize((target.seeds[pick % target.seeds.length] as (id: string) => Body)(next())), 'utf8');
        const { bytes, halfClose } = make(target.method, target.path(null), body);
        await rawExchange(bytes, halfClose);
      },
      150,
    );
  });

  it('answers a pod with very many containers (a body under the limit) within the timeout, without blocking the process', async () => {
    // CPU per container, not bytes, is what this costs: the body stays under BODY_LIMIT_BYTES.
    const containers = (n: number): Body[] =>
      Array.from({ length: n }, (_, i): Body => (i % 2 ? { name: `c${i}`, resources: { requests: { cpu: '1m' } } } : { name: `c${i}` }));
    const arbitrary = fc.tuple(
      fc.constantFrom(byName('validate'), byName('mutate'), byName('reserve')),
      fc.integer({ min: 1, max: 80_000 }),
    );
    await check<[Target, number]>(
      arbitrary,
      async ([target, n]) => {
        const id = next();
        const object: Body = {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'wide', uid: `obj-${id}` },
          spec: { containers: containers(n) },
        };
        const body: Body = target.webhook ? review(id, 'CREATE', object) : { kind: 'Pod', name: 'wide', object };
        const out = jsonRequest(target, body);
        expect(out.body?.length ?? 0).toBeLessThan(DEFAULT_BODY_LIMIT_BYTES);
        await exchange(out, { webhook: target.webhook });
      },
      4,
      {
        // Found: 80,000 containers (2.9 MB) block the event loop for ~7.5 s (validate), ~21 s (mutate)
        // and ~16 s (reserve) on this 2-core machine; every other request, probes included, waits.
        // 40,000 containers: ~3 s (validate), ~4.7 s (mutate). Each run is seconds long: no shrinking.
        examples: [[byName('mutate'), 80_000]],
        endOnFailure: true,
        budgetMs: 55_000,
      },
    );
  });

  it('keeps a malformed request from failing the well-formed ones decided in the same batch', async () => {
    // Requests for one namespace that arrive together are decided in one transaction (README,
    // "How a decision is made"): one that PostgreSQL refuses must not take the others down.
    type Field = 'name' | 'requestId' | 'username' | 'uid';
    const arbitrary = fc.tuple(
      fc.constantFrom<'reserve' | 'validate'>('reserve', 'validate'),
      fc.constantFrom<Field>('name', 'requestId', 'username', 'uid'),
      weirdString,
      fc.integer({ min: 2, max: 8 }),
    );
    await check<['reserve' | 'validate', Field, string, number]>(
      arbitrary,
      async ([kind, field, poison, companions]) => {
        const make = (value: string | undefined): Outgoing => {
          const id = next();
          if (kind === 'reserve') {
            const body: Body = {
              kind: 'Widget',
              resource: 'widgets.example.com',
              name: field === 'name' && value !== undefined ? value : `w-${id}`,
              requestId: field === 'requestId' && value !== undefined ? value : `req-${id}`,
              resources: { 'example.com/gpu': '1' },
            };
            return jsonRequest(byName('reserve'), body);
          }
          const object = pod(
            'team-a',
            field === 'name' && value !== undefined ? value : `p-${id}`,
            field === 'uid' && value !== undefined ? value : id,
            [container('app', { requests: { cpu: '1m' } })],
          );
          const body = review(id, 'CREATE', object, field === 'username' && value !== undefined ? { userInfo: { username: value } } : {});
          return jsonRequest(byName('validate'), body);
        };
        // The malformed one in the middle: the first request of a burst runs alone, the ones behind it are batched.
        const position = Math.floor(companions / 2);
        const requests = Array.from({ length: companions + 1 }, (_, i) => make(i === position ? poison : undefined));
        const malformed = requests[position] as Outgoing;
        const answers = await Promise.all(requests.map((request) => answerOf(request, `${kind} batched with a malformed ${field}`)));
        last = await snapshot();
        // Only the well-formed ones are judged here: the malformed one's own answer is the other properties' business.
        answers.forEach((answer, i) => {
          if (i === position || !answer) return;
          const context = `well-formed ${describeRequest(requests[i] as Outgoing)}\n  sent at once with ${companions - 1} others and the malformed ${describeRequest(malformed)} (answered ${answers[position]?.status})`;
          if (answer.status >= 500)
            violation(
              `${kind} batched with a malformed ${field}: ${answer.status}`,
              `${answer.status} ${preview(answer.text)}\n  request: ${context}`,
            );
          else if (answer.status >= 400) checkKubeStatus(answer, `${kind} batched`, context);
        });
      },
      30,
      {
        // Found: 12 reserves sent at once, one named "poison\u0000": the poison and the two requests
        // batched with it got 500 (the batch's one statement failed); likewise a webhook review whose
        // userInfo.username holds a NUL took two innocent reviews down with it.
        examples: [
          ['reserve', 'name', 'poison\u0000', 8],
          ['validate', 'username', 'evil\u0000', 8],
        ],
      },
    );
  });
});

// ------------------------------------------------------------------ helpers of single properties

/** Keys whose value maps resource names to quantities, in every kind of body here. */
const QUANTITY_MAPS = new Set([
  'requests',
  'limits',
  'hard',
  'max',
  'min',
  'default',
  'defaultRequest',
  'maxLimitRequestRatio',
  'resources',
  'overhead',
  'capacity',
]);

/** The body with the quantity at `pick` (among all of its quantity strings) replaced; unchanged if it has none. */
function setQuantity(body: Body, pick: number, quantity: string): Body {
  const found: (string | number)[][] = [];
  const walk = (node: Body, path: (string | number)[], isMap: boolean): void => {
    if (Array.isArray(node)) node.forEach((v, i) => walk(v as Body, [...path, i], false));
    else if (node && typeof node === 'object' && !(node instanceof Raw) && !(node instanceof DupKeys)) {
      for (const [k, v] of Object.entries(node)) {
        if (isMap && typeof v === 'string') found.push([...path, k]);
        else walk(v, [...path, k], QUANTITY_MAPS.has(k));
      }
    }
  };
  walk(body, [], false);
  const path = found[pick % Math.max(found.length, 1)];
  if (!path) return body;
  const set = (node: Body, rest: (string | number)[]): Body => {
    const [step, ...tail] = rest;
    if (step === undefined) return quantity;
    if (Array.isArray(node)) return node.map((v, i) => (i === step ? set(v as Body, tail) : (v as Body)));
    return Object.fromEntries(Object.entries(node as Record<string, Body>).map(([k, v]) => [k, k === step ? set(v, tail) : v]));
  };
  return set(body, path);
}

/**
 * Raw bytes for a method, path and valid body. `halfClose` ends the client's side after
 * writing: only for requests that can never be complete (a truncated body), since Node
 * aborts a request in flight when its client half-closes, and the handler of a complete
 * one may still write after the socket is gone (an abandoned request, not a rejected one).
 */
type RawMaker = (method: string, path: string, body: Buffer) => { bytes: Buffer; halfClose: boolean };

const head = (lines: readonly string[]): Buffer => Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');

/** Requests a well-behaved client never sends: Node's parser or the body reader must refuse them, and promptly. */
const rawRequest: fc.Arbitrary<RawMaker> = fc.oneof(
  fc.double({ min: 0, max: 1, noNaN: true }).map((fraction): RawMaker => (method, path, body) => ({
    // The connection ends part-way through the body.
    bytes: Buffer.concat([
      head([
        `${method} ${path} HTTP/1.1`,
        'Host: x',
        'Content-Type: application/json',
        `Content-Length: ${body.length}`,
        'Connection: close',
      ]),
      body.subarray(0, Math.min(body.length - 1, Math.floor(body.length * fraction))),
    ]),
    halfClose: true,
  })),
  fc.nat().map((cut): RawMaker => (method, path, body) => ({
    // A Content-Length shorter than the body: the rest would read as a next request (Connection: close ends it first).
    bytes: Buffer.concat([
      head([
        `${method} ${path} HTTP/1.1`,
        'Host: x',
        'Content-Type: application/json',
        `Content-Length: ${cut % (body.length + 1)}`,
        'Connection: close',
      ]),
      body,
    ]),
    halfClose: false,
  })),
  fc
    .constantFrom(
      ['Content-Length: 10', 'Transfer-Encoding: chunked'],
      ['Content-Length: 10', 'Content-Length: 11'],
      ['Content-Length: -1'],
      ['Content-Length: 1e3'],
      ['Content-Length: 99999999999999999999'],
      ['Content-Length: 0x10'],
      ['Transfer-Encoding: gzip'],
      ['Transfer-Encoding: chunked, chunked'],
      ['Transfer-Encoding: identity'],
      ['Expect: 100-continue'],
      ['Expect: tea'],
      ['X-Foo Bar: 1'],
      ['NoColonHere'],
      ['X-Folded: a', ' continued'],
      [`X-Long: ${'a'.repeat(20_000)}`],
      ['X-Latin1: \u00e9\u00ff'],
      ['Content-Type: application/json', 'Content-Type: text/plain'],
      ['Content-Type: application/json; charset=utf-32'],
      ['Authorization: Bearer '],
      ['Authorization: Basic Zm9vOmJhcg=='],
      ['X-Request-Id: ../../\u00e9'],
      ['X-Remote-User: \u00ff\u00fe'],
    )
    .map((extra): RawMaker => (method, path, body) => {
      const framed = extra.some((h) => /^(content-length|transfer-encoding)/i.test(h));
      return {
        bytes: Buffer.concat([
          head([
            `${method} ${path} HTTP/1.1`,
            'Host: x',
            'Content-Type: application/json',
            ...extra,
            ...(framed ? [] : [`Content-Length: ${body.length}`]),
            'Connection: close',
          ]),
          body,
        ]),
        // A lying length or encoding may leave the server waiting for bytes that never come.
        halfClose: framed,
      };
    }),
  fc.constantFrom('zz', '-1', 'ffffffffffffffffff', '5;ext=1', ' 5', '5 ', '0', '').map((size): RawMaker => (method, path, body) => ({
    // A chunk size line that lies or does not parse, and no terminating chunk.
    bytes: Buffer.concat([
      head([`${method} ${path} HTTP/1.1`, 'Host: x', 'Content-Type: application/json', 'Transfer-Encoding: chunked', 'Connection: close']),
      Buffer.from(`${size}\r\n`),
      body,
      Buffer.from('\r\n'),
    ]),
    halfClose: true,
  })),
  fc
    .constantFrom<readonly [string | null, string | null, string]>(
      ['put', null, 'HTTP/1.1'],
      ['PUTS', null, 'HTTP/1.1'],
      ['GET', null, 'HTTP/1.1'],
      ['OPTIONS', null, 'HTTP/1.1'],
      ['TRACE', null, 'HTTP/1.1'],
      ['PATCH', null, 'HTTP/1.1'],
      ['DELETE', null, 'HTTP/1.1'],
      [null, null, 'HTTP/1.0'],
      [null, null, 'HTTP/2.0'],
      [null, null, 'HTTP/9.9'],
      [null, '*', 'HTTP/1.1'],
      [null, 'http://127.0.0.1{path}', 'HTTP/1.1'],
      [null, '/{path}', 'HTTP/1.1'],
      [null, '{path}#fragment', 'HTTP/1.1'],
      [null, '{path}?%ff=%ff', 'HTTP/1.1'],
      [null, '{path}/\u00e9', 'HTTP/1.1'],
      [null, '{path}\u0000', 'HTTP/1.1'],
    )
    .map(([verb, target, version]): RawMaker => (method, path, body) => ({
      bytes: Buffer.concat([
        head([
          `${verb ?? method} ${(target ?? '{path}').replace('{path}', path)} ${version}`,
          'Host: x',
          'Content-Type: application/json',
          `Content-Length: ${body.length}`,
          'Connection: close',
        ]),
        body,
      ]),
      halfClose: false,
    })),
);

/**
 * Writes raw bytes on a socket and reads until the server closes it. Every HTTP status in
 * what comes back must be below 500; the first answer, when the application produced it
 * (it carries X-Request-Id) and it is a 4xx, must be a Status; nothing may be written unless
 * some answer was a 2xx (a Content-Length shorter than the body can leave a valid request).
 */
async function rawExchange(bytes: Buffer, halfClose: boolean): Promise<void> {
  const context = `raw bytes ${preview(bytes.toString('latin1'), 400)}`;
  const kind = `raw ${preview(bytes.toString('latin1').split('\r\n')[0] ?? '', 60)}`;
  const received = await new Promise<Buffer | undefined>((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(bytes);
      if (halfClose) socket.end();
    });
    const timer = setTimeout(() => {
      socket.destroy();
      try {
        violation(
          `${kind} HANG`,
          `HANG: the server neither answered nor closed within ${REQUEST_TIMEOUT_MS} ms: ${context}; got ${preview(Buffer.concat(chunks).toString('latin1'), 200)}`,
        );
        resolve(undefined);
      } catch (error) {
        reject(error);
      }
    }, REQUEST_TIMEOUT_MS);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // A reset after the answer is the server hanging up on a client it stopped trusting: fine.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
  });
  const before = last;
  const after = await snapshot();
  last = after;
  checkNotPolluted(kind, context);
  if (received === undefined) return;
  const text = received.toString('latin1');
  const codes = [...text.matchAll(/HTTP\/1\.[01] (\d{3})/g)].map((m) => Number(m[1]));
  const bad = codes.find((s) => s >= 500);
  if (bad !== undefined) {
    const problem = await admissionProblem();
    if (problem) {
      await resetApiConnections();
      violation(`${kind} breaks later admissions`, `after ${context} the service stopped admitting: ${problem}`);
    }
    violation(`${kind} ${bad}`, `${bad} on a raw socket: ${preview(text)}\n  request: ${context}`);
  }
  const [first] = codes;
  const split = text.indexOf('\r\n\r\n');
  if (first !== undefined && first >= 400 && split > 0 && /\r\nx-request-id:/i.test(text.slice(0, split))) {
    const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, split));
    const bodyText = Buffer.from(text.slice(split + 4), 'latin1')
      .subarray(0, length ? Number(length[1]) : undefined)
      .toString('utf8');
    checkKubeStatus({ status: first, headers: {}, text: bodyText }, kind, context);
  }
  if (!codes.some((s) => s < 300)) checkNothingWritten(before, after, false, kind, context);
}
