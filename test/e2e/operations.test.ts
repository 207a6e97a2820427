import { readFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { loadConfig } from '@quota/config';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmissionApi } from '../../apps/admission-api/src/app.js';
import { startApi, type RunningApi } from '../support/api.js';
import { createMigratedDatabase } from '../support/database.js';
import { until } from '../support/wait.js';
import { bearer, writeTokensFile, type TestToken } from '../support/tokens.js';

let api: RunningApi;
beforeAll(async () => {
  api = await startApi({}, 'qlops');
  await api.request('PUT', '/v1/namespaces/ops/resourcequotas/compute', {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    spec: { hard: { pods: '2' } },
  });
});
afterAll(async () => {
  await api?.close();
});

let seq = 0;
const review = () => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: `ops-${++seq}`,
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    namespace: 'ops',
    name: `p-${seq}`,
    operation: 'CREATE',
    object: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `p-${seq}`, namespace: 'ops', uid: `ops-uid-${seq}` },
      spec: { containers: [{ name: 'c', image: 'x' }] },
    },
    dryRun: false,
  },
});

type OpenApi = { openapi: string; paths: Record<string, Record<string, Record<string, unknown>>> };

/** The value of one series in Prometheus' text format, or undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** The sum of the samples of `name` whose labels include `labels`, whatever order the labels are written in. */
function sum(text: string, name: string, labels: Record<string, string>): number {
  let total = 0;
  for (const line of text.split('\n')) {
    const match = /^([a-z_:][a-z0-9_:]*)(?:\{(.*)\})? (\S+)$/i.exec(line);
    if (!match || match[1] !== name) continue;
    const have = Object.fromEntries([...(match[2] ?? '').matchAll(/([a-z_]+)="([^"]*)"/gi)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, value]) => have[key] === value)) total += Number(match[3]);
  }
  return total;
}

describe('/metrics', () => {
  it("counts admissions by endpoint, outcome and status code, decisions by reason, and batches, with Node's series unprefixed", async () => {
    // pods: 2 → two webhook admissions allowed, the third denied by ResourceQuota; one REST reservation denied too.
    for (let i = 0; i < 3; i++) expect((await api.request('POST', '/v1/admission/validate', review())).status).toBe(200);
    expect(
      (
        await api.request('POST', '/v1/namespaces/ops/reservations', {
          requestId: 'ops-r',
          kind: 'Pod',
          name: 'r',
          resources: { pods: '1' },
        })
      ).status,
    ).toBe(403);
    expect((await api.request('POST', '/v1/admission/validate', { kind: 'AdmissionReview' })).status).toBe(400);

    const response = await fetch(`${api.base}/metrics`);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const text = await response.text();
    expect(sample(text, 'quota_ledger_admission_duration_seconds_count{endpoint="validate",outcome="allowed",code="200"}')).toBe(2);
    expect(sample(text, 'quota_ledger_admission_duration_seconds_count{endpoint="validate",outcome="denied",code="200"}')).toBe(1);
    expect(sample(text, 'quota_ledger_admission_duration_seconds_count{endpoint="validate",outcome="rejected",code="400"}')).toBe(1);
    expect(sample(text, 'quota_ledger_admission_duration_seconds_count{endpoint="reserve",outcome="denied",code="403"}')).toBe(1);
    expect(sample(text, 'quota_ledger_admission_decisions_total{source="webhook",outcome="allowed",reason=""}')).toBe(2);
    expect(sample(text, 'quota_ledger_admission_decisions_total{source="webhook",outcome="denied",reason="ResourceQuota"}')).toBe(1);
    expect(sample(text, 'quota_ledger_admission_decisions_total{source="rest",outcome="denied",reason="ResourceQuota"}')).toBe(1);
    // Each admission committed in a transaction of its own here (no concurrency).
    expect(sample(text, 'quota_ledger_ledger_batch_commands_count')).toBeGreaterThanOrEqual(3);
    expect(sample(text, 'quota_ledger_ledger_serialization_retries_total')).toBe(0);
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(sample(text, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    // The projection's lag is the projection worker's to export, the queue's depth the reconciler's (metric-names.test.ts).
    expect(text).not.toMatch(/^quota_ledger_(projection|reconcile)/m);
  });

  it('times every answer of the admission endpoints, those sent before any handler runs too (401, 403, 413, 429)', async () => {
    const tokens = {
      tenant: { name: 'team-ops-ci', token: 'team-ops-0123456789abcdef0123456789abc', roles: ['admission'], namespaces: ['ops'] },
      apiserver: { name: 'kube-apiserver', token: 'apiserver-ops-0123456789abcdef012345678', roles: ['webhook'] },
    } satisfies Record<string, TestToken>;
    const limited = await startApi(
      {
        insecureDev: false,
        tokensFile: writeTokensFile(Object.values(tokens)),
        rateLimitPerSecond: 1,
        rateLimitBurst: 2,
        bodyLimitBytes: 4096,
      },
      'qlopst',
    );
    try {
      const seen = new Map<string, number>();
      const post = async (headers: Record<string, string>, body: string): Promise<number> => {
        const status = (
          await fetch(`${limited.base}/v1/admission/validate`, {
            method: 'POST',
            headers: { ...headers, 'content-type': 'application/json' },
            body,
          })
        ).status;
        seen.set(String(status), (seen.get(String(status)) ?? 0) + 1);
        return status;
      };
      expect(await post({}, JSON.stringify(review()))).toBe(401);
      expect(await post(bearer(tokens.apiserver.token), JSON.stringify(review()))).toBe(200);
      expect(await post(bearer(tokens.apiserver.token), JSON.stringify({ ...review(), padding: 'x'.repeat(8192) }))).toBe(413);
      // A tenant's token may not send reviews (403), and is rate limited there; the bucket
      // refills at one a second: send until the limit answers.
      for (let i = 0; i < 20 && !seen.has('429'); i++) await post(bearer(tokens.tenant.token), JSON.stringify(review()));
      expect([...seen.keys()].sort()).toEqual(['200', '401', '403', '413', '429']);

      const text = await (await fetch(`${limited.base}/metrics`)).text();
      for (const [code, count] of seen) {
        expect(sum(text, 'quota_ledger_admission_duration_seconds_count', { endpoint: 'validate', code }), `answers ${code}`).toBe(count);
        expect(
          sum(text, 'quota_ledger_admission_duration_seconds_count', {
            endpoint: 'validate',
            code,
            outcome: code === '200' ? 'allowed' : code === '403' ? 'denied' : 'rejected',
          }),
          `answers ${code}`,
        ).toBe(count);
      }
      expect(sum(text, 'quota_ledger_admission_duration_seconds_count', {})).toBe([...seen.values()].reduce((a, b) => a + b, 0));
    } finally {
      await limited.close();
    }
  });
});

describe('/readyz', () => {
  it('lists each check, as kube-apiserver does', async () => {
    const response = await fetch(`${api.base}/readyz`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('[+]database ok\n[+]queue ok\n[+]shutdown ok\n[+]unsettled-reservations ok\nreadyz check passed\n');
  });

  it('answers 503 naming the queue when Redis is unreachable, and 200 when the queue is excluded', async () => {
    const noRedis = await startApi({ redisUrl: 'redis://127.0.0.1:1' }, 'qlready');
    try {
      const response = await fetch(`${noRedis.base}/readyz`);
      expect(response.status).toBe(503);
      const text = await response.text();
      expect(text).toMatch(
        /^\[\+\]database ok\n\[-\]queue failed: .+\n\[\+\]shutdown ok\n\[\+\]unsettled-reservations ok\nreadyz check failed\n$/,
      );
      const excluded = await fetch(`${noRedis.base}/readyz?exclude=queue`);
      expect(excluded.status).toBe(200);
      expect(await excluded.text()).toContain('[+]queue excluded: ok');
    } finally {
      await noRedis.close();
    }
  });
  // The unauthenticated probe used to name the database's host and port ("connect ECONNREFUSED 127.0.0.1:…").
  it('says which check failed to every caller, and why only to an authenticated caller not limited to namespaces', async () => {
    const tokens: TestToken[] = [
      { name: 'sre', token: 'readyz-sre-0123456789abcdef0123456789abcdef', roles: ['auditor'] },
      { name: 'tenant', token: 'readyz-tenant-0123456789abcdef0123456789ab', roles: ['admission'], namespaces: ['team-a'] },
    ];
    const db = await createMigratedDatabase('qlreadyzwhy');
    // The API reaches PostgreSQL through a proxy of the test's, which then goes away: connections refused.
    const sockets = new Set<Socket>();
    const proxy = createServer((client) => {
      const upstream = connect(5432, '127.0.0.1');
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('error', () => socket.destroy());
        socket.on('close', () => sockets.delete(socket));
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const port = (proxy.address() as AddressInfo).port;
    const url = new URL(db.url);
    url.host = `127.0.0.1:${port}`;
    const config = {
      ...loadConfig({}),
      host: '127.0.0.1',
      port: 0,
      logLevel: 'error' as const,
      databaseUrl: url.toString(),
      databasePoolSize: 2,
      insecureDev: false,
      tokensFile: writeTokensFile(tokens),
      rateLimitPerSecond: 0,
    };
    const app = await createAdmissionApi(config);
    await app.listen(0, '127.0.0.1');
    const base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    try {
      const probe = async (headers: Record<string, string>) => {
        const response = await fetch(`${base}/readyz?exclude=queue`, { headers });
        return { status: response.status, text: await response.text() };
      };
      expect((await probe({})).status).toBe(200);
      proxy.close();
      for (const socket of sockets) socket.destroy();
      const sre = await until('the database check to fail on a refused connection', async () => {
        const answer = await probe(bearer(tokens[0]!.token));
        return answer.text.includes('ECONNREFUSED') ? answer : undefined;
      });
      expect(sre.status).toBe(503);
      expect(sre.text).toMatch(new RegExp(`^\\[-\\]database failed: .*127\\.0\\.0\\.1:${port}$`, 'm'));
      for (const headers of [{}, bearer(tokens[1]!.token), bearer('not-a-token-0123456789abcdef0123456789abcdef')]) {
        const answer = await probe(headers);
        expect(answer.status).toBe(503);
        expect(answer.text).toBe(
          '[-]database failed: reason withheld\n[+]shutdown ok\n[+]unsettled-reservations ok\n[+]queue excluded: ok\nreadyz check failed\n',
        );
      }
    } finally {
      await app.close().catch(() => undefined);
      await db.drop();
    }
  });
});

describe('/docs', () => {
  it('serves the OpenAPI document built from the controllers, with the roles of each operation', async () => {
    const document = (await (await fetch(`${api.base}/docs/openapi.json`)).json()) as OpenApi;
    expect(document.openapi).toMatch(/^3\./);
    const reserve = document.paths['/v1/namespaces/{namespace}/reservations']!['post']!;
    expect(reserve['x-quota-ledger-roles']).toEqual(['admission']);
    expect(reserve.security).toEqual([{ bearer: [] }]);
    expect(document.paths['/v1/namespaces/{namespace}/resourcequotas/{name}']!['put']!['x-quota-ledger-roles']).toEqual(['admin']);
    expect(document.paths['/healthz']!['get']!['x-quota-ledger-roles']).toBeUndefined();
    expect((await fetch(`${api.base}/docs`)).headers.get('content-type')).toContain('text/html');
  });

  it('documents exactly the routes the service has (docs/api-routes.md, and the README while it has the table)', async () => {
    const document = (await (await fetch(`${api.base}/docs/openapi.json`)).json()) as OpenApi;
    const served = new Set<string>();
    for (const [path, item] of Object.entries(document.paths)) {
      for (const method of Object.keys(item)) served.add(`${method.toUpperCase()} ${path.replace('{namespace}', '{ns}')}`);
    }
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const sources: [string, string][] = [
      ['docs/api-routes.md', readFileSync(new URL('../../docs/api-routes.md', import.meta.url), 'utf8')],
    ];
    if (readme.includes('\n## HTTP API\n'))
      sources.push(['the README', readme.slice(readme.indexOf('## HTTP API'), readme.indexOf('\n## ', readme.indexOf('## HTTP API') + 5))]);
    for (const [where, reference] of sources) {
      const documented = new Set([...reference.matchAll(/`(GET|PUT|POST|DELETE) (\/[^`?\s]*)[^`]*`/g)].map((m) => `${m[1]} ${m[2]}`));
      documented.delete('GET /docs');
      documented.delete('GET /ui');
      expect([...served].filter((route) => !documented.has(route)).sort(), `served but not in ${where}`).toEqual([]);
      expect([...documented].filter((route) => !served.has(route)).sort(), `in ${where} but not served`).toEqual([]);
    }
  });
});
