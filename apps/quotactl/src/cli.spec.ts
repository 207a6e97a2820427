import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EXIT, run, type Io } from './cli.js';

/**
 * A stand-in HTTP server inside the spec (the end-to-end tests run quotactl against the real
 * service): it answers what each test sets and records what quotactl sent.
 */
interface Seen {
  readonly method: string;
  readonly url: string;
  readonly auth: string | undefined;
  readonly body: unknown;
}
let server: Server;
let base: string;
let seen: Seen[] = [];
/** What each request is answered: status, body, and optionally raw headers (name, value, name, value, …). */
const answers = new Map<string, [number, unknown, string[]?]>();

beforeAll(async () => {
  server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        auth: req.headers.authorization,
        body: text ? JSON.parse(text) : undefined,
      });
      const [status, body, headers = []] = answers.get(`${req.method} ${req.url}`) ?? [
        404,
        { kind: 'Status', code: 404, reason: 'NotFound', message: `${req.url} not found` },
      ];
      res.writeHead(status, ['content-type', 'application/json', ...headers]).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  seen = [];
  answers.clear();
});

type TestIo = Io & { out: string; err: string };

/** Files are keyed by absolute path under /work (the working directory); `-` is standard input. */
function io(files: Record<string, string> = {}, env: Record<string, string> = {}, kubeconfigFiles?: string[]): TestIo {
  const state = { out: '', err: '' };
  return Object.assign(state, {
    stdout: (text: string) => void (state.out += text),
    stderr: (text: string) => void (state.err += text),
    readFile: async (path: string) => {
      const text = files[path];
      if (text === undefined) throw Object.assign(new Error(`ENOENT: no such file or directory, open '${path}'`), { code: 'ENOENT' });
      return text;
    },
    readStdin: async () => files['-'] ?? '',
    cwd: '/work',
    env: { QUOTA_LEDGER_SERVER: base, ...env },
    now: () => Date.parse('2026-11-23T10:05:30Z'),
    version: '1.2.3',
    ...(kubeconfigFiles ? { kubeconfigFiles } : {}),
  });
}

const QUOTA_YAML = 'apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: compute\n  namespace: team-a\nspec:\n  hard:\n    pods: "10"\n';
const status = (code: number, reason: string, message: string, details?: object) => ({
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  code,
  reason,
  message,
  ...(details ? { details } : {}),
});

describe('usage errors: exit 2, error: on stderr, nothing sent', () => {
  it.each([
    ['exits 2 on an unknown flag', ['get', 'quota', '--bogus']],
    ['a flag of another command', ['get', 'quota', '--kind', 'Pod']],
    ['a flag without its value', ['get', 'quota', '-n']],
    ['no kind for get', ['get']],
    ['an unknown kind', ['get', 'widgets']],
    ['two names', ['get', 'quota', 'a', 'b']],
    ['an invalid namespace', ['get', 'quota', '-n', 'Team_A']],
    ['an unknown output format', ['get', 'quota', '-o', 'xml']],
    ['an unknown command', ['frobnicate']],
    ['apply without -f', ['apply']],
    ['a missing file', ['apply', '-f', 'missing.yaml']],
    ['reserve without --resources or -f', ['reserve', '--kind', 'Pod']],
    ['reserve with both', ['reserve', '--kind', 'Pod', '--resources', 'pods=1', '-f', 'p.yaml']],
    ['a resource list without =', ['reserve', '--kind', 'Pod', '--resources', 'pods']],
    ['a quantity Kubernetes would refuse', ['reserve', '--kind', 'Pod', '--resources', 'requests.cpu=lots']],
    ['a TTL of 0', ['reserve', '--kind', 'Pod', '--resources', 'pods=1', '--ttl', '0']],
    ['a wait that is not a duration', ['reserve', '--kind', 'Pod', '--resources', 'pods=1', '--wait', '10 minutes']],
    ['a wait of 0', ['reserve', '--kind', 'Pod', '--resources', 'pods=1', '--wait', '0s']],
    ['a priority out of range', ['reserve', '--kind', 'Pod', '--resources', 'pods=1', '--wait', '1m', '--priority=-1001']],
    ['a priority without a wait', ['reserve', '--kind', 'Pod', '--resources', 'pods=1', '--priority', '5']],
    ['--no-follow without a wait', ['reserve', '--kind', 'Pod', '--resources', 'pods=1', '--no-follow']],
    ['a dry run that waits', ['reserve', '--kind', 'Pod', '--resources', 'pods=1', '--wait', '1m', '--dry-run']],
    ['queue with an argument', ['queue', 'team-a']],
    ['wait without an id', ['wait']],
    ['wait with two ids', ['wait', 'a', 'b']],
    ['commit without an id', ['commit']],
    ['an id the server would refuse', ['release', 'a/b']],
    ['a limit out of range', ['history', '--limit', '0']],
    ['a position that is not one', ['history', '--after', 'yesterday']],
    ['a time without a zone', ['usage', '--at', '2026-11-23T10:00:00']],
    ['--denied with --allowed', ['decisions', '--denied', '--allowed']],
    ['--dry-run with a value that is not a boolean', ['decisions', '--dry-run=maybe']],
    ['a boolean value for a flag the command does not take', ['history', '--dry-run=false']],
    ['a server that is not a URL', ['get', 'quota', '--server', 'localhost:8080']],
    ['an unreadable CA', ['get', 'quota', '--certificate-authority', 'nope.pem']],
    ['a CA with the insecure flag', ['get', 'quota', '--certificate-authority', 'ca.pem', '--insecure-skip-tls-verify']],
    ['a bad request timeout', ['get', 'quota', '--request-timeout', 'forever']],
  ])('%s: %j', async (_, argv) => {
    const out = io({ '/work/ca.pem': '-----BEGIN CERTIFICATE-----\n' });
    expect(await run(argv, out)).toBe(EXIT.usage);
    expect(out.err).toMatch(/^error: /);
    expect(out.out).toBe('');
    expect(seen).toEqual([]);
  });

  it('names the unknown flag as kubectl does', async () => {
    const out = io();
    await run(['get', 'quota', '--bogus'], out);
    expect(out.err).toBe('error: unknown flag: --bogus\n');
  });

  it('apply refuses a namespace that disagrees with -n', async () => {
    const out = io({ '/work/q.yaml': QUOTA_YAML });
    expect(await run(['apply', '-f', 'q.yaml', '-n', 'team-b'], out)).toBe(EXIT.usage);
    expect(out.err).toBe(
      `error: the namespace from the provided object "team-a" does not match the namespace "team-b". You must pass '--namespace=team-a' to perform this operation.\n`,
    );
    expect(seen).toEqual([]);
  });

  it('apply refuses invalid YAML and kinds it does not manage, before sending any document', async () => {
    const broken = io({ '/work/x.yaml': `${QUOTA_YAML}---\na: [\n` });
    expect(await run(['apply', '-f', 'x.yaml'], broken)).toBe(EXIT.usage);
    expect(broken.err).toMatch(/^error: error parsing x\.yaml \(document 2\): /);
    const pod = io({ '/work/p.yaml': `${QUOTA_YAML}---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n` });
    expect(await run(['apply', '-f', 'p.yaml'], pod)).toBe(EXIT.usage);
    expect(pod.err).toContain('not "Pod"');
    expect(seen).toEqual([]);
  });
});

describe('help and version', () => {
  it('prints the overview with the exit codes for --help, help and no command at all', async () => {
    for (const argv of [['--help'], ['help'], []]) {
      const out = io();
      expect(await run(argv, out)).toBe(EXIT.ok);
      expect(out.out).toContain('Commands:\n  apply');
      expect(out.out).toContain('3  admission denied');
    }
  });

  it.each([
    'apply',
    'get',
    'describe',
    'delete',
    'usage',
    'history',
    'decisions',
    'reserve',
    'commit',
    'release',
    'queue',
    'wait',
    'webhook-config',
    'completion',
    'version',
    'help',
  ])('has usage text for %s', async (command) => {
    const flag = io();
    expect(await run([command, '--help'], flag)).toBe(EXIT.ok);
    expect(flag.out).toContain(`Usage:\n  quotactl ${command}`);
    const viaHelp = io();
    expect(await run(['help', command], viaHelp)).toBe(EXIT.ok);
    expect(viaHelp.out).toBe(flag.out);
  });

  it('prints the client version', async () => {
    const out = io();
    expect(await run(['version'], out)).toBe(EXIT.ok);
    expect(out.out).toBe('Client Version: v1.2.3\n');
  });
});

