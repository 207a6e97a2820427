import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { failurePolicyProblems, managedLabelProblems, namespaceSelectorProblems } from '../support/blast-radius.js';
import { DEPLOY, parseYamlDocuments, ROOT } from '../support/deploy.js';
import { kustomizeObjects } from '../support/kustomize.js';

// deploy/helm/quota-ledger against the manifests it is made of, with `helm` built from its Go
// module by test/helm/build.sh (npm run test:kubernetes runs it first; cached, it returns at
// once). Its templates load copies of deploy/kubernetes (deploy/helm/sync.sh) and change only what
// a value asks for: by default `helm template` renders exactly what kustomize renders of
// deploy/kubernetes, object by object, less the labels Helm adds.

const CHART = join(DEPLOY, 'helm/quota-ledger');
const HELM =
  execFileSync(join(ROOT, 'test/helm/build.sh'), { encoding: 'utf8', timeout: 20 * 60_000 })
    .trim()
    .split('\n')
    .at(-1) ?? 'helm';
const HELM_LABELS = ['app.kubernetes.io/managed-by', 'app.kubernetes.io/instance', 'app.kubernetes.io/version', 'helm.sh/chart'];
const WORK = mkdtempSync(join(tmpdir(), 'ql-helm-'));
afterAll(() => rmSync(WORK, { recursive: true, force: true }));

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function helm(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(HELM, args, { encoding: 'utf8', maxBuffer: 32 * 1024 * 1024 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function template(...sets: string[]): Obj[] {
  const result = helm(['template', 'quota-ledger', CHART, ...sets.flatMap((s) => ['--set', s])]);
  if (result.status !== 0) throw new Error(`helm template failed: ${result.stderr}`);
  return parseYamlDocuments(result.stdout, 'helm template').map((d) => d.value as Obj);
}

const keyOf = (o: Obj): string =>
  `${String(o['apiVersion'])} ${String(o['kind'])} ${String(o['metadata']?.['namespace'] ?? '')}/${String(o['metadata']?.['name'])}`;

/** The object without the labels Helm adds (every other label must be the same). */
function withoutHelmLabels(object: Obj): Obj {
  const copy = structuredClone(object);
  for (const label of HELM_LABELS) delete copy['metadata']?.['labels']?.[label];
  return copy;
}

function differences(rendered: Obj[], expected: Obj[]): string[] {
  const problems: string[] = [];
  const byKey = new Map(rendered.map((o) => [keyOf(o), o]));
  for (const object of expected) {
    const ours = byKey.get(keyOf(object));
    if (!ours) problems.push(`helm does not render ${keyOf(object)}`);
    else if (JSON.stringify(sorted(withoutHelmLabels(ours))) !== JSON.stringify(sorted(object))) {
      problems.push(
        `${keyOf(object)} differs:\nhelm      ${JSON.stringify(sorted(withoutHelmLabels(ours)))}\nkustomize ${JSON.stringify(sorted(object))}`,
      );
    }
    byKey.delete(keyOf(object));
  }
  for (const key of byKey.keys()) problems.push(`helm renders ${key}, which kustomize does not`);
  return problems;
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, sorted(v)]),
    );
  return value;
}

/** deploy/kubernetes with a component added to overlays/cert-manager, from a copy of its own. */
function kustomizeWith(component: string): Obj[] {
  const copy = join(WORK, `kubernetes-${component}`);
  cpSync(join(DEPLOY, 'kubernetes'), copy, { recursive: true });
  const overlay = join(copy, 'overlays/cert-manager/kustomization.yaml');
  writeFileSync(
    overlay,
    readFileSync(overlay, 'utf8').replace(
      '  - ../../components/prometheus-operator\n',
      `  - ../../components/prometheus-operator\n  - ../../components/${component}\n`,
    ),
  );
  return kustomizeObjects(join(copy, 'overlays/cert-manager')) as Obj[];
}

const CA_PEM = '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUexample\n-----END CERTIFICATE-----\n';
const webhooksOf = (docs: Obj[]): Obj[] =>
  docs.filter((d) => String(d['kind']).endsWith('WebhookConfiguration')).flatMap((d) => d['webhooks'] as Obj[]);
const find = (docs: Obj[], kind: string, name: string): Obj => docs.find((d) => d['kind'] === kind && d['metadata']['name'] === name) ?? {};
const containersOf = (doc: Obj): Obj[] => [
  ...(doc['spec']?.['template']?.['spec']?.['initContainers'] ?? []),
  ...(doc['spec']?.['template']?.['spec']?.['containers'] ?? []),
];

