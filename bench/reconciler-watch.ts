/**
 * The reconciler at rest on a real control plane: what its watches cost the
 * kube-apiserver and what it holds in memory, with N namespaces (default 1,000), each under a
 * quota (so every namespace is in the periodic pass) and holding one ConfigMap.
 *
 * 1. starts etcd + kube-apiserver (test/kubernetes/build.sh's binaries), the LedgerQuota CRD, and our stack as built
 *    (test/support/ledger-stack.ts: API, worker, reconciler with INVENTORY_SOURCE=kubernetes,
 *    RECONCILE_WATCH on, the periodic pass every 600 s), and waits for every namespace's first count;
 * 2. a minute with the reconciler stopped (the plane's own traffic, and ours without it), then a
 *    minute with it running and idle (its watches started, nothing changing), diffing the
 *    kube-apiserver's `apiserver_request_total` (by verb) over each;
 * 3. prints requests per minute by verb for both minutes, their difference (the reconciler's),
 *    the reconciler's open watches (apiserver_longrunning_requests: a WATCH is counted in
 *    apiserver_request_total only when it ends), the LIST requests one namespace settle costs (measured over the first counts), and the
 *    reconciler's resident memory (process_resident_memory_bytes) at the end.
 *
 * Asserts nothing. Not a CPU benchmark: the figures are counts and bytes.
 *
 * 4. and, from the restart to idle (nothing settled for 10 s): its time, the namespaces settled
 *    (per namespace), the requests by verb and the LISTs by resource, the peak RSS, and what the
 *    kind caches hold (objects, bytes per object); then the same for a restart that runs a
 *    periodic pass over every namespace at once (its fan-out job queued as it starts); then a
 *    finished pod's compute back (20 pods across the namespaces, phase Succeeded -> Terminated). `--cache=false` runs the reconciler listing
 *    every kind per namespace (INVENTORY_CACHE=false), the shape before the caches.
 *
 *   npx tsx --tsconfig tsconfig.json bench/reconciler-watch.ts [--namespaces=1000] [--seconds=60] [--cache=false] [--setup-concurrency=32]
 *     [--node-options='--max-semi-space-size=8'] [--compare-env=MALLOC_ARENA_MAX=2]
 */
import { readFileSync } from 'node:fs';
import { FAN_OUT_JOB, queueBackendOf, reconcileQueue } from '@quota/jobs';
import { join } from 'node:path';
import { startControlPlane, type ControlPlane } from '../test/support/control-plane.js';
import { kubeApi } from '../test/support/kube-api.js';
import { ROOT } from '../test/support/deploy.js';
import { defineQuota } from '../test/support/ledger-reads.js';
import { prepareLedgerStack, startLedgerStack, type LedgerStack } from '../test/support/ledger-stack.js';

const arg = (name: string, fallback: number): number =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const NAMESPACES = arg('namespaces', 1000);
const SECONDS = arg('seconds', 60);
const CONCURRENCY = 20;
/**
 * Namespace jobs the reconciler runs at once while the bench sets up (RECONCILE_CONCURRENCY, 4 by
 * default): a first count holds its slot through the managed label's propagation wait, so at 4
 * the setup of 10,000 namespaces alone took about an hour. The restart measured runs at the default.
 */
const SETUP_CONCURRENCY = arg('setup-concurrency', 32);
/** `--node-options='--max-semi-space-size=8'`: NODE_OPTIONS of the restarted reconciler (its memory's shape). */
const NODE_OPTIONS = process.argv.find((a) => a.startsWith('--node-options='))?.slice('--node-options='.length);
/**
 * `--compare-env=MALLOC_ARENA_MAX=2[,K=V…]`: a third restart with a pass, the reconciler given these
 * variables besides, so their effect on its memory is read beside the second in the same run.
 */
const COMPARE_ENV: Record<string, string> = Object.fromEntries(
  (process.argv.find((a) => a.startsWith('--compare-env='))?.slice('--compare-env='.length) ?? '')
    .split(',')
    .filter((kv) => kv.includes('='))
    .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
);
/** Pods finished one after another at the end, each timed to its compute given back. */
const FINISHED = 20;
/** `--cache=false`: the reconciler lists every kind per namespace (INVENTORY_CACHE=false), as before the caches. */
const CACHE = process.argv.includes('--cache=false') ? 'false' : 'true';