describe('apply', () => {
  it('PUTs every document with the token and says created, configured or unchanged', async () => {
    answers.set('GET /v1/namespaces/team-a/resourcequotas/compute', [404, status(404, 'NotFound', 'resourcequotas "compute" not found')]);
    answers.set('PUT /v1/namespaces/team-a/resourcequotas/compute', [
      201,
      { kind: 'ResourceQuota', metadata: { name: 'compute', resourceVersion: '1' } },
    ]);
    answers.set('GET /v1/namespaces/team-a/limitranges/defaults', [200, { metadata: { resourceVersion: '2' } }]);
    answers.set('PUT /v1/namespaces/team-a/limitranges/defaults', [200, { metadata: { resourceVersion: '3' } }]);
    answers.set('GET /v1/namespaces/team-a/limitranges/same', [200, { metadata: { resourceVersion: '2' } }]);
    answers.set('PUT /v1/namespaces/team-a/limitranges/same', [200, { metadata: { resourceVersion: '2' } }]);
    const stream = `${QUOTA_YAML}---\n{"kind":"List","items":[{"apiVersion":"v1","kind":"LimitRange","metadata":{"name":"defaults"}},{"kind":"LimitRange","metadata":{"name":"same"}}]}\n`;
    const out = io({ '/work/all.yaml': stream });
    expect(await run(['apply', '-f', 'all.yaml', '-n', 'team-a', '--token', 't0k'], out)).toBe(EXIT.ok);
    expect(out.out).toBe('resourcequota/compute created\nlimitrange/defaults configured\nlimitrange/same unchanged\n');
    expect(seen.filter((s) => s.method === 'PUT').map((s) => [s.url, s.auth])).toEqual([
      ['/v1/namespaces/team-a/resourcequotas/compute', 'Bearer t0k'],
      ['/v1/namespaces/team-a/limitranges/defaults', 'Bearer t0k'],
      ['/v1/namespaces/team-a/limitranges/same', 'Bearer t0k'],
    ]);
    expect(seen.find((s) => s.method === 'PUT')?.body).toMatchObject({ kind: 'ResourceQuota', spec: { hard: { pods: '10' } } });
  });

  it('reads standard input with -f - and puts an object without a namespace in "default"', async () => {
    answers.set('PUT /v1/namespaces/default/resourcequotas/q', [201, {}]);
    const out = io({ '-': '{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q"},"spec":{"hard":{"pods":"1"}}}' });
    expect(await run(['apply', '-f', '-'], out)).toBe(EXIT.ok);
    expect(out.out).toBe('resourcequota/q created\n');
  });

  it('-o name prints only kind/name for each object applied, as kubectl apply -o name', async () => {
    answers.set('PUT /v1/namespaces/team-a/resourcequotas/compute', [201, {}]);
    answers.set('PUT /v1/clusterresourcequotas/acme', [200, {}]);
    const stream = `${QUOTA_YAML}---\napiVersion: quota.openshift.io/v1\nkind: ClusterResourceQuota\nmetadata: {name: acme}\nspec: {quota: {hard: {pods: "5"}}}\n`;
    const out = io({ '/work/q.yaml': stream });
    expect(await run(['apply', '-f', 'q.yaml', '-o', 'name'], out), out.err).toBe(EXIT.ok);
    expect(out.out).toBe('resourcequota/compute\nclusterresourcequota.quota.openshift.io/acme\n');
  });

  it('reports a refused object, applies the others, and exits with the refusal', async () => {
    answers.set('PUT /v1/namespaces/team-a/resourcequotas/bad', [
      422,
      status(422, 'Invalid', 'ResourceQuota "bad" is invalid: spec.hard[pods]: Invalid value: "-1"'),
    ]);
    answers.set('PUT /v1/namespaces/team-a/resourcequotas/good', [201, {}]);
    const out = io({ '/work/two.yaml': 'kind: ResourceQuota\nmetadata: {name: bad}\n---\nkind: ResourceQuota\nmetadata: {name: good}\n' });
    expect(await run(['apply', '-f', 'two.yaml', '-n', 'team-a'], out)).toBe(EXIT.failed);
    expect(out.err).toBe('Error from server (Invalid): ResourceQuota "bad" is invalid: spec.hard[pods]: Invalid value: "-1"\n');
    expect(out.out).toBe('resourcequota/good created\n');
  });

  it("moves an object read from the cluster (kubectl get -o yaml): another server's uid and resourceVersion are no precondition of ours", async () => {
    const fromCluster = (uid: string): string =>
      `apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: compute, namespace: team-a, uid: ${uid}, resourceVersion: "48213", creationTimestamp: "2026-01-01T00:00:00Z"}\nspec: {hard: {pods: "10"}}\nstatus: {used: {pods: "3"}}\n`;
    answers.set('GET /v1/namespaces/team-a/resourcequotas/compute', [404, status(404, 'NotFound', 'resourcequotas "compute" not found')]);
    answers.set('PUT /v1/namespaces/team-a/resourcequotas/compute', [201, { metadata: { resourceVersion: '1' } }]);
    const moved = io({ '-': fromCluster('9f1c') });
    expect(await run(['apply', '-f', '-'], moved), moved.err).toBe(EXIT.ok);
    expect(moved.out).toBe('resourcequota/compute created\n');
    expect(moved.err).toBe(
      "Warning: resourcequota/compute: metadata.uid 9f1c and resourceVersion 48213 are another server's; applied without that precondition\n",
    );
    const sent = seen.find((s) => s.method === 'PUT')?.body as { metadata: Record<string, unknown> };
    expect(sent.metadata).not.toHaveProperty('resourceVersion');
    expect(sent.metadata).not.toHaveProperty('uid');
    // Moved again after it was created here: still another server's object, still no precondition.
    seen = [];
    answers.set('GET /v1/namespaces/team-a/resourcequotas/compute', [200, { metadata: { resourceVersion: '1' } }]);
    answers.set('PUT /v1/namespaces/team-a/resourcequotas/compute', [200, { metadata: { resourceVersion: '1' } }]);
    const again = io({ '-': fromCluster('9f1c') });
    expect(await run(['apply', '-f', '-'], again), again.err).toBe(EXIT.ok);
    expect(again.out).toBe('resourcequota/compute unchanged\n');
    // One of ours (our uid) keeps its resourceVersion as the precondition it is.
    seen = [];
    answers.set('GET /v1/namespaces/team-a/resourcequotas/compute', [200, { metadata: { resourceVersion: '1', uid: 'ours' } }]);
    const ours = io({ '-': fromCluster('ours') });
    expect(await run(['apply', '-f', '-'], ours), ours.err).toBe(EXIT.ok);
    expect(ours.err).toBe('');
    expect((seen.find((s) => s.method === 'PUT')?.body as { metadata: Record<string, unknown> }).metadata).toMatchObject({
      uid: 'ours',
      resourceVersion: '48213',
    });
  });
});

describe('apply: namespaces and quotas over several namespaces', () => {
  it('PUTs Namespaces and ClusterResourceQuotas cluster-scoped, HierarchicalResourceQuotas in their namespace, and names them as kubectl does', async () => {
    answers.set('PUT /v1/namespaces/team-a', [201, { metadata: { resourceVersion: '1' } }]);
    answers.set('PUT /v1/clusterresourcequotas/acme', [201, { metadata: { resourceVersion: '1' } }]);
    answers.set('GET /v1/namespaces/team-a/hierarchicalresourcequotas/subtree', [200, { metadata: { resourceVersion: '4' } }]);
    answers.set('PUT /v1/namespaces/team-a/hierarchicalresourcequotas/subtree', [200, { metadata: { resourceVersion: '5' } }]);
    const stream = [
      'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n  labels: {tenant: acme}\n',
      'apiVersion: quota.openshift.io/v1\nkind: ClusterResourceQuota\nmetadata: {name: acme}\nspec:\n  selector: {labels: {matchLabels: {tenant: acme}}}\n  quota: {hard: {pods: "50"}}\n',
      'apiVersion: hnc.x-k8s.io/v1alpha2\nkind: HierarchicalResourceQuota\nmetadata: {name: subtree, namespace: team-a}\nspec: {hard: {pods: "10"}}\n',
    ].join('---\n');
    const out = io({ '/work/tenants.yaml': stream });
    expect(await run(['apply', '-f', 'tenants.yaml'], out)).toBe(EXIT.ok);
    expect(out.out).toBe(
      'namespace/team-a created\nclusterresourcequota.quota.openshift.io/acme created\nhierarchicalresourcequota.hnc.x-k8s.io/subtree configured\n',
    );
    expect(seen.filter((s) => s.method === 'PUT').map((s) => s.url)).toEqual([
      '/v1/namespaces/team-a',
      '/v1/clusterresourcequotas/acme',
      '/v1/namespaces/team-a/hierarchicalresourcequotas/subtree',
    ]);
  });

  it("refuses a kind's wrong apiVersion before sending anything", async () => {
    const out = io({ '/work/crq.yaml': 'apiVersion: v1\nkind: ClusterResourceQuota\nmetadata: {name: acme}\n' });
    expect(await run(['apply', '-f', 'crq.yaml'], out)).toBe(EXIT.usage);
    expect(out.err).toBe('error: crq.yaml: a ClusterResourceQuota is apiVersion quota.openshift.io/v1, not "v1"\n');
    expect(seen).toEqual([]);
  });
});