/** Where each container's DATABASE_URL comes from (`Secret/key`), by `workload/container`. */
function databaseUrls(docs: Obj[]): Record<string, string> {
  const urls: Record<string, string> = {};
  for (const doc of docs)
    for (const container of containersOf(doc)) {
      const ref = ((container['env'] ?? []) as Obj[]).find((e) => e['name'] === 'DATABASE_URL')?.['valueFrom']?.['secretKeyRef'];
      if (ref) urls[`${String(doc['metadata']['name'])}/${String(container['name'])}`] = `${String(ref['name'])}/${String(ref['key'])}`;
    }
  return urls;
}

describe('deploy/helm/quota-ledger', () => {
  it('holds current copies of the manifests it is made of (run deploy/helm/sync.sh after changing deploy/kubernetes)', () => {
    const sources: Record<string, string> = {
      ...Object.fromEntries(
        readdirSync(join(DEPLOY, 'kubernetes/base'))
          .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
          .map((f) => [`base/${f}`, `kubernetes/base/${f}`]),
      ),
      'cert-manager/certificates.yaml': 'kubernetes/overlays/cert-manager/certificates.yaml',
      ...Object.fromEntries(
        ['service-monitor.yaml', 'prometheus-rule.yaml', 'grafana-dashboard.json'].map((f) => [
          `prometheus-operator/${f}`,
          `kubernetes/components/prometheus-operator/${f}`,
        ]),
      ),
      ...Object.fromEntries(
        ['cluster.yaml', 'network-policy.yaml'].map((f) => [`cloudnative-pg/${f}`, `kubernetes/components/cloudnative-pg/${f}`]),
      ),
    };
    const copies = readdirSync(join(CHART, 'files'), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath, e.name).slice(join(CHART, 'files').length + 1))
      .sort();
    expect(copies).toEqual(Object.keys(sources).sort());
    for (const [copy, source] of Object.entries(sources))
      expect(readFileSync(join(CHART, 'files', copy), 'utf8'), copy).toBe(readFileSync(join(DEPLOY, source), 'utf8'));
  });

  it('passes helm lint --strict, with the defaults and with every option on', () => {
    const lint = helm(['lint', '--strict', CHART]);
    expect(lint.status, lint.stdout + lint.stderr).toBe(0);
    const all = [
      'tls.certManager=false',
      `tls.caBundle=${CA_PEM}`,
      'managedControlPlane.enabled=true',
      'managedControlPlane.allowFrom[0].ipBlock.cidr=172.16.0.0/28',
      'database.cloudnativePG.enabled=true',
    ];
    const options = helm(['lint', '--strict', CHART, ...all.flatMap((s) => ['--set', s])]);
    expect(options.status, options.stdout + options.stderr).toBe(0);
  });

  it('renders by default what kustomize renders of deploy/kubernetes, object by object, less the labels Helm adds', () => {
    expect(differences(template(), kustomizeObjects(join(DEPLOY, 'kubernetes')) as Obj[])).toEqual([]);
  });

  it('with database.cloudnativePG.enabled, renders what kustomize renders with components/cloudnative-pg', () => {
    const docs = template('database.cloudnativePG.enabled=true');
    expect(differences(docs, kustomizeWith('cloudnative-pg'))).toEqual([]);
    const cluster = find(docs, 'Cluster', 'quota-ledger-pg');
    expect([cluster['spec']['instances'], cluster['spec']['postgresql']['synchronous']]).toEqual([3, { method: 'any', number: 1 }]);
    // The apps as the managed role that owns nothing, the migration as the owner.
    expect(cluster['spec']['managed']['roles']).toEqual([
      {
        name: 'quota_ledger_runtime',
        ensure: 'present',
        login: true,
        passwordSecret: { name: 'quota-ledger-pg-runtime' },
        inRoles: ['pg_monitor'],
      },
    ]);
    expect(databaseUrls(docs)).toEqual({
      'quota-ledger-api/migrate': 'quota-ledger-pg-app/uri',
      'quota-ledger-api/api': 'quota-ledger-pg-runtime/uri',
      'quota-ledger-projection-worker/projection-worker': 'quota-ledger-pg-runtime/uri',
      'quota-ledger-reconciler/reconciler': 'quota-ledger-pg-runtime/uri',
      'quota-ledger-migrate/migrate': 'quota-ledger-pg-app/uri',
    });
    // The Cluster promises a synchronous standby: the API holds it to that (docs/install/database.md).
    const env = (name: string, container: string): Obj[] =>
      containersOf(find(docs, name === 'quota-ledger-migrate' ? 'Job' : 'Deployment', name)).find((c) => c['name'] === container)?.[
        'env'
      ] ?? [];
    expect(env('quota-ledger-api', 'api')).toContainEqual({ name: 'DATABASE_REQUIRE_SYNCHRONOUS_STANDBY', value: 'true' });
    // Every process reaches PostgreSQL at the Cluster's pods only.
    for (const name of ['quota-ledger-api', 'quota-ledger-projection-worker', 'quota-ledger-reconciler', 'quota-ledger-migrate']) {
      const egress = (find(docs, 'NetworkPolicy', name)['spec']['egress'] as Obj[]).filter((r) =>
        (r['ports'] as Obj[]).some((p) => p['port'] === 5432),
      );
      expect(
        egress.map((r) => r['to']),
        name,
      ).toEqual([[{ podSelector: { matchLabels: { 'cnpg.io/cluster': 'quota-ledger-pg' } } }]]);
    }
    expect(
      template()
        .flatMap((d) => containersOf(d))
        .flatMap((c) => (c['env'] ?? []) as Obj[])
        .filter((e) => e['name'] === 'DATABASE_REQUIRE_SYNCHRONOUS_STANDBY'),
    ).toEqual([]);
  });

  it('sends the managed namespaces only by default, and every namespace with webhooks.namespaces=all, as kustomize does with components/all-namespaces', () => {
    const defaults = template();
    expect(namespaceSelectorProblems(defaults, 'managed')).toEqual([]);
    expect(managedLabelProblems(defaults)).toEqual([]);
    const all = template('webhooks.namespaces=all');
    expect(namespaceSelectorProblems(all, 'all')).toEqual([]);
    expect(differences(all, kustomizeWith('all-namespaces'))).toEqual([]);
    expect(helm(['template', 'ql', CHART, '--set', 'webhooks.namespaces=some']).stderr).toContain(
      'webhooks.namespaces must be managed or all, got "some"',
    );
  });

  it('sends what quota only counts under webhooks.countFailurePolicy (Ignore by default), and the rest under Fail', () => {
    expect(failurePolicyProblems(template())).toEqual([]);
    expect(failurePolicyProblems(template('webhooks.countFailurePolicy=Fail'), 'Fail')).toEqual([]);
    expect(helm(['template', 'ql', CHART, '--set', 'webhooks.countFailurePolicy=Never']).stderr).toContain(
      'webhooks failure policies must be Fail or Ignore, got "Never"',
    );
  });

  it('without cert-manager, puts tls.caBundle into every webhook, renders no cert-manager object, and says what is missing without one', () => {
    const docs = template('tls.certManager=false', `tls.caBundle=${CA_PEM}`);
    expect(docs.filter((d) => String(d['apiVersion']).startsWith('cert-manager.io/'))).toEqual([]);
    expect(webhooksOf(docs).map((w) => Buffer.from(w['clientConfig']['caBundle'], 'base64').toString('utf8'))).toEqual(
      Array(6).fill(CA_PEM),
    );
    expect(docs.filter((d) => d['metadata']['annotations']?.['cert-manager.io/inject-ca-from'])).toEqual([]);
    const missing = helm(['template', 'ql', CHART, '--set', 'tls.certManager=false']);
    expect(missing.status).not.toBe(0);
    expect(missing.stderr).toContain(
      'tls.certManager is false, so tls.caBundle must be the PEM certificate of the CA that signed quota-ledger-tls',
    );
  });

  it('in managed-control-plane mode, opens the unauthenticated listener, exposes it, points the webhooks at it and lets only allowFrom reach it', () => {
    const docs = template('managedControlPlane.enabled=true', 'managedControlPlane.allowFrom[0].ipBlock.cidr=172.16.0.0/28');
    const api = find(docs, 'Deployment', 'quota-ledger-api')['spec']['template']['spec']['containers'][0];
    expect(api['env']).toContainEqual({ name: 'WEBHOOK_UNAUTHENTICATED_PORT', value: '8443' });
    expect(api['ports']).toContainEqual({ name: 'webhook-unauth', containerPort: 8443, protocol: 'TCP' });
    expect(find(docs, 'Service', 'quota-ledger')['spec']['ports']).toContainEqual({
      name: 'webhook-unauth',
      port: 8443,
      targetPort: 'webhook-unauth',
      protocol: 'TCP',
    });
    expect(webhooksOf(docs).map((w) => w['clientConfig']['service']['port'])).toEqual(Array(6).fill(8443));
    expect(find(docs, 'NetworkPolicy', 'quota-ledger-api-unauthenticated-webhook')['spec']['ingress']).toEqual([
      { from: [{ ipBlock: { cidr: '172.16.0.0/28' } }], ports: [{ port: 'webhook-unauth', protocol: 'TCP' }] },
    ]);
    const open = helm(['template', 'ql', CHART, '--set', 'managedControlPlane.enabled=true']);
    expect(open.stderr).toContain('managedControlPlane.allowFrom must name the control plane');
  });

  it('sends PostgreSQL, Redis and the Kubernetes API traffic to the peers networkPolicy names, never to every address by default', () => {
    const egressTo = (docs: Obj[], name: string, port: number): unknown[] =>
      (find(docs, 'NetworkPolicy', name)['spec']['egress'] as Obj[])
        .filter((r) => (r['ports'] as Obj[]).some((p) => p['port'] === port))
        .map((r) => r['to']);
    const defaults = template();
    expect(egressTo(defaults, 'quota-ledger-reconciler', 443)).toEqual([
      [{ ipBlock: { cidr: '10.0.0.0/8' } }, { ipBlock: { cidr: '172.16.0.0/12' } }, { ipBlock: { cidr: '192.168.0.0/16' } }],
    ]);
    const set = template(
      'networkPolicy.apiServerPeers[0].ipBlock.cidr=34.1.2.3/32',
      'networkPolicy.databasePeers[0].ipBlock.cidr=10.9.0.5/32',
      'networkPolicy.redisPeers[0].ipBlock.cidr=10.9.0.6/32',
    );
    expect(egressTo(set, 'quota-ledger-reconciler', 443)).toEqual([[{ ipBlock: { cidr: '34.1.2.3/32' } }]]);
    for (const name of ['quota-ledger-api', 'quota-ledger-projection-worker', 'quota-ledger-reconciler', 'quota-ledger-migrate'])
      expect(egressTo(set, name, 5432)).toEqual([[{ ipBlock: { cidr: '10.9.0.5/32' } }]]);
    for (const name of ['quota-ledger-api', 'quota-ledger-reconciler'])
      expect(egressTo(set, name, 6379)).toEqual([[{ ipBlock: { cidr: '10.9.0.6/32' } }]]);
  });

  it('takes replicas, resources, the image and the database Secret from values', () => {
    const docs = template(
      'api.replicas=3',
      'reconciler.replicas=1',
      'api.resources.requests.cpu=1',
      'image.repository=registry.example.com/ql',
      'image.tag=9.9.9',
      'database.existingSecret=pg',
      'database.urlKey=url',
    );
    const api = find(docs, 'Deployment', 'quota-ledger-api');
    expect([api['spec']['replicas'], find(docs, 'Deployment', 'quota-ledger-reconciler')['spec']['replicas']]).toEqual([3, 1]);
    expect(api['spec']['template']['spec']['containers'][0]['resources']).toEqual({ requests: { cpu: 1 } });
    const containers = docs.flatMap(
      (d) =>
        [
          ...(d['spec']?.['template']?.['spec']?.['initContainers'] ?? []),
          ...(d['spec']?.['template']?.['spec']?.['containers'] ?? []),
        ] as Obj[],
    );
    expect(new Set(containers.map((c) => c['image']))).toEqual(new Set(['registry.example.com/ql:9.9.9']));
    expect(databaseUrls(docs)).toEqual({
      'quota-ledger-api/migrate': 'pg/migration-database-url',
      'quota-ledger-api/api': 'pg/url',
      'quota-ledger-projection-worker/projection-worker': 'pg/url',
      'quota-ledger-reconciler/reconciler': 'pg/url',
      'quota-ledger-migrate/migrate': 'pg/migration-database-url',
    });
    const roles = containers.flatMap((c) =>
      (c['env'] as Obj[]).filter((e) => e['name'] === 'DATABASE_RUNTIME_ROLE').map((e) => e['value']),
    );
    expect(roles).toEqual(Array(5).fill('quota_ledger_runtime'));
    const asOwner = template('database.runtimeRole=')
      .flatMap((d) => containersOf(d))
      .flatMap((c) => (c['env'] ?? []) as Obj[]);
    expect(asOwner.filter((e) => e['name'] === 'DATABASE_RUNTIME_ROLE').map((e) => e['value'])).toEqual(Array(5).fill(''));
  });
});