type ByVerb = Record<string, number>;

/** apiserver_request_total summed by verb (every resource, code and scope); a WATCH is counted when it ends. */
async function requestsByVerb(plane: ControlPlane): Promise<ByVerb> {
  return sumByVerb(plane, 'apiserver_request_total');
}

/** The requests open now (apiserver_longrunning_requests: the watches), by verb. */
async function openByVerb(plane: ControlPlane): Promise<ByVerb> {
  return sumByVerb(plane, 'apiserver_longrunning_requests');
}

async function sumByVerb(plane: ControlPlane, series: string): Promise<ByVerb> {
  const text = await plane.kubectl(['get', '--raw', '/metrics']);
  const totals: ByVerb = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${series}{`)) continue;
    const verb = /verb="([^"]*)"/.exec(line)?.[1] ?? '?';
    totals[verb] = (totals[verb] ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return totals;
}

const diff = (after: ByVerb, before: ByVerb): ByVerb =>
  Object.fromEntries(
    Object.keys(after)
      .map((verb) => [verb, after[verb]! - (before[verb] ?? 0)])
      .filter(([, n]) => n !== 0),
  );
const total = (counts: ByVerb): number => Object.values(counts).reduce((a, b) => a + b, 0);
const perMinute = (counts: ByVerb, seconds: number): ByVerb =>
  Object.fromEntries(Object.entries(counts).map(([verb, n]) => [verb, Math.round((n * 60) / seconds)]));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const mib = (bytes: number): number => Math.round(bytes / 2 ** 20);

async function reconcilerMetric(stack: LedgerStack, series: string): Promise<number> {
  const text = await (await fetch(stack.metricsUrl('reconciler'))).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return Number(line?.slice(series.length + 1) ?? NaN);
}

/** A reconciler series summed over its labels. */
async function reconcilerSum(stack: LedgerStack, series: string): Promise<number> {
  const text = await (await fetch(stack.metricsUrl('reconciler'))).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${series}{`) || l.startsWith(`${series} `))
    .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

/** LIST requests by resource (apiserver_request_total), every scope and code. */
async function listsByResource(plane: ControlPlane): Promise<ByVerb> {
  const text = await plane.kubectl(['get', '--raw', '/metrics']);
  const totals: ByVerb = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{') || !line.includes('verb="LIST"')) continue;
    const resource = /resource="([^"]*)"/.exec(line)?.[1] ?? '?';
    const group = /group="([^"]*)"/.exec(line)?.[1] ?? '';
    const key = group ? `${resource}.${group}` : resource;
    totals[key] = (totals[key] ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return totals;
}

/** The reconciler's memory as its /metrics says: resident, and V8's heap (committed, used) and external memory. */
interface Memory {
  readonly rss: number;
  readonly heapTotal: number;
  readonly heapUsed: number;
  readonly external: number;
}

async function memoryOf(stack: LedgerStack): Promise<Memory> {
  const text = await (await fetch(stack.metricsUrl('reconciler'))).text();
  const value = (series: string) =>
    Number(
      text
        .split('\n')
        .find((l) => l.startsWith(`${series} `))
        ?.slice(series.length + 1) ?? 0,
    );
  return {
    rss: value('process_resident_memory_bytes'),
    heapTotal: value('nodejs_heap_size_total_bytes'),
    heapUsed: value('nodejs_heap_size_used_bytes'),
    external: value('nodejs_external_memory_bytes'),
  };
}

/** Polls the restarted reconciler until it has settled nothing for 10 s: what it settled, and its memory when its RSS peaked. */
async function untilIdle(stack: LedgerStack): Promise<{ settles: number; peak: Memory }> {
  let peak: Memory = { rss: 0, heapTotal: 0, heapUsed: 0, external: 0 };
  let last = -1;
  let quietSince = Date.now();
  for (;;) {
    await sleep(1000);
    const now = await reconcilerMetric(stack, 'quota_ledger_reconciler_namespaces_total').catch(() => NaN);
    const memory = await memoryOf(stack).catch(() => undefined);
    if (memory && memory.rss > peak.rss) peak = memory;
    if (Number.isNaN(now)) continue;
    if (now !== last) quietSince = Date.now();
    else if (Date.now() - quietSince >= 10_000) return { settles: now, peak };
    last = now;
  }
}