describe('get and describe: ClusterResourceQuota as oc prints it, HierarchicalResourceQuota as a quota', () => {
  const crq = {
    apiVersion: 'quota.openshift.io/v1',
    kind: 'ClusterResourceQuota',
    metadata: { name: 'acme', creationTimestamp: '2026-11-23T09:59:00Z', labels: { owner: 'platform' } },
    spec: {
      selector: {
        labels: { matchLabels: { tenant: 'acme' }, matchExpressions: [{ key: 'env', operator: 'In', values: ['prod', 'dev'] }] },
        annotations: null,
      },
      quota: { hard: { pods: '50', 'requests.cpu': '10' } },
    },
    status: {
      total: { hard: { pods: '50', 'requests.cpu': '10' }, used: { pods: '3', 'requests.cpu': '1500m' } },
      namespaces: [
        { namespace: 'team-a', status: { hard: { pods: '50' }, used: { pods: '1' } } },
        { namespace: 'team-b', status: { hard: { pods: '50' }, used: { pods: '2' } } },
      ],
    },
  };

  it("describes a ClusterResourceQuota in oc's layout: meta, the namespaces it covers, its selectors, the total Used/Hard", async () => {
    answers.set('GET /v1/clusterresourcequotas/acme', [200, crq]);
    const out = io();
    expect(await run(['describe', 'clusterresourcequota', 'acme', '-n', 'ignored'], out)).toBe(EXIT.ok);
    expect(out.out).toBe(
      [
        'Name:         acme',
        'Namespace:    <none>',
        'Created:      6 minutes ago',
        'Labels:       owner=platform',
        'Annotations:  <none>',
        'Namespace Selector: ["team-a" "team-b"]',
        'Label Selector: env in (dev,prod),tenant=acme',
        'AnnotationSelector: map[]',
        'Resource      Used   Hard',
        '--------      ----   ----',
        'pods          3      50',
        'requests.cpu  1500m  10',
        '',
      ].join('\n'),
    );
  });

  it('lists ClusterResourceQuotas with the quota columns over status.total, and says so without a namespace when there are none', async () => {
    answers.set('GET /v1/clusterresourcequotas', [200, { kind: 'ClusterResourceQuotaList', items: [crq] }]);
    const out = io();
    expect(await run(['get', 'clusterquota'], out)).toBe(EXIT.ok);
    expect(out.out).toBe('NAME   AGE     REQUEST                              LIMIT\nacme   6m30s   pods: 3/50, requests.cpu: 1500m/10\n');
    answers.set('GET /v1/clusterresourcequotas', [200, { kind: 'ClusterResourceQuotaList', items: [] }]);
    const none = io();
    expect(await run(['get', 'clusterresourcequotas.quota.openshift.io'], none)).toBe(EXIT.ok);
    expect(none.err).toBe('No resources found\n');
  });

  it('reads a HierarchicalResourceQuota from its namespace', async () => {
    answers.set('GET /v1/namespaces/org/hierarchicalresourcequotas/subtree', [
      200,
      {
        metadata: { name: 'subtree', namespace: 'org', creationTimestamp: '2026-11-23T10:00:00Z' },
        spec: { hard: { pods: '10' } },
        status: { hard: { pods: '10' }, used: { pods: '4' } },
      },
    ]);
    const out = io();
    expect(await run(['get', 'hrq/subtree', '-n', 'org'], out)).toBe(EXIT.ok);
    expect(out.out).toBe('NAME      AGE     REQUEST      LIMIT\nsubtree   5m30s   pods: 4/10\n');
  });
});

describe('get and describe', () => {
  const quota = {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: 'compute', namespace: 'team-a', creationTimestamp: '2026-11-23T10:00:00Z' },
    spec: { hard: { pods: '10', 'requests.cpu': '2' } },
    status: { hard: { pods: '10', 'requests.cpu': '2' }, used: { pods: '1', 'requests.cpu': '500m' } },
  };

  it("prints kubectl's columns for get quota", async () => {
    answers.set('GET /v1/namespaces/team-a/resourcequotas', [200, { kind: 'ResourceQuotaList', items: [quota] }]);
    const out = io();
    expect(await run(['get', 'quota', '-n', 'team-a'], out)).toBe(EXIT.ok);
    expect(out.out).toBe(
      'NAME      AGE     REQUEST                            LIMIT\ncompute   5m30s   pods: 1/10, requests.cpu: 500m/2\n',
    );
  });

  it("prints kubectl's Used/Hard table for describe quota", async () => {
    answers.set('GET /v1/namespaces/team-a/resourcequotas/compute', [200, quota]);
    const out = io();
    expect(await run(['describe', 'resourcequota/compute', '-n', 'team-a'], out)).toBe(EXIT.ok);
    expect(out.out).toBe(
      'Name:         compute\nNamespace:    team-a\nResource      Used  Hard\n--------      ----  ----\npods          1     10\nrequests.cpu  500m  2\n',
    );
  });

  it('says so on stderr when the namespace has none', async () => {
    answers.set('GET /v1/namespaces/empty/limitranges', [200, { kind: 'LimitRangeList', items: [] }]);
    const out = io();
    expect(await run(['get', 'limits', '-n', 'empty'], out)).toBe(EXIT.ok);
    expect(out.out).toBe('');
    expect(out.err).toBe('No resources found in empty namespace.\n');
  });

  it('prints the server object with -o json or yaml, and a List without a name', async () => {
    answers.set('GET /v1/namespaces/team-a/resourcequotas/compute', [200, quota]);
    answers.set('GET /v1/namespaces/team-a/resourcequotas', [200, { kind: 'ResourceQuotaList', items: [quota] }]);
    const json = io();
    await run(['get', 'quota', 'compute', '-n', 'team-a', '-o', 'json'], json);
    expect(JSON.parse(json.out)).toEqual(quota);
    const yaml = io();
    await run(['get', 'quota', '-n', 'team-a', '--output=yaml'], yaml);
    expect(yaml.out).toMatch(/^apiVersion: v1\nkind: List\n/);
    expect(yaml.out).toContain('  - apiVersion: v1\n    kind: ResourceQuota\n');
  });

  it("prints kind/name lines with -o name, as kubectl's -o name, by the resource asked for", async () => {
    const second = { metadata: { name: 'storage' } }; // list items need not carry a kind
    answers.set('GET /v1/namespaces/team-a/resourcequotas', [200, { kind: 'ResourceQuotaList', items: [quota, second] }]);
    answers.set('GET /v1/namespaces/team-a/limitranges/defaults', [200, { metadata: { name: 'defaults' } }]);
    answers.set('GET /v1/clusterresourcequotas', [200, { items: [{ metadata: { name: 'acme' } }] }]);
    answers.set('GET /v1/namespaces/team-a/hierarchicalresourcequotas', [200, { items: [{ metadata: { name: 'subtree' } }] }]);
    const cases: [string[], string][] = [
      [['get', 'quota', '-n', 'team-a', '-o', 'name'], 'resourcequota/compute\nresourcequota/storage\n'],
      [['get', 'limits/defaults', '-n', 'team-a', '--output=name'], 'limitrange/defaults\n'],
      [['get', 'clusterquota', '-o', 'name'], 'clusterresourcequota.quota.openshift.io/acme\n'],
      [['get', 'hrq', '-n', 'team-a', '-o', 'name'], 'hierarchicalresourcequota.hnc.x-k8s.io/subtree\n'],
    ];
    for (const [argv, expected] of cases) {
      const out = io();
      expect(await run(argv, out), out.err).toBe(EXIT.ok);
      expect(out.out).toBe(expected);
    }
    answers.set('GET /v1/namespaces/empty/resourcequotas', [200, { items: [] }]);
    const none = io();
    expect(await run(['get', 'quota', '-n', 'empty', '-o', 'name'], none)).toBe(EXIT.ok);
    expect([none.out, none.err]).toEqual(['', 'No resources found in empty namespace.\n']);
  });

  it('refuses -o name where the output is not objects, naming the formats that command has, before sending anything', async () => {
    for (const argv of [['describe', 'quota'], ['usage'], ['decisions'], ['version']]) {
      const out = io();
      expect(await run([...argv, '-o', 'name'], out)).toBe(EXIT.usage);
      expect(out.err).toBe(
        'error: unable to match a printer suitable for the output format "name", allowed formats are: json,table,yaml\n',
      );
    }
    const get = io();
    expect(await run(['get', 'quota', '-o', 'xml'], get)).toBe(EXIT.usage);
    expect(get.err).toContain('allowed formats are: json,name,table,yaml');
    expect(seen).toEqual([]);
  });
});

describe('exit codes for what the server answers', () => {
  it.each([
    [404, 'NotFound', EXIT.notFound],
    [401, 'Unauthorized', EXIT.unauthorized],
    [403, 'Forbidden', EXIT.unauthorized],
    [400, 'BadRequest', EXIT.failed],
    [409, 'Conflict', EXIT.failed],
    [410, 'Expired', EXIT.failed],
    [422, 'Invalid', EXIT.failed],
    [429, 'TooManyRequests', EXIT.unavailable],
    [500, 'InternalError', EXIT.unavailable],
    [503, 'ServiceUnavailable', EXIT.unavailable],
  ])('maps a %i %s Status to exit code %i', async (code, reason, exit) => {
    answers.set('GET /v1/namespaces/x/resourcequotas/q', [code, status(code, reason, 'because')]);
    const out = io();
    expect(await run(['get', 'quota', 'q', '-n', 'x'], out)).toBe(exit);
    expect(out.err.split('\n')[0]).toBe(`Error from server (${reason}): because`);
  });

  it('exits 6 when nothing listens', async () => {
    const out = io();
    expect(await run(['get', 'quota', '--server', 'http://127.0.0.1:1'], out)).toBe(EXIT.unavailable);
    expect(out.err).toBe('error: the connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?\n');
  });

  it('says where a refused token came from', async () => {
    answers.set('GET /v1/namespaces/default/resourcequotas', [401, status(401, 'Unauthorized', 'a bearer token is required')]);
    const none = io();
    expect(await run(['get', 'quota'], none)).toBe(EXIT.unauthorized);
    expect(none.err).toContain('No token was sent');
    const dev = io({ '/work/.quota-ledger/dev-token': 'stale\n' });
    await run(['get', 'quota'], dev);
    expect(dev.err).toContain('.quota-ledger/dev-token');
  });
});

