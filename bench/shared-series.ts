/**
 * A shared quota's usage series after churn (six such reads at once used to kill the API),
 * against the built API as deployed (`--max-old-space-size=256`) and the projection worker: a
 * ClusterResourceQuota that NAMESPACES namespaces joined (each reserving a pod) and all but one
 * then left, read by six auditors at once (`usage/series?points=500`), once over the week after
 * the churn and once over the range that holds it, while a client admits into the one namespace
 * still covered.
 * Prints each read's answers and times, the admissions' p50 before and during, and the API's
 * peak RSS, and whether it survived. Asserts nothing.
 *
 *   npm run build && npm run bench:shared-series [-- NAMESPACES]     (default 1,501)
 */
import 'reflect-metadata';
import { openDataSource, UsageProjection } from '@quota/ledger';
import { closedLoop, HttpClient, type RequestSpec } from './lib/load.js';
import { createDatabase } from './lib/postgres.js';
import { benchCredentials, builtAppsMissing, migrate, sampler, startApi, startProjectionWorker } from './lib/service.js';
import { ms, summarize } from './lib/stats.js';

const NAMESPACES = Number(process.argv[2] ?? 1501);
const AUDITORS = 6;
const missing = builtAppsMissing();
if (missing) {
  console.error(`bench:shared-series: ${missing}`);
  process.exit(2);
}

const namespace = (i: number, tenant: string): RequestSpec => ({
  kind: 'setup',
  method: 'PUT',
  path: `/v1/namespaces/ns-${i}`,
  body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `ns-${i}`, labels: { tenant } } },
});
let seq = 0;
const reserve = (i: number): RequestSpec => ({
  kind: 'admission',
  method: 'POST',
  path: `/v1/namespaces/ns-${i}/reservations`,
  body: { kind: 'Pod', name: `p${seq++}`, resources: { pods: '1' } },
});
const classify = (_spec: RequestSpec, answer: { status: number }) =>
  answer.status === 201 ? 'ok' : answer.status === 403 ? 'denied' : 'error';

const credentials = benchCredentials();
const db = await createDatabase('series');
migrate(db.url);
const api = await startApi(db.url, credentials);
const worker = startProjectionWorker(db.url);
const client = new HttpClient(api.base, credentials.token, 64);
const lagSource = await openDataSource({ url: db.url, poolSize: 1 });
try {
  const crq = {
    apiVersion: 'quota.openshift.io/v1',
    kind: 'ClusterResourceQuota',
    metadata: { name: 'churn' },
    spec: { selector: { labels: { matchLabels: { tenant: 'churn' } } }, quota: { hard: { pods: '1000000' } } },
  };
  const started = new Date().toISOString();
  await client.must({ kind: 'setup', method: 'PUT', path: '/v1/clusterresourcequotas/churn', body: crq });
  for (let i = 0; i < NAMESPACES; i++) {
    await client.must(namespace(i, 'churn'));
    await client.must(reserve(i));
  }
  for (let i = 1; i < NAMESPACES; i++) await client.must(namespace(i, 'gone'));
  const churned = new Date().toISOString();
  const lag = new UsageProjection(lagSource);
  while ((await lag.lag()).eventsBehind > 0) await new Promise((resolve) => setTimeout(resolve, 200));
  console.log(
    `${NAMESPACES} namespaces joined and ${NAMESPACES - 1} left the quota between ${started} and ${churned}; the projection has caught up`,
  );

  const admissions = async (seconds: number) =>
    summarize((await closedLoop(client, { clients: 2, seconds, next: () => reserve(0), classify })).byKind['admission']?.latenciesMs ?? []);
  const before = await admissions(3);
  const rows: Record<string, string | number>[] = [];
  for (const [label, since] of [
    ['the week after the churn', churned],
    ['the range that holds the churn', started],
  ] as const) {
    const until = new Date(Date.now() + 1000).toISOString();
    const rss = sampler(() => api.rss(), 100);
    const during = admissions(8);
    const reads = await Promise.all(
      Array.from({ length: AUDITORS }, async () => {
        const t0 = performance.now();
        const answer = await client
          .send({
            kind: 'read',
            method: 'GET',
            path: `/v1/clusterresourcequotas/churn/usage/series?since=${encodeURIComponent(since)}&until=${encodeURIComponent(until)}&points=500`,
          })
          .catch((error: Error) => ({ status: 0, body: error.message }));
        return { status: answer.status, ms: performance.now() - t0 };
      }),
    );
    const admitted = await during;
    const peak = Math.max(...(await rss.stop()));
    const statuses = reads.reduce<Record<string, number>>(
      (counts, r) => ({ ...counts, [r.status]: (counts[String(r.status)] ?? 0) + 1 }),
      {},
    );
    rows.push({
      range: label,
      answers: JSON.stringify(statuses),
      'slowest read s': ms(Math.max(...reads.map((r) => r.ms)) / 1000),
      'admission p50 ms (before)': ms(before.p50),
      'admission p50 ms (during)': ms(admitted.p50),
      'admission p99 ms (during)': ms(admitted.p99),
      'API peak RSS MiB': Math.round(peak / 2 ** 20),
      'API alive': api.child.exitCode === null ? 'yes' : `exited ${api.child.exitCode}`,
    });
  }
  console.table(rows);
} finally {
  client.close();
  await lagSource.destroy();
  await worker.stop();
  await api.stop();
  await db.drop();
  credentials.remove();
}