async function counted(stack: LedgerStack): Promise<number> {
  const [row] = await stack.sql<{ n: string }>(`SELECT count(DISTINCT namespace) AS n FROM ledger_events WHERE type = 'Counted'`);
  return Number(row?.n ?? 0);
}

/** Runs `work(i)` for i < n, CONCURRENCY at a time. */
async function inParallel(n: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) await work(next++);
    }),
  );
}

/** Namespaces, each under a quota (its first count awaited) and holding a ConfigMap: the LIST requests the first counts cost, and the time. */
async function setUp(
  plane: ControlPlane,
  s: LedgerStack,
  kube: ReturnType<typeof kubeApi>,
): Promise<{ settles: ByVerb; setupSeconds: number }> {
  const setupFrom = Date.now();
  await inParallel(NAMESPACES, async (i) => {
    const name = `bench-${i}`;
    const created = await kube.create('/api/v1/namespaces', { metadata: { name } });
    if (created.status !== 201) throw new Error(`namespace ${name}: ${created.status}`);
  });
  // The quotas make every namespace managed: each is listed for its first count (a namespace settle).
  const before = await requestsByVerb(plane);
  await inParallel(NAMESPACES, (i) => defineQuota(s, `bench-${i}`, 'objects', { 'count/configmaps': '10' }));
  while ((await counted(s)) < NAMESPACES) await sleep(1000);
  const settles = diff(await requestsByVerb(plane), before);
  await inParallel(NAMESPACES, async (i) => {
    const created = await kube.create(`/api/v1/namespaces/bench-${i}/configmaps`, { metadata: { name: 'kept' } });
    if (created.status !== 201) throw new Error(`configmap in bench-${i}: ${created.status}`);
  });
  await sleep(5000);
  const setupSeconds = Math.round((Date.now() - setupFrom) / 1000);

  return { settles, setupSeconds };
}

interface Restart {
  readonly seconds: number;
  readonly settles: number;
  readonly peak: Memory;
  readonly requests: ByVerb;
  readonly lists: ByVerb;
}

/**
 * Starts the stopped reconciler and waits until it is idle: how long, what it settled and asked the
 * kube-apiserver. `pass`: a periodic pass over every namespace is queued as it starts (the
 * schedule's fan-out job, added to its queue), as when a restart meets the interval.
 */
async function measureRestart(plane: ControlPlane, s: LedgerStack, pass = false, env: Record<string, string> = {}): Promise<Restart> {
  const requests0 = await requestsByVerb(plane);
  const lists0 = await listsByResource(plane);
  const startedAt = Date.now();
  if (pass) {
    const queue = reconcileQueue(queueBackendOf(undefined, s.database.url));
    await queue.add(FAN_OUT_JOB, { namespace: '', reason: 'interval' }, { removeOnComplete: true });
    await queue.close();
  }
  await s.startApp('reconciler', {
    RECONCILE_INTERVAL_SECONDS: '600',
    INVENTORY_CACHE: CACHE,
    ...(NODE_OPTIONS ? { NODE_OPTIONS } : {}),
    ...env,
  });
  // Its start: every kind's list and watch, any pass queued; idle once nothing was settled for 10 s.
  const { settles, peak } = await untilIdle(s);
  const seconds = Math.round((Date.now() - startedAt) / 1000);
  return {
    seconds,
    settles,
    peak,
    requests: diff(await requestsByVerb(plane), requests0),
    lists: diff(await listsByResource(plane), lists0),
  };
}