describe('the token', () => {
  it.each([
    ['--token first', ['--token', 'flag'], { QUOTA_LEDGER_TOKEN: 'env' }, 'Bearer flag'],
    ['QUOTA_LEDGER_TOKEN next', [], { QUOTA_LEDGER_TOKEN: 'env' }, 'Bearer env'],
    ['the development token of the working directory last', [], {}, 'Bearer dev-123'],
  ])('%s', async (_, flags, env, auth) => {
    answers.set('GET /v1/namespaces/a/resourcequotas', [200, { items: [] }]);
    await run(['get', 'quota', '-n', 'a', ...flags], io({ '/work/.quota-ledger/dev-token': 'dev-123\n' }, env));
    expect(seen.at(-1)?.auth).toBe(auth);
  });
});

describe('audit commands', () => {
  it('usage --at asks for that instant and prints QUOTA RESOURCE USED HARD', async () => {
    answers.set('GET /v1/namespaces/team-a/usage?at=2026-11-23T14%3A03%3A00Z', [
      200,
      { namespace: 'team-a', position: '9', quotas: [{ name: 'compute', hard: { pods: '10' }, used: { pods: '2' } }] },
    ]);
    const out = io();
    expect(await run(['usage', '-n', 'team-a', '--at', '2026-11-23T14:03:00Z'], out)).toBe(EXIT.ok);
    expect(out.out).toBe('QUOTA     RESOURCE   USED   HARD\ncompute   pods       2      10\n');
  });

  it('usage clusterresourcequota NAME --at prints the total and each namespace part; hrq goes through -n', async () => {
    answers.set('GET /v1/clusterresourcequotas/acme/usage?at=2026-11-23T14%3A03%3A00Z', [
      200,
      {
        key: 'clusterresourcequotas/acme',
        defined: true,
        hard: { pods: '5' },
        used: { pods: '3' },
        namespaces: [
          { namespace: 'b', used: { pods: '2' } },
          { namespace: 'a', used: { pods: '1' } },
        ],
      },
    ]);
    const out = io();
    expect(await run(['usage', 'clusterresourcequota', 'acme', '--at', '2026-11-23T14:03:00Z'], out)).toBe(EXIT.ok);
    expect(out.out).toBe(
      'NAMESPACE   RESOURCE   USED   HARD\n(all)       pods       3      5\na           pods       1\nb           pods       2\n',
    );
    answers.set('GET /v1/namespaces/org/hierarchicalresourcequotas/tree/usage', [
      200,
      { defined: true, hard: {}, used: {}, namespaces: [] },
    ]);
    expect(await run(['usage', 'hrq/tree', '-n', 'org'], io())).toBe(EXIT.ok);
    expect(seen.at(-1)?.url).toBe('/v1/namespaces/org/hierarchicalresourcequotas/tree/usage');
    const wrong = io();
    expect(await run(['usage', 'quota', 'compute', '-n', 'org'], wrong)).toBe(EXIT.usage);
    expect(wrong.err).toContain('quotactl usage -n NS');
  });

  it('history pages with --after and --limit and says where the next page starts', async () => {
    answers.set('GET /v1/namespaces/team-a/events?after=5&limit=1', [
      200,
      {
        items: [{ position: '6', version: 2, type: 'Committed', time: '2026-11-23T10:00:00Z', actor: 'ci', data: { reservationId: 'r1' } }],
        next: '6',
      },
    ]);
    const out = io();
    expect(await run(['history', '-n', 'team-a', '--after', '5', '--limit', '1'], out)).toBe(EXIT.ok);
    expect(out.out).toMatch(/^POSITION +TIME +TYPE +ACTOR +SUMMARY\n6 +2026-11-23T10:00:00Z +Committed +ci +r1\n$/);
    expect(out.err).toBe('(more: --after 6)\n');
  });

  it('decisions --denied asks for allowed=false with the filters, newest first', async () => {
    answers.set('GET /v1/namespaces/team-a/decisions?allowed=false&since=2026-11-23T00%3A00%3A00Z&limit=10&order=newest', [
      200,
      { items: [] },
    ]);
    const out = io();
    expect(await run(['decisions', '-n', 'team-a', '--denied', '--since', '2026-11-23T00:00:00Z', '--limit', '10'], out)).toBe(EXIT.ok);
    expect(out.out).toMatch(/^TIME +ALLOWED +DRY-RUN +KIND +NAME +OPERATION +REQUESTER +REASON +MESSAGE\n$/);
  });

  it.each([
    [['--dry-run=false'], 'dryRun=false'],
    [['--dry-run=true'], 'dryRun=true'],
    [['--dry-run'], 'dryRun=true'],
  ])('decisions --denied %j asks for allowed=false&%s', async (flag, query) => {
    answers.set(`GET /v1/namespaces/team-a/decisions?allowed=false&${query}&order=newest`, [200, { items: [] }]);
    expect(await run(['decisions', '-n', 'team-a', '--denied', ...flag], io())).toBe(EXIT.ok);
    expect(seen.at(-1)?.url).toBe(`/v1/namespaces/team-a/decisions?allowed=false&${query}&order=newest`);
  });

  it('decisions reads the newest first, pages on into older ones, and --order oldest reads from the start as the API does by default', async () => {
    const decision = (id: string, time: string) => ({
      id,
      time,
      allowed: true,
      dryRun: false,
      kind: 'Pod',
      name: `web-${id}`,
      operation: 'CREATE',
      requester: 'ci',
      result: { allowed: true, charged: { pods: '1' } },
    });
    answers.set('GET /v1/namespaces/team-a/decisions?limit=2&order=newest', [
      200,
      { items: [decision('9', '2026-11-23T10:05:00Z'), decision('8', '2026-11-23T10:04:00Z')], next: '8' },
    ]);
    const newest = io();
    expect(await run(['decisions', '-n', 'team-a', '--limit', '2'], newest)).toBe(EXIT.ok);
    expect(
      newest.out
        .split('\n')
        .slice(1, 3)
        .map((line) => line.split(/ +/)[4]),
    ).toEqual(['web-9', 'web-8']);
    expect(newest.err).toBe('(more: --after 8)\n');
    answers.set('GET /v1/namespaces/team-a/decisions?after=8&limit=2&order=newest', [
      200,
      { items: [decision('7', '2026-11-23T10:03:00Z')] },
    ]);
    expect(await run(['decisions', '-n', 'team-a', '--after', '8', '--limit', '2'], io())).toBe(EXIT.ok);
    answers.set('GET /v1/namespaces/team-a/decisions?limit=2', [200, { items: [decision('1', '2026-11-23T09:00:00Z')] }]);
    const oldest = io();
    expect(await run(['decisions', '-n', 'team-a', '--limit', '2', '--order', 'oldest'], oldest)).toBe(EXIT.ok);
    expect(oldest.out).toContain('web-1');
    expect(seen.map((s) => s.url)).toEqual([
      '/v1/namespaces/team-a/decisions?limit=2&order=newest',
      '/v1/namespaces/team-a/decisions?after=8&limit=2&order=newest',
      '/v1/namespaces/team-a/decisions?limit=2',
    ]);
    const bad = io();
    expect(await run(['decisions', '--order', 'sideways'], bad)).toBe(EXIT.usage);
    expect(bad.err).toBe('error: --order takes newest or oldest, got "sideways"\n');
  });

  it('reserve --dry-run=false is a real reservation', async () => {
    answers.set('POST /v1/namespaces/team-a/reservations', [
      201,
      { id: 'r-9', namespace: 'team-a', state: 'reserved', charged: { pods: '1' } },
    ]);
    expect(await run(['reserve', '-n', 'team-a', '--kind', 'Pod', '--resources', 'pods=1', '--dry-run=false'], io())).toBe(EXIT.ok);
    expect(seen.at(-1)?.body).not.toHaveProperty('dryRun');
  });
});

