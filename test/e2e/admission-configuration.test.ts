import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataSource } from 'typeorm';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { API_MAIN, ensureBuilt, startApiProcess, type ApiProcess } from '../support/processes.js';
import { admissionReview } from '../support/review.js';

/**
 * The admission chain configured as kube-apiserver's is, on the built service: plugins disabled
 * and enabled by ADMISSION_PLUGINS_DISABLE / _ENABLE, the ResourceQuota plugin's limitedResources
 * from an AdmissionConfiguration file (ADMISSION_CONFIG_FILE), and a file that cannot be used,
 * which stops the process before it serves anything.
 */

let db: TestDatabase & { dataSource: DataSource };
let dir: string;
const processes: ApiProcess[] = [];

beforeAll(async () => {
  ensureBuilt();
  db = await createMigratedDatabase('qladmcfg');
  dir = mkdtempSync(join(tmpdir(), 'ql-admission-'));
}, 120_000);

afterAll(async () => {
  await Promise.all(processes.map((api) => api.stop()));
  await db?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function start(env: Record<string, string>): Promise<ApiProcess> {
  const api = await startApiProcess({ DATABASE_URL: db.url, DATABASE_POOL_SIZE: '2', ...env });
  processes.push(api);
  return api;
}

async function call(api: ApiProcess, method: string, path: string, body?: unknown) {
  const response = await fetch(`${api.base}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

let seq = 0;
const POD = { kind: { group: '', version: 'v1', kind: 'Pod' }, resource: { group: '', version: 'v1', resource: 'pods' } };
const NAMESPACE = { kind: { group: '', version: 'v1', kind: 'Namespace' }, resource: { group: '', version: 'v1', resource: 'namespaces' } };

/** A review of a CREATE of a one-container pod. */
function podReview(namespace: string, name: string, requests: Record<string, string>) {
  const object = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, uid: `uid-${namespace}-${name}` },
    spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests } }] },
  };
  return admissionReview({ uid: `admission-config-${++seq}`, ...POD, name, namespace, operation: 'CREATE', object });
}

const putQuota = (api: ApiProcess, namespace: string, hard: Record<string, string>) =>
  call(api, 'PUT', `/v1/namespaces/${namespace}/resourcequotas/compute`, {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: 'compute' },
    spec: { hard },
  });

const count = async (sql: string, namespace: string): Promise<number> => Number((await db.dataSource.query(sql, [namespace]))[0].n);
const reservedIn = (namespace: string) =>
  count(`SELECT count(*)::int AS n FROM ledger_events WHERE namespace = $1 AND type = 'Reserved'`, namespace);
const decisionsIn = (namespace: string) => count(`SELECT count(*)::int AS n FROM admission_decisions WHERE namespace = $1`, namespace);

describe('ADMISSION_PLUGINS_DISABLE=ResourceQuota', () => {
  it('admits a pod over the quota, reserving nothing, and still logs the decision', async () => {
    const api = await start({ ADMISSION_PLUGINS_DISABLE: 'ResourceQuota' });
    expect((await putQuota(api, 'rq-off', { pods: '1', 'requests.cpu': '1' })).status).toBe(201);
    for (const name of ['web-1', 'web-2']) {
      const answer = await call(api, 'POST', '/v1/admission/validate', podReview('rq-off', name, { cpu: '800m' }));
      expect(answer.status).toBe(200);
      expect(answer.body.response).toMatchObject({ allowed: true });
      expect(answer.body.response.auditAnnotations).not.toHaveProperty('reservation');
    }
    expect(await reservedIn('rq-off')).toBe(0);
    expect(await decisionsIn('rq-off')).toBe(2);
    expect((await call(api, 'GET', '/v1/namespaces/rq-off/usage')).body.quotas[0].used).toEqual({ pods: '0', 'requests.cpu': '0' });
  });
});

describe('ADMISSION_CONFIG_FILE with the ResourceQuota plugin’s limitedResources', () => {
  let api: ApiProcess;

  beforeAll(async () => {
    // kube-apiserver's layout: the AdmissionConfiguration names the plugin's file by a path relative to itself.
    mkdirSync(join(dir, 'plugins'));
    writeFileSync(
      join(dir, 'admission.yaml'),
      [
        'apiVersion: apiserver.config.k8s.io/v1',
        'kind: AdmissionConfiguration',
        'plugins:',
        '  - name: ResourceQuota',
        '    path: plugins/resourcequota.yaml',
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'plugins', 'resourcequota.yaml'),
      [
        'apiVersion: resourcequota.admission.k8s.io/v1',
        'kind: Configuration',
        'limitedResources:',
        '  - resource: pods',
        '    matchContains: ["requests.cpu"]',
        '',
      ].join('\n'),
    );
    api = await start({ ADMISSION_CONFIG_FILE: join(dir, 'admission.yaml') });
  }, 60_000);

  it("denies a pod consuming requests.cpu where no quota covers it, with Kubernetes' message", async () => {
    // A namespace the ledger never managed: without the configuration it is admitted unmanaged.
    const unmanaged = await call(api, 'POST', '/v1/admission/validate', podReview('no-quota', 'web', { cpu: '100m' }));
    expect(unmanaged.status).toBe(200);
    expect(unmanaged.body.response).toMatchObject({
      allowed: false,
      status: { code: 403, reason: 'Forbidden', message: 'pods "web" is forbidden: insufficient quota to consume: requests.cpu' },
    });
    // A quota on memory only does not cover it either; there the denial is logged.
    expect((await putQuota(api, 'memory-only', { 'requests.memory': '1Gi' })).status).toBe(201);
    const uncovered = await call(api, 'POST', '/v1/admission/validate', podReview('memory-only', 'web', { cpu: '100m', memory: '100Mi' }));
    expect(uncovered.body.response).toMatchObject({
      allowed: false,
      status: { message: 'pods "web" is forbidden: insufficient quota to consume: requests.cpu' },
    });
    expect(await decisionsIn('memory-only')).toBe(1);
    expect(await reservedIn('memory-only')).toBe(0);
  });

  it('admits it where a quota limits requests.cpu, and admits pods that consume none of it anywhere', async () => {
    expect((await putQuota(api, 'cpu-quota', { 'requests.cpu': '2' })).status).toBe(201);
    expect((await call(api, 'POST', '/v1/admission/validate', podReview('cpu-quota', 'web', { cpu: '100m' }))).body.response).toMatchObject(
      { allowed: true },
    );
    expect(await reservedIn('cpu-quota')).toBe(1);
    expect(
      (await call(api, 'POST', '/v1/admission/validate', podReview('no-quota', 'small', { memory: '64Mi' }))).body.response,
    ).toMatchObject({ allowed: true });
  });
});

describe('ADMISSION_PLUGINS_ENABLE=AlwaysDeny and NamespaceLifecycle', () => {
  it('denies every admission, mutating and validating, with kube-apiserver’s words; never deletes kube-system', async () => {
    const api = await start({ ADMISSION_PLUGINS_ENABLE: 'AlwaysDeny' });
    const denied = 'pods "web" is forbidden: admission control is denying all modifications';
    for (const path of ['/v1/admission/mutate', '/v1/admission/validate']) {
      expect((await call(api, 'POST', path, podReview('any', 'web', { cpu: '100m' }))).body.response).toMatchObject({
        allowed: false,
        status: { code: 403, message: denied },
      });
    }
    const deleteSystem = admissionReview({
      uid: `admission-config-${++seq}`,
      ...NAMESPACE,
      name: 'kube-system',
      operation: 'DELETE',
      object: null,
      oldObject: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-system' } },
    });
    expect((await call(api, 'POST', '/v1/admission/validate', deleteSystem)).body.response).toMatchObject({
      allowed: false,
      status: { code: 403, message: 'namespaces "kube-system" is forbidden: this namespace may not be deleted' },
    });
    expect((await call(api, 'DELETE', '/v1/namespaces/default')).status).toBe(403);
  });
});

describe('an admission configuration that cannot be used', () => {
  const boot = (env: Record<string, string>) =>
    spawnSync(process.execPath, [API_MAIN], {
      env: { ...process.env, DATABASE_URL: db.url, QUOTA_LEDGER_INSECURE_DEV: 'true', PORT: '0', ...env },
      encoding: 'utf8',
      timeout: 30_000,
    });

  it('stops the process at boot, naming the variable and the field', () => {
    const file = join(dir, 'broken.yaml');
    writeFileSync(
      file,
      [
        'apiVersion: apiserver.config.k8s.io/v1',
        'kind: AdmissionConfiguration',
        'plugins:',
        '  - name: ResourceQuota',
        '    configuration:',
        '      apiVersion: apiserver.config.k8s.io/v1',
        '      kind: ResourceQuotaConfiguration',
        '      limitedResources:',
        '        - resource: pods',
        '          matchContains: ["cpu"]',
        '        - resource: pods',
        '          matchScopes:',
        '            - scopeName: PriorityClass',
        '              operator: Equals',
        '              values: ["cluster-services"]',
        '',
      ].join('\n'),
    );
    const run = boot({ ADMISSION_CONFIG_FILE: file });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain(
      `ADMISSION_CONFIG_FILE: ${file}: plugins[0].configuration.limitedResources[1].matchScopes[0].operator: must be In, NotIn, Exists or DoesNotExist, got "Equals"`,
    );
    expect(run.stdout).not.toContain('listening');
  });

  it('stops it for a plugin name it does not know, in the file or in the lists', () => {
    const file = join(dir, 'unknown-plugin.yaml');
    writeFileSync(
      file,
      'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n  - name: EventRateLimit\n    path: eventconfig.yaml\n',
    );
    expect(boot({ ADMISSION_CONFIG_FILE: file }).stderr).toContain('plugins[0].name: unsupported plugin "EventRateLimit"');
    expect(boot({ ADMISSION_PLUGINS_ENABLE: 'ResourceQuota', ADMISSION_PLUGINS_DISABLE: 'ResourceQuota' }).stderr).toContain(
      'ADMISSION_PLUGINS_DISABLE: ResourceQuota also in ADMISSION_PLUGINS_ENABLE',
    );
  });
});