function printRestart(restart: Restart, cacheObjects: number, cacheBytes: number, what = 'restart'): void {
  const listed = Object.entries(restart.lists).sort(([, a], [, b]) => b - a);
  console.log(
    `  ${what} (INVENTORY_CACHE=${CACHE}): idle after ${restart.seconds} s; ${restart.settles} namespaces settled ` +
      `(${Math.round((restart.settles / NAMESPACES) * 100) / 100} per namespace); RSS peak ${mib(restart.peak.rss)} MiB ` +
      `(then V8 heap ${mib(restart.peak.heapTotal)} MiB committed, ${mib(restart.peak.heapUsed)} used; external ${mib(restart.peak.external)} MiB)`,
  );
  console.log(`  ${what} requests by verb: ${JSON.stringify(restart.requests)}`);
  console.log(
    `  ${what} LISTs: ${listed.reduce((n, [, c]) => n + c, 0)} over ${listed.length} resources, at most ${listed[0]?.[1] ?? 0} for one (${listed[0]?.[0] ?? '-'})`,
  );
  if (cacheObjects > 0)
    console.log(
      `  cache: ${cacheObjects} objects, ${Math.round(cacheBytes / 2 ** 20)} MiB of kept facts, ${Math.round(cacheBytes / cacheObjects)} bytes per object`,
    );
}

/** The Terminated event of a pod's uid, polled every 20 ms: ms from `from`. */
async function untilTerminated(s: LedgerStack, namespace: string, uid: string, from: number): Promise<number> {
  for (;;) {
    const rows = await s.sql(
      `SELECT 1 FROM ledger_events WHERE namespace = $1 AND type = 'Terminated' AND data->>'reservationId' IN
         (SELECT data->>'reservationId' FROM ledger_events WHERE namespace = $1 AND data->'object'->>'uid' = $2)`,
      [namespace, uid],
    );
    if (rows.length > 0) return Date.now() - from;
    if (Date.now() - from > 60_000) throw new Error(`pod ${uid} in ${namespace}: no Terminated within 60 s`);
    await sleep(20);
  }
}

/**
 * A finished pod's compute back: `FINISHED` pods, each in another of the namespaces, created, then
 * their phase set to Succeeded (the status subresource, as a kubelet does): ms to their Terminated event.
 */
async function measureFinished(s: LedgerStack, kube: ReturnType<typeof kubeApi>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < FINISHED; i++) {
    const namespace = `bench-${Math.floor((i * NAMESPACES) / FINISHED)}`;
    const body = {
      metadata: { name: 'done' },
      spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '100m' } } }] },
    };
    const created = await kube.create(`/api/v1/namespaces/${namespace}/pods`, body);
    if (created.status !== 201) throw new Error(`pod in ${namespace}: ${created.status} ${JSON.stringify(created.body)}`);
    const uid = String((created.body as { metadata?: { uid?: string } }).metadata?.uid);
    await sleep(1500); // its reservation committed first (the addition's settle)
    const from = Date.now();
    const patched = await kube.patch(`/api/v1/namespaces/${namespace}/pods/done/status`, { status: { phase: 'Succeeded' } }, 'merge');
    if (patched.status !== 200) throw new Error(`pod status in ${namespace}: ${patched.status}`);
    times.push(await untilTerminated(s, namespace, uid, from));
  }
  return times.sort((a, b) => a - b);
}