describe('reserve --wait: a reservation that does not fit waits in the queue', () => {
  const queuedAnswer = {
    id: 'q-1',
    namespace: 'a',
    state: 'queued',
    position: 2,
    waitingFor: [{ quota: 'compute', resources: [{ resource: 'pods', requested: '1', used: '10', hard: '10' }] }],
    expiresAt: '2026-11-23T10:15:30Z',
  };
  const watchKey = 'GET /v1/namespaces/a/reservations/q-1?watch=true&timeoutSeconds=27';

  it('sends the wait, says on stderr where it waits and for what, and with --no-follow prints the id without watching', async () => {
    answers.set('POST /v1/namespaces/a/reservations', [202, queuedAnswer]);
    const out = io();
    expect(
      await run(['reserve', '-n', 'a', '--kind', 'Pod', '--resources', 'pods=1', '--wait', '10m', '--priority=-5', '--no-follow'], out),
    ).toBe(EXIT.ok);
    expect(seen.map((s) => s.method)).toEqual(['POST']);
    expect(seen[0]?.body).toEqual({ kind: 'Pod', resources: { pods: '1' }, wait: { seconds: 600, priority: -5 } });
    expect(out.out).toBe('q-1\n');
    expect(out.err).toBe(
      'reservation/q-1 queued at position 2 in a, expires in 10m (2026-11-23T10:15:30Z)\n  waiting for compute: pods 1 (used 10/10)\n',
    );
  });

  it('watches until it is admitted, then prints the id (or the reservation in -o json)', async () => {
    answers.set('POST /v1/namespaces/a/reservations', [202, queuedAnswer]);
    answers.set(watchKey, [200, { id: 'q-1', namespace: 'a', state: 'reserved', charged: { pods: '1' } }]);
    const out = io();
    expect(await run(['reserve', '-n', 'a', '--kind', 'Pod', '--resources', 'pods=1', '--wait', '90s'], out)).toBe(EXIT.ok);
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual(['POST /v1/namespaces/a/reservations', watchKey]);
    expect(out.out).toBe('q-1\n');
    expect(out.err).toMatch(/\nreservation\/q-1 admitted after 0s\n$/);
    const json = io();
    expect(await run(['reserve', '-n', 'a', '--kind', 'Pod', '--resources', 'pods=1', '--wait', '90s', '-o', 'json'], json)).toBe(EXIT.ok);
    expect(JSON.parse(json.out)).toMatchObject({ id: 'q-1', state: 'reserved' });
  });

  it('exits 1 when it is cancelled while it waits, 3 when it expires, with the reason', async () => {
    answers.set('POST /v1/namespaces/a/reservations', [202, queuedAnswer]);
    answers.set(watchKey, [200, { ...queuedAnswer, state: 'cancelled' }]);
    const cancelled = io();
    expect(await run(['reserve', '-n', 'a', '--kind', 'Pod', '--resources', 'pods=1', '--wait', '1h'], cancelled)).toBe(EXIT.failed);
    expect(cancelled.out).toBe('');
    expect(cancelled.err).toMatch(/\nerror: reservation\/q-1 was cancelled while it waited\n$/);
    answers.set(watchKey, [200, { ...queuedAnswer, state: 'expired', reason: 'waited 3600s without room in compute' }]);
    const expired = io();
    expect(await run(['reserve', '-n', 'a', '--kind', 'Pod', '--resources', 'pods=1', '--wait', '1h'], expired)).toBe(EXIT.denied);
    expect(expired.err).toMatch(/\nerror: reservation\/q-1 expired while it waited: waited 3600s without room in compute\n$/);
  });

  it('queue prints the table in queue order, -o name the reservations release takes', async () => {
    const item = {
      ...queuedAnswer,
      priority: 100,
      resources: { pods: '1' },
      object: { group: '', resource: 'pods' },
      queuedAt: '2026-11-23T10:05:00Z',
      passed: 0,
    };
    answers.set('GET /v1/namespaces/a/queue', [
      200,
      {
        namespace: 'a',
        items: [
          { ...item, position: 1 },
          { ...item, id: 'q-2', position: 2, priority: 0, estimate: { samples: 12, p50Seconds: 42, p90Seconds: 185 } },
        ],
      },
    ]);
    const out = io();
    expect(await run(['queue', '-n', 'a'], out)).toBe(EXIT.ok);
    expect(out.out).toBe(
      [
        'POSITION   ID    PRIORITY   RESOURCES   AGE   EXPIRES   TYPICAL WAIT     WAITING FOR',
        '1          q-1   100        pods=1      30s   10m       <none>           compute: pods 1 (used 10/10)',
        '2          q-2   0          pods=1      30s   10m       42s (p90 3m5s)   compute: pods 1 (used 10/10)',
        '',
      ].join('\n'),
    );
    const names = io();
    expect(await run(['queue', '-n', 'a', '-o', 'name'], names)).toBe(EXIT.ok);
    expect(names.out).toBe('reservation/q-1\nreservation/q-2\n');
  });
});

describe('reservations', () => {
  it('reserve sends the resource list and prints the id', async () => {
    answers.set('POST /v1/namespaces/team-a/reservations', [
      201,
      { id: 'r-1', namespace: 'team-a', state: 'reserved', charged: { pods: '1' } },
    ]);
    const out = io();
    expect(
      await run(
        [
          'reserve',
          '-n',
          'team-a',
          '--kind',
          'Pod',
          '--name',
          'web-1',
          '--resources',
          'requests.cpu=500m,pods=1',
          '--request-id',
          'k1',
          '--ttl',
          '600',
        ],
        out,
      ),
    ).toBe(EXIT.ok);
    expect(out.out).toBe('r-1\n');
    expect(seen[0]?.body).toEqual({
      kind: 'Pod',
      name: 'web-1',
      requestId: 'k1',
      resources: { 'requests.cpu': '500m', pods: '1' },
      ttlSeconds: 600,
    });
  });

  it('reserve -f sends the object, its namespace and kind, and --dry-run', async () => {
    answers.set('POST /v1/namespaces/team-b/reservations', [
      200,
      { namespace: 'team-b', state: 'reserved', dryRun: true, charged: { pods: '1' } },
    ]);
    const pod = 'apiVersion: v1\nkind: Pod\nmetadata: {name: web-1, namespace: team-b}\nspec: {containers: [{name: app, image: nginx}]}\n';
    const out = io({ '/work/pod.yaml': pod });
    expect(await run(['reserve', '-f', 'pod.yaml', '--dry-run'], out)).toBe(EXIT.ok);
    expect(out.out).toBe('dry run: allowed, would charge pods=1\n');
    expect(seen[0]?.body).toMatchObject({ kind: 'Pod', name: 'web-1', dryRun: true, object: { metadata: { name: 'web-1' } } });
  });

  it('exits 3 on a denied reservation and prints the denial', async () => {
    const message = 'pods "web-2" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=1, limited: pods=1';
    answers.set('POST /v1/namespaces/a/reservations', [
      403,
      status(403, 'Forbidden', message, { kind: 'Pod', stage: 'ResourceQuota', denial: { kind: 'Exceeded', quota: 'compute' } }),
    ]);
    const out = io();
    expect(await run(['reserve', '-n', 'a', '--kind', 'Pod', '--name', 'web-2', '--resources', 'pods=1'], out)).toBe(EXIT.denied);
    expect(out.err).toBe(`Error from server (Forbidden): ${message}\n`);
    const json = io();
    expect(await run(['reserve', '-n', 'a', '--kind', 'Pod', '--name', 'web-2', '--resources', 'pods=1', '-o', 'json'], json)).toBe(
      EXIT.denied,
    );
    expect(JSON.parse(json.out)).toMatchObject({ details: { denial: { quota: 'compute' } } });
  });

  it('a 403 without a decision is a refused caller (exit 5), not a denial', async () => {
    answers.set('POST /v1/namespaces/a/reservations', [403, status(403, 'Forbidden', 'token "ci" lacks the role admission')]);
    expect(await run(['reserve', '-n', 'a', '--kind', 'Pod', '--resources', 'pods=1'], io())).toBe(EXIT.unauthorized);
  });

  it('commit and release settle the reservation', async () => {
    answers.set('POST /v1/namespaces/a/reservations/r-1/commit', [200, { id: 'r-1', state: 'committed' }]);
    answers.set('DELETE /v1/namespaces/a/reservations/r-2', [200, { id: 'r-2', state: 'released', releaseReason: 'cancelled' }]);
    const commit = io();
    expect(await run(['commit', '-n', 'a', 'r-1'], commit)).toBe(EXIT.ok);
    expect(commit.out).toBe('reservation/r-1 committed\n');
    const release = io();
    expect(await run(['release', 'r-2', '-n', 'a'], release)).toBe(EXIT.ok);
    expect(release.out).toBe('reservation/r-2 released (cancelled)\n');
  });

  it('-o name: reserve prints reservation/ID, which commit and release take back', async () => {
    answers.set('POST /v1/namespaces/a/reservations', [201, { id: 'r-7', namespace: 'a', state: 'reserved', charged: { pods: '1' } }]);
    answers.set('POST /v1/namespaces/a/reservations/r-7/commit', [200, { id: 'r-7', state: 'committed' }]);
    answers.set('DELETE /v1/namespaces/a/reservations/r-7', [200, { id: 'r-7', state: 'released', releaseReason: 'cancelled' }]);
    const reserve = io();
    expect(await run(['reserve', '-n', 'a', '--kind', 'Pod', '--resources', 'pods=1', '-o', 'name'], reserve)).toBe(EXIT.ok);
    expect(reserve.out).toBe('reservation/r-7\n');
    for (const command of ['commit', 'release']) {
      const out = io();
      expect(await run([command, '-n', 'a', reserve.out.trim(), '-o', 'name'], out), out.err).toBe(EXIT.ok);
      expect(out.out).toBe('reservation/r-7\n');
    }
    expect(seen.map((s) => `${s.method} ${s.url}`).slice(1)).toEqual([
      'POST /v1/namespaces/a/reservations/r-7/commit',
      'DELETE /v1/namespaces/a/reservations/r-7',
    ]);
  });

  it('-o name of a dry run: no reservation, so nothing on stdout and the decision on stderr', async () => {
    answers.set('POST /v1/namespaces/a/reservations', [200, { namespace: 'a', state: 'reserved', dryRun: true, charged: { pods: '1' } }]);
    const out = io();
    expect(await run(['reserve', '-n', 'a', '--kind', 'Pod', '--resources', 'pods=1', '--dry-run', '-o', 'name'], out)).toBe(EXIT.ok);
    expect([out.out, out.err]).toEqual(['', 'dry run: allowed, would charge pods=1\n']);
  });

  it('a commit after the TTL ran out is a refusal (410, exit 1)', async () => {
    answers.set('POST /v1/namespaces/a/reservations/r-1/commit', [410, status(410, 'Expired', 'reservation r-1 expired')]);
    const out = io();
    expect(await run(['commit', '-n', 'a', 'r-1'], out)).toBe(EXIT.failed);
    expect(out.err).toBe('Error from server (Expired): reservation r-1 expired\n');
  });
});

describe('webhook-config', () => {
  const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

  it('prints both configurations for a service, without a server', async () => {
    const out = io({ '/work/ca.pem': CA });
    expect(
      await run(
        [
          'webhook-config',
          '--ca-file',
          'ca.pem',
          '--service-namespace',
          'quota-ledger',
          '--service-name',
          'api',
          '--failure-policy',
          'Ignore',
          '--timeout-seconds',
          '5',
        ],
        out,
      ),
    ).toBe(EXIT.ok);
    expect(out.out).toContain('kind: MutatingWebhookConfiguration');
    expect(out.out).toContain('kind: ValidatingWebhookConfiguration');
    expect(out.out).toContain('failurePolicy: Ignore');
    expect(out.out).toContain(`caBundle: ${Buffer.from(CA).toString('base64')}`);
    expect(seen).toEqual([]);
  });

  it('--count-failure-policy sets the count-only webhook alone; anything but Fail or Ignore is a usage error', async () => {
    const out = io({ '/work/ca.pem': CA });
    expect(
      await run(
        [
          'webhook-config',
          '--ca-file',
          'ca.pem',
          '--service-namespace',
          'quota-ledger',
          '--service-name',
          'api',
          '--count-failure-policy',
          'Fail',
          '-o',
          'json',
        ],
        out,
      ),
    ).toBe(EXIT.ok);
    const items = (JSON.parse(out.out) as { items: { webhooks: { name: string; failurePolicy: string }[] }[] }).items;
    expect(items.flatMap((i) => i.webhooks.map((w) => `${w.name}=${w.failurePolicy}`))).toEqual([
      'mutate.quota-ledger.io=Fail',
      'mutate-definitions.quota-ledger.io=Fail',
      'validate.quota-ledger.io=Fail',
      'validate-count.quota-ledger.io=Fail',
      'validate-namespaces.quota-ledger.io=Fail',
      'validate-unmanaged-namespaces.quota-ledger.io=Ignore',
    ]);
    const bad = io({ '/work/ca.pem': CA });
    expect(await run(['webhook-config', '--ca-file', 'ca.pem', '--url', 'https://x', '--count-failure-policy', 'Never'], bad)).toBe(
      EXIT.usage,
    );
    expect(bad.err).toContain('--count-failure-policy must be Fail or Ignore, got "Never"');
  });

  it.each([
    [['--service-namespace', 'ns', '--service-name', 'api']],
    [['--ca-file', 'ca.pem']],
    [['--ca-file', 'ca.pem', '--url', 'http://plain.example.com']],
    [['--ca-file', 'ca.pem', '--url', 'https://x', '--service-name', 'api']],
    [['--ca-file', 'ca.pem', '--url', 'https://x', '--failure-policy', 'Sometimes']],
    [['--ca-file', 'ca.pem', '--url', 'https://x', '--timeout-seconds', '31']],
    [['--ca-file', 'ca.pem', '--url', 'https://x', '--namespaces', 'some']],
    [['--ca-file', 'ca.pem', '--url', 'https://x', '--custom-resource', 'widgets.example.com=Widget']],
  ])('refuses %j with exit 2', async (flags) => {
    const out = io({ '/work/ca.pem': CA });
    expect(await run(['webhook-config', ...flags], out)).toBe(EXIT.usage);
    expect(out.err).toMatch(/^error: /);
  });

  it("adds each --custom-resource to the validating rules and prints the reconciler's RBAC to list them", async () => {
    const out = io({ '/work/ca.pem': CA });
    const flags = [
      '--custom-resource',
      'widgets.example.com/v1=Widget',
      '--custom-resource',
      'gadgets.example.com/v1beta1=Gadget',
      '-o',
      'json',
    ];
    expect(
      await run(['webhook-config', '--ca-file', 'ca.pem', '--service-namespace', 'platform', '--service-name', 'api', ...flags], out),
    ).toBe(EXIT.ok);
    type Doc = {
      kind: string;
      metadata: { name: string };
      webhooks?: { rules: unknown[] }[];
      rules?: unknown[];
      subjects?: unknown[];
      roleRef?: { name: string };
    };
    const [, validating, role, binding] = (JSON.parse(out.out) as { items: Doc[] }).items;
    expect([validating?.kind, role?.kind, binding?.kind]).toEqual(['ValidatingWebhookConfiguration', 'ClusterRole', 'ClusterRoleBinding']);
    // Custom resources are only counted: the count-only webhook's, whose CREATE it is sent anyway; their DELETE too.
    expect(validating?.webhooks?.[1]?.rules).toContainEqual({
      apiGroups: ['example.com'],
      apiVersions: ['*'],
      resources: ['widgets', 'gadgets'],
      operations: ['DELETE'],
      scope: 'Namespaced',
    });
    expect(role?.rules).toEqual([{ apiGroups: ['example.com'], resources: ['widgets', 'gadgets'], verbs: ['get', 'list', 'watch'] }]);
    expect(binding?.subjects).toEqual([{ kind: 'ServiceAccount', name: 'quota-ledger-reconciler', namespace: 'platform' }]);
    expect(binding?.roleRef?.name).toBe(role?.metadata.name);
  });

  it('-o name prints each object as kind.group/name, as kubectl apply -o name would', async () => {
    const out = io({ '/work/ca.pem': CA });
    const argv = [
      'webhook-config',
      '--ca-file',
      'ca.pem',
      '--service-namespace',
      'quota-ledger',
      '--service-name',
      'api',
      '--name',
      'ql',
      '--custom-resource',
      'widgets.example.com/v1=Widget',
      '-o',
      'name',
    ];
    expect(await run(argv, out), out.err).toBe(EXIT.ok);
    expect(out.out.split('\n').filter(Boolean)).toEqual([
      'mutatingwebhookconfiguration.admissionregistration.k8s.io/ql',
      'validatingwebhookconfiguration.admissionregistration.k8s.io/ql',
      expect.stringMatching(/^clusterrole\.rbac\.authorization\.k8s\.io\//),
      expect.stringMatching(/^clusterrolebinding\.rbac\.authorization\.k8s\.io\//),
    ]);
  });

  it("applies --namespace-selector and --object-selector, in kubectl's syntax, to both webhooks", async () => {
    const out = io({ '/work/ca.pem': CA });
    const flags = [
      '--namespace-selector',
      'env=prod,team in (a,b),!legacy',
      '--object-selector',
      'tier!=cache',
      '--namespaces',
      'all',
      '-o',
      'json',
    ];
    expect(
      await run(['webhook-config', '--ca-file', 'ca.pem', '--service-namespace', 'quota-ledger', '--service-name', 'api', ...flags], out),
    ).toBe(EXIT.ok);
    const webhooks = (
      JSON.parse(out.out) as { items: { webhooks: { namespaceSelector: unknown; objectSelector: unknown }[] }[] }
    ).items.flatMap((item) => item.webhooks);
    expect(webhooks).toHaveLength(5);
    for (const webhook of webhooks) {
      expect(webhook.namespaceSelector).toEqual({
        matchLabels: { env: 'prod' },
        matchExpressions: [
          { key: 'team', operator: 'In', values: ['a', 'b'] },
          { key: 'legacy', operator: 'DoesNotExist' },
          { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', 'quota-ledger'] },
        ],
      });
      expect(webhook.objectSelector).toEqual({ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['cache'] }] });
    }
  });

  it.each([
    [
      '--namespace-selector',
      'team in ()',
      "error: --namespace-selector \"team in ()\": unable to parse requirement: found ')', expected: ',', or identifier\n",
    ],
    [
      '--object-selector',
      'replicas>1',
      'error: --object-selector "replicas>1": unable to parse requirement: "gt" isn\'t supported in label selectors\n',
    ],
    ['--namespace-selector', '-env=prod', 'error: --namespace-selector "-env=prod": unable to parse requirement: invalid label key "-env"'],
  ])('refuses a bad %s (%j) with exit 2, naming the flag', async (flag, value, message) => {
    const out = io({ '/work/ca.pem': CA });
    // --flag=value: a value starting with '-' would otherwise be taken for a flag.
    expect(await run(['webhook-config', '--ca-file', 'ca.pem', '--url', 'https://x', `${flag}=${value}`], out)).toBe(EXIT.usage);
    expect(out.err.startsWith(message)).toBe(true);
  });
});

describe("warnings: kubectl prints the server's Warning headers on stderr", () => {
  it('prints each Warning: 299 of a reserve as `Warning: text`, unquoted, before the answer, and the answer as before', async () => {
    answers.set('POST /v1/namespaces/team-a/reservations', [
      201,
      { id: 'r-1', namespace: 'team-a', state: 'reserved', charged: { 'requests.cpus': '1' } },
      [
        'Warning',
        '299 - "requests.cpus: no quota covering namespace \\"team-a\\" limits this resource, so nothing is charged for it (did you mean requests.cpu?)"',
        'Warning',
        '299 - "a, b", 199 - "not for people", 299 - "c" "Sat, 23 Nov 2026 10:00:00 GMT"',
        'Warning',
        '299 - "a, b"',
      ],
    ]);
    const out = io();
    expect(await run(['reserve', '-n', 'team-a', '--kind', 'Pod', '--resources', 'requests.cpus=1'], out)).toBe(EXIT.ok);
    expect(out.out).toBe('r-1\n');
    expect(out.err).toBe(
      [
        'Warning: requests.cpus: no quota covering namespace "team-a" limits this resource, so nothing is charged for it (did you mean requests.cpu?)',
        'Warning: a, b',
        'Warning: c',
        '',
      ].join('\n'),
    );
    const json = io();
    expect(await run(['reserve', '-n', 'team-a', '--kind', 'Pod', '--resources', 'requests.cpus=1', '-o', 'json'], json)).toBe(EXIT.ok);
    expect(JSON.parse(json.out)).toMatchObject({ id: 'r-1' });
    expect(json.err).toMatch(/^Warning: requests\.cpus: /);
  });

  it('prints warnings of any answer, a refusal too, and nothing without them', async () => {
    answers.set('GET /v1/namespaces/team-a/resourcequotas', [200, { items: [] }, ['Warning', '299 - "deprecated"']]);
    const out = io();
    expect(await run(['get', 'quota', '-n', 'team-a'], out)).toBe(EXIT.ok);
    expect(out.err).toBe('Warning: deprecated\nNo resources found in team-a namespace.\n');
    answers.set('GET /v1/namespaces/team-a/limitranges', [403, status(403, 'Forbidden', 'no'), ['Warning', '299 - "careful"']]);
    const refused = io();
    expect(await run(['get', 'limits', '-n', 'team-a'], refused)).toBe(EXIT.unauthorized);
    expect(refused.err).toBe('Warning: careful\nError from server (Forbidden): no\n');
  });
});

describe('delete: as kubectl deletes, by TYPE NAME or TYPE/NAME', () => {
  it("sends the API's DELETE for each name, by TYPE NAME… or TYPE/NAME…, and says deleted as kubectl does", async () => {
    answers.set('DELETE /v1/namespaces/team-a/resourcequotas/compute', [200, {}]);
    answers.set('DELETE /v1/namespaces/team-a/resourcequotas/storage', [200, {}]);
    answers.set('DELETE /v1/namespaces/team-a/limitranges/defaults', [200, {}]);
    answers.set('DELETE /v1/clusterresourcequotas/acme', [200, {}]);
    answers.set('DELETE /v1/namespaces/org/hierarchicalresourcequotas/subtree', [200, {}]);
    answers.set('DELETE /v1/namespaces/old', [200, {}]);
    const out = io();
    expect(await run(['delete', 'quota', 'compute', 'storage', '-n', 'team-a'], out)).toBe(EXIT.ok);
    expect(out.out).toBe('resourcequota "compute" deleted\nresourcequota "storage" deleted\n');
    const slashed = io();
    expect(await run(['delete', 'limits/defaults', 'resourcequota/compute', '-n', 'team-a', '-o', 'name'], slashed)).toBe(EXIT.ok);
    expect(slashed.out).toBe('limitrange/defaults\nresourcequota/compute\n');
    const shared = io();
    expect(await run(['delete', 'clusterquota', 'acme'], shared)).toBe(EXIT.ok);
    expect(await run(['delete', 'hrq/subtree', '-n', 'org'], shared)).toBe(EXIT.ok);
    expect(await run(['delete', 'ns', 'old'], shared)).toBe(EXIT.ok);
    expect(shared.out).toBe(
      'clusterresourcequota.quota.openshift.io "acme" deleted\nhierarchicalresourcequota.hnc.x-k8s.io "subtree" deleted\nnamespace "old" deleted\n',
    );
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      'DELETE /v1/namespaces/team-a/resourcequotas/compute',
      'DELETE /v1/namespaces/team-a/resourcequotas/storage',
      'DELETE /v1/namespaces/team-a/limitranges/defaults',
      'DELETE /v1/namespaces/team-a/resourcequotas/compute',
      'DELETE /v1/clusterresourcequotas/acme',
      'DELETE /v1/namespaces/org/hierarchicalresourcequotas/subtree',
      'DELETE /v1/namespaces/old',
    ]);
  });

  it('deletes the objects of -f files, each in its own namespace, after reading them all', async () => {
    answers.set('DELETE /v1/namespaces/team-a/resourcequotas/compute', [200, {}]);
    answers.set('DELETE /v1/clusterresourcequotas/acme', [200, {}]);
    const stream = `${QUOTA_YAML}---\napiVersion: quota.openshift.io/v1\nkind: ClusterResourceQuota\nmetadata: {name: acme}\n`;
    const out = io({ '/work/q.yaml': stream });
    expect(await run(['delete', '-f', 'q.yaml'], out), out.err).toBe(EXIT.ok);
    expect(out.out).toBe('resourcequota "compute" deleted\nclusterresourcequota.quota.openshift.io "acme" deleted\n');
    const pod = io({ '/work/p.yaml': `${QUOTA_YAML}---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n` });
    expect(await run(['delete', '-f', 'p.yaml'], pod)).toBe(EXIT.usage);
    expect(pod.err).toContain(
      'delete handles ResourceQuota, LimitRange, Namespace, ClusterResourceQuota, HierarchicalResourceQuota objects, not "Pod"',
    );
    expect(seen).toHaveLength(2);
  });

  it('reports what is not found (exit 4) and deletes the rest; --ignore-not-found says nothing of it', async () => {
    answers.set('DELETE /v1/namespaces/team-a/resourcequotas/gone', [404, status(404, 'NotFound', 'resourcequotas "gone" not found')]);
    answers.set('DELETE /v1/namespaces/team-a/resourcequotas/compute', [200, {}]);
    const out = io();
    expect(await run(['delete', 'quota', 'gone', 'compute', '-n', 'team-a'], out)).toBe(EXIT.notFound);
    expect(out.err).toBe('Error from server (NotFound): resourcequotas "gone" not found\n');
    expect(out.out).toBe('resourcequota "compute" deleted\n');
    const quiet = io();
    expect(await run(['delete', 'quota', 'gone', '-n', 'team-a', '--ignore-not-found'], quiet)).toBe(EXIT.ok);
    expect([quiet.out, quiet.err]).toEqual(['', '']);
  });

  it("releases a reservation: the API's DELETE of it, printed as release prints it", async () => {
    answers.set('DELETE /v1/namespaces/team-a/reservations/r-1', [200, { id: 'r-1', state: 'released', releaseReason: 'cancelled' }]);
    const out = io();
    expect(await run(['delete', 'reservation', 'r-1', '-n', 'team-a'], out)).toBe(EXIT.ok);
    expect(out.out).toBe('reservation/r-1 released (cancelled)\n');
    const named = io();
    expect(await run(['delete', 'reservation/r-1', '-n', 'team-a', '-o', 'name'], named)).toBe(EXIT.ok);
    expect(named.out).toBe('reservation/r-1\n');
  });

  it.each([
    ['nothing to delete', ['delete']],
    ['a type without a name', ['delete', 'quota']],
    ['an unknown type', ['delete', 'widgets', 'w']],
    ['a type and type/name together', ['delete', 'quota', 'limits/defaults']],
    ['names and -f together', ['delete', 'quota', 'a', '-f', 'q.yaml']],
    ['an output it cannot print', ['delete', 'quota', 'a', '-o', 'json']],
    ['a reservation id the server would refuse', ['delete', 'reservation', 'a b']],
  ])('is a usage error, sending nothing: %s', async (_, argv) => {
    const out = io({ '/work/q.yaml': QUOTA_YAML });
    expect(await run(argv, out)).toBe(EXIT.usage);
    expect(out.err).toMatch(/^error: /);
    expect(seen).toEqual([]);
  });
});