async function main(): Promise<void> {
  const prepared = await prepareLedgerStack();
  const plane = await startControlPlane({ admission: { configuration: prepared.admission } });
  let stack: LedgerStack | undefined;
  const kube = kubeApi(plane, { maxSockets: CONCURRENCY });
  try {
    // As installed: the LedgerQuota CRD too (the reconciler syncs it every 10 s, and watches it as a discovered kind).
    await plane.apply(readFileSync(join(ROOT, 'deploy/kubernetes/base/ledgerquota-crd.yaml'), 'utf8'));
    await plane.kubectl(['wait', '--for=condition=established', 'crd/ledgerquotas.quota-ledger.io', '--timeout=60s']);
    stack = await startLedgerStack(plane, prepared, { intervalSeconds: 600, graceSeconds: 120 });
    const s = stack;
    await s.stopApp('reconciler');
    await s.startApp('reconciler', { RECONCILE_INTERVAL_SECONDS: '600', RECONCILE_CONCURRENCY: String(SETUP_CONCURRENCY) });
    const { settles, setupSeconds } = await setUp(plane, s, kube);

    await s.stopApp('reconciler');
    await sleep(5000);
    const openWithout = await openByVerb(plane);
    const quiet0 = await requestsByVerb(plane);
    await sleep(SECONDS * 1000);
    const without = diff(await requestsByVerb(plane), quiet0);

    const restart = await measureRestart(plane, s);
    const openIdle = await openByVerb(plane);
    const idle0 = await requestsByVerb(plane);
    const reconciledBefore = await reconcilerMetric(s, 'quota_ledger_reconciler_namespaces_total');
    await sleep(SECONDS * 1000);
    const idle = diff(await requestsByVerb(plane), idle0);
    const reconciledDuring = (await reconcilerMetric(s, 'quota_ledger_reconciler_namespaces_total')) - reconciledBefore;
    const rss = await reconcilerMetric(s, 'process_resident_memory_bytes');
    const heap = await reconcilerMetric(s, 'nodejs_heap_size_used_bytes');

    const cacheObjects = await reconcilerSum(s, 'quota_ledger_reconciler_cache_objects');
    const cacheBytes = await reconcilerSum(s, 'quota_ledger_reconciler_cache_bytes');
    const reconcilerOnly = diff(idle, without);
    const listsPerSettle = Math.round(((settles['LIST'] ?? 0) / NAMESPACES) * 10) / 10;
    console.log(
      `reconciler at rest, ${NAMESPACES} namespaces (each with a quota and a ConfigMap), kube-apiserver ${plane.version}; setup ${setupSeconds} s (RECONCILE_CONCURRENCY=${SETUP_CONCURRENCY} meanwhile)${NODE_OPTIONS ? `; NODE_OPTIONS=${NODE_OPTIONS}` : ''}`,
    );
    console.log(`  requests/min, reconciler stopped: ${total(perMinute(without, SECONDS))} ${JSON.stringify(perMinute(without, SECONDS))}`);
    console.log(
      `  requests/min, reconciler idle:    ${total(perMinute(idle, SECONDS))} ${JSON.stringify(perMinute(idle, SECONDS))} (namespaces reconciled meanwhile: ${reconciledDuring})`,
    );
    console.log(
      `  the reconciler's share:           ${total(perMinute(reconcilerOnly, SECONDS))} ${JSON.stringify(perMinute(reconcilerOnly, SECONDS))}`,
    );
    const watches = (openIdle['WATCH'] ?? 0) - (openWithout['WATCH'] ?? 0);
    console.log(
      `  the reconciler's open watches: ${watches} (each ended by the server after 300 s and resumed: ${Math.round((watches * 60) / 300)} WATCH requests/min on average)`,
    );
    console.log(
      `  one namespace settle (first counts): ${listsPerSettle} LIST requests; a periodic pass every 600 s = ${Math.round((listsPerSettle * NAMESPACES) / 10)} LIST/min on average`,
    );
    console.log(`  reconciler memory: RSS ${Math.round(rss / 2 ** 20)} MiB, heap used ${Math.round(heap / 2 ** 20)} MiB`);
    printRestart(restart, cacheObjects, cacheBytes);
    // Again, with a pass over every namespace at the start (a new schedule's first run).
    await s.stopApp('reconciler');
    const withPass = await measureRestart(plane, s, true);
    printRestart(withPass, 0, 0, 'restart with a periodic pass');
    if (Object.keys(COMPARE_ENV).length > 0) {
      await s.stopApp('reconciler');
      const compared = await measureRestart(plane, s, true, COMPARE_ENV);
      const named = Object.entries(COMPARE_ENV).map(([k, v]) => `${k}=${v}`);
      printRestart(compared, 0, 0, `restart with a periodic pass, ${named.join(' ')}`);
    }
    const finished = await measureFinished(s, kube);
    const at = (q: number) => finished[Math.min(finished.length - 1, Math.ceil(q * finished.length) - 1)];
    console.log(
      `  a finished pod's compute back (${FINISHED} pods, phase Succeeded -> Terminated): p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${finished.at(-1)} ms`,
    );
  } finally {
    kube.close();
    await stack?.stop();
    await plane.stop();
  }
}

await main();