describe('get -A and get namespaces', () => {
  const summary = (
    namespace: string,
    quotas: { name: string; hard: Record<string, string>; used: Record<string, string> }[],
    tightest?: object,
  ) => ({
    namespace,
    version: 3,
    quotas,
    ...(tightest ? { tightest } : {}),
  });
  const quotaIn = (namespace: string, name: string) => ({
    kind: 'ResourceQuota',
    metadata: { name, namespace, creationTimestamp: '2026-11-23T10:00:00Z' },
    status: { hard: { pods: '10' }, used: { pods: '9' } },
  });

  it('lists the quotas of every namespace the ledger holds, NAMESPACE first, asking only namespaces that have quotas', async () => {
    answers.set('GET /v1/namespaces?limit=1000', [
      200,
      {
        items: [summary('team-a', [{ name: 'compute', hard: { pods: '10' }, used: { pods: '9' } }]), summary('team-b', [])],
        next: 'team-b',
      },
    ]);
    answers.set('GET /v1/namespaces?after=team-b&limit=1000', [
      200,
      { items: [summary('team-c', [{ name: 'gpus', hard: { pods: '10' }, used: { pods: '9' } }])] },
    ]);
    answers.set('GET /v1/namespaces/team-a/resourcequotas', [200, { items: [quotaIn('team-a', 'compute')] }]);
    answers.set('GET /v1/namespaces/team-c/resourcequotas', [200, { items: [quotaIn('team-c', 'gpus')] }]);
    const out = io();
    expect(await run(['get', 'quota', '-A'], out), out.err).toBe(EXIT.ok);
    expect(out.out).toBe(
      'NAMESPACE   NAME      AGE     REQUEST      LIMIT\nteam-a      compute   5m30s   pods: 9/10\nteam-c      gpus      5m30s   pods: 9/10\n',
    );
    expect(seen.map((s) => s.url)).not.toContain('/v1/namespaces/team-b/resourcequotas');
    const names = io();
    expect(await run(['get', 'quota', '--all-namespaces', '-o', 'name'], names)).toBe(EXIT.ok);
    expect(names.out).toBe('resourcequota/compute\nresourcequota/gpus\n');
    const yaml = io();
    expect(await run(['get', 'quota', '-A', '-o', 'yaml'], yaml)).toBe(EXIT.ok);
    expect(yaml.out).toMatch(/^apiVersion: v1\nkind: List\n/);
  });

  it('lists limit ranges of every namespace, says "No resources found" when there are none, and refuses a name with -A', async () => {
    answers.set('GET /v1/namespaces?limit=1000', [200, { items: [summary('team-a', []), summary('team-b', [])] }]);
    answers.set('GET /v1/namespaces/team-a/limitranges', [
      200,
      { items: [{ metadata: { name: 'defaults', namespace: 'team-a', creationTimestamp: '2026-11-23T10:00:00Z' } }] },
    ]);
    answers.set('GET /v1/namespaces/team-b/limitranges', [200, { items: [] }]);
    const out = io();
    expect(await run(['get', 'limits', '-A'], out)).toBe(EXIT.ok);
    expect(out.out).toBe('NAMESPACE   NAME       CREATED AT\nteam-a      defaults   2026-11-23T10:00:00Z\n');
    answers.set('GET /v1/namespaces/team-a/hierarchicalresourcequotas', [200, { items: [] }]);
    answers.set('GET /v1/namespaces/team-b/hierarchicalresourcequotas', [200, { items: [] }]);
    const none = io();
    expect(await run(['get', 'hrq', '-A'], none)).toBe(EXIT.ok);
    expect([none.out, none.err]).toEqual(['', 'No resources found\n']);
    const named = io();
    expect(await run(['get', 'quota', 'compute', '-A'], named)).toBe(EXIT.usage);
    expect(named.err).toBe('error: a resource cannot be retrieved by name across all namespaces\n');
  });

  it('ignores -A for ClusterResourceQuotas (cluster-scoped), as kubectl does', async () => {
    answers.set('GET /v1/clusterresourcequotas', [200, { items: [{ metadata: { name: 'acme' } }] }]);
    const out = io();
    expect(await run(['get', 'clusterresourcequota', '-A', '-o', 'name'], out)).toBe(EXIT.ok);
    expect(out.out).toBe('clusterresourcequota.quota.openshift.io/acme\n');
    expect(seen.map((s) => s.url)).toEqual(['/v1/clusterresourcequotas']);
  });

  it('get namespaces: every namespace the ledger holds, its quotas and the tightest resource; one by name; -o name', async () => {
    answers.set('GET /v1/namespaces?limit=1000', [
      200,
      {
        items: [
          summary('team-a', [{ name: 'compute', hard: { pods: '10', 'requests.cpu': '2' }, used: { pods: '9', 'requests.cpu': '1' } }], {
            quota: 'compute',
            resource: 'pods',
            ratio: 0.9,
          }),
          summary('team-b', []),
        ],
      },
    ]);
    const out = io();
    expect(await run(['get', 'namespaces'], out)).toBe(EXIT.ok);
    expect(out.out).toBe('NAME     QUOTAS   TIGHTEST\nteam-a   1        compute: pods 9/10\nteam-b   0        <none>\n');
    const one = io();
    expect(await run(['get', 'ns', 'team-b', '-o', 'json'], one)).toBe(EXIT.ok);
    expect(JSON.parse(one.out)).toEqual(summary('team-b', []));
    const names = io();
    expect(await run(['get', 'namespace', '-o', 'name'], names)).toBe(EXIT.ok);
    expect(names.out).toBe('namespace/team-a\nnamespace/team-b\n');
    const missing = io();
    expect(await run(['get', 'namespace/nope'], missing)).toBe(EXIT.notFound);
    expect(missing.err).toBe('Error from server (NotFound): namespaces "nope" not found\n');
  });
});

describe("the kubeconfig context's namespace is the default -n", () => {
  const KUBECONFIG = [
    'apiVersion: v1',
    'kind: Config',
    'current-context: dev',
    'contexts:',
    '- name: dev',
    '  context: {cluster: c, user: u, namespace: team-a}',
    '- name: prod',
    '  context: {cluster: c, user: u, namespace: team-p}',
    '- name: bare',
    '  context: {cluster: c, user: u}',
    '',
  ].join('\n');
  const list = (namespace: string) => answers.set(`GET /v1/namespaces/${namespace}/resourcequotas`, [200, { items: [] }]);

  it("uses the current context's namespace where -n is not given, and -n over it", async () => {
    list('team-a');
    list('team-b');
    const out = io({ '/home/u/.kube/config': KUBECONFIG }, {}, ['/home/u/.kube/config']);
    expect(await run(['get', 'quota'], out)).toBe(EXIT.ok);
    expect(out.err).toBe('No resources found in team-a namespace.\n');
    expect(await run(['get', 'quota', '-n', 'team-b'], out)).toBe(EXIT.ok);
    expect(seen.map((s) => s.url)).toEqual(['/v1/namespaces/team-a/resourcequotas', '/v1/namespaces/team-b/resourcequotas']);
  });

  it('takes --context and --kubeconfig as kubectl does; a context without a namespace, or none, means "default"', async () => {
    for (const ns of ['team-p', 'team-a', 'default']) list(ns);
    const files = { '/work/kc.yaml': KUBECONFIG };
    expect(await run(['get', 'quota', '--kubeconfig', 'kc.yaml', '--context', 'prod'], io(files))).toBe(EXIT.ok);
    expect(await run(['get', 'quota', '--kubeconfig', '/work/kc.yaml'], io(files))).toBe(EXIT.ok);
    expect(await run(['get', 'quota', '--kubeconfig', 'kc.yaml', '--context', 'bare'], io(files))).toBe(EXIT.ok);
    expect(await run(['get', 'quota'], io(files))).toBe(EXIT.ok);
    expect(seen.map((s) => s.url.split('/')[3])).toEqual(['team-p', 'team-a', 'default', 'default']);
  });

  it('merges $KUBECONFIG files as kubectl does: the first current-context and the first context of a name win; a missing or broken default file is passed over', async () => {
    list('team-x');
    const first = 'contexts:\n- name: dev\n  context: {namespace: team-x}\n';
    const files = { '/k/first': first, '/k/second': KUBECONFIG, '/k/broken': 'contexts: [\n' };
    const out = io(files, {}, ['/k/missing', '/k/broken', '/k/first', '/k/second']);
    expect(await run(['get', 'quota'], out), out.err).toBe(EXIT.ok);
    expect(seen.map((s) => s.url)).toEqual(['/v1/namespaces/team-x/resourcequotas']);
  });

  it("puts an applied object without a namespace in the context's namespace; its own namespace still wins without -n", async () => {
    answers.set('PUT /v1/namespaces/team-a/resourcequotas/q', [201, {}]);
    answers.set('PUT /v1/namespaces/team-z/resourcequotas/z', [201, {}]);
    const stream = 'kind: ResourceQuota\nmetadata: {name: q}\n---\nkind: ResourceQuota\nmetadata: {name: z, namespace: team-z}\n';
    const out = io({ '/work/q.yaml': stream, '/kc': KUBECONFIG }, {}, ['/kc']);
    expect(await run(['apply', '-f', 'q.yaml'], out), out.err).toBe(EXIT.ok);
    expect(seen.filter((s) => s.method === 'PUT').map((s) => s.url)).toEqual([
      '/v1/namespaces/team-a/resourcequotas/q',
      '/v1/namespaces/team-z/resourcequotas/z',
    ]);
  });

  it.each([
    [
      'an unknown --context',
      ['get', 'quota', '--kubeconfig', 'kc.yaml', '--context', 'nope'],
      'error: context "nope" does not exist in kc.yaml\n',
    ],
    ['a missing --kubeconfig', ['get', 'quota', '--kubeconfig', 'gone.yaml'], 'error: cannot read --kubeconfig gone.yaml: no such file\n'],
    [
      'a --context where no kubeconfig is found',
      ['get', 'quota', '--context', 'dev'],
      'error: context "dev" does not exist (no kubeconfig was found)\n',
    ],
    [
      'a --kubeconfig that is not one',
      ['get', 'quota', '--kubeconfig', 'list.yaml'],
      'error: --kubeconfig list.yaml is not a kubeconfig (YAML with contexts)\n',
    ],
    [
      'a context namespace that is not a namespace',
      ['get', 'quota', '--kubeconfig', 'bad.yaml'],
      'error: invalid namespace "Team_A" (the namespace of kubeconfig context "x"): a lowercase RFC 1123 label (letters, digits and \'-\', at most 63)\n',
    ],
  ])('is a usage error, sending nothing: %s', async (_, argv, message) => {
    const out = io({
      '/work/kc.yaml': KUBECONFIG,
      '/work/list.yaml': '- a\n- b\n',
      '/work/bad.yaml': 'current-context: x\ncontexts:\n- name: x\n  context: {namespace: Team_A}\n',
    });
    expect(await run(argv, out)).toBe(EXIT.usage);
    expect(out.err).toBe(message);
    expect(seen).toEqual([]);
  });

  it('is read only by commands that take -n', async () => {
    const reads: string[] = [];
    const out = io();
    const tracking = { ...out, readFile: async (path: string) => (reads.push(path), KUBECONFIG), kubeconfigFiles: ['/kc'] };
    expect(await run(['version'], tracking)).toBe(EXIT.ok);
    expect(await run(['completion', 'bash'], tracking)).toBe(EXIT.ok);
    expect(reads).toEqual([]);
  });
});
