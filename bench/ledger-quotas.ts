/**
 * Many LedgerQuotas on a real control plane: how soon a change of one governs while admissions
 * move the used of all of them.
 *
 * 1. starts etcd + kube-apiserver (test/kubernetes/build.sh's binaries), the LedgerQuota CRD, and our
 *    stack as built (the definition syncs watching, their periodic pass every 10 s);
 * 2. applies N LedgerQuotas (default 1,000), 16 per namespace (QUOTAS_PER_NAMESPACE_MAX), with
 *    kubectl, and waits until the ledger holds every one;
 * 3. runs reservations over every namespace, four clients at a time (each moves the used of every
 *    quota of its namespace, so each periodic pass finds every status stale), and meanwhile applies
 *    `--changes` hard changes one after another, each to another quota, timing from kubectl's return to the
 *    ledger answering the new hard (the hard admission is judged by);
 * 4. prints the changes' p50/p99/max, and per minute of the load: the kube-apiserver's LedgerQuota
 *    requests by verb (status writes, lists) and the reconciler's CPU seconds.
 *
 * Asserts nothing.
 *
 *   npx tsx --tsconfig tsconfig.json bench/ledger-quotas.ts [--quotas=1000] [--changes=30]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../test/support/deploy.js';
import { eventually } from '../test/support/ledger-reads.js';
import { startLedgerCluster, type LedgerStack } from '../test/support/ledger-stack.js';

const arg = (name: string, fallback: number): number =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const QUOTAS = arg('quotas', 1000);
const CHANGES = arg('changes', 30);
const PER_NAMESPACE = 16;
const NAMESPACES = Math.ceil(QUOTAS / PER_NAMESPACE);
const CRD = join(ROOT, 'deploy/kubernetes/base/ledgerquota-crd.yaml');

const namespaceOf = (i: number) => `lq-${Math.floor(i / PER_NAMESPACE)}`;
const nameOf = (i: number) => `q-${i % PER_NAMESPACE}`;
const ledgerQuota = (i: number, pods: string) => ({
  apiVersion: 'quota-ledger.io/v1alpha1',
  kind: 'LedgerQuota',
  metadata: { name: nameOf(i), namespace: namespaceOf(i) },
  spec: { hard: { pods } },
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The ledger's hard pods of quota `i`, or undefined. */
async function ledgerPods(stack: LedgerStack, i: number): Promise<string | undefined> {
  const answer = await stack.request('GET', `/v1/namespaces/${namespaceOf(i)}/resourcequotas/${nameOf(i)}`);
  return answer.status === 200 ? (answer.body.spec.hard.pods as string) : undefined;
}

/** How many of the bench's quotas the ledger holds (its REST list of each namespace). */
async function ledgerCount(stack: LedgerStack): Promise<number> {
  let held = 0;
  for (let n = 0; n < NAMESPACES; n++) {
    const answer = await stack.request('GET', `/v1/namespaces/lq-${n}/resourcequotas`);
    if (answer.status === 200) held += (answer.body.items as unknown[]).length;
  }
  return held;
}

/** The kube-apiserver's LedgerQuota requests so far, by verb (status writes as `PUT status`). */
async function ledgerQuotaRequests(stack: LedgerStack): Promise<Record<string, number>> {
  const text = await stack.plane.kubectl(['get', '--raw', '/metrics']);
  const totals: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{') || !line.includes('resource="ledgerquotas"')) continue;
    const verb = /verb="([^"]*)"/.exec(line)?.[1] ?? '?';
    const key = line.includes('subresource="status"') ? `${verb} status` : verb;
    totals[key] = (totals[key] ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return totals;
}

async function reconcilerCpuSeconds(stack: LedgerStack): Promise<number> {
  const text = await (await fetch(stack.metricsUrl('reconciler'))).text();
  const line = text.split('\n').find((l) => l.startsWith('process_cpu_seconds_total '));
  return Number(line?.split(' ')[1] ?? NaN);
}

/** Reservations of one pod, four clients at a time, round the namespaces, until `until()`. */
async function load(stack: LedgerStack, stop: { done: boolean }): Promise<number> {
  let admitted = 0;
  const client = async (c: number) => {
    for (let n = c; !stop.done; n += 4) {
      const namespace = `lq-${n % NAMESPACES}`;
      const body = { kind: 'Widget', resource: 'widgets.example.com', name: `w${n}`, resources: { pods: '1' } };
      const answer = await stack.request('POST', `/v1/namespaces/${namespace}/reservations`, body, stack.tokens.admission);
      if (answer.status === 201) admitted++;
    }
  };
  await Promise.all([0, 1, 2, 3].map(client));
  return admitted;
}

async function applyAll(stack: LedgerStack): Promise<void> {
  for (let n = 0; n < NAMESPACES; n++) await stack.plane.createNamespace(`lq-${n}`);
  const items = Array.from({ length: QUOTAS }, (_, i) => ledgerQuota(i, '90000'));
  for (let from = 0; from < items.length; from += 200)
    await stack.plane.kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items: items.slice(from, from + 200) }),
    );
}

async function main(): Promise<void> {
  const stack = await startLedgerCluster({ controllers: ['namespace'] }, { intervalSeconds: 60 });
  try {
    await stack.plane.apply(readFileSync(CRD, 'utf8'));
    await stack.plane.kubectl(['wait', '--for=condition=established', 'crd/ledgerquotas.quota-ledger.io', '--timeout=60s']);
    const setup = Date.now();
    await applyAll(stack);
    const applied = Date.now();
    await eventually(`${QUOTAS} quotas in the ledger`, async () => ((await ledgerCount(stack)) >= QUOTAS ? true : undefined), 900_000);
    console.log(
      `${QUOTAS} LedgerQuotas in ${NAMESPACES} namespaces: applied in ${applied - setup} ms, all in the ledger ${Date.now() - applied} ms later`,
    );
    await sleep(12_000); // a periodic pass over the settled quotas
    const requestsBefore = await ledgerQuotaRequests(stack);
    const cpuBefore = await reconcilerCpuSeconds(stack);
    const loadStart = Date.now();
    const stop = { done: false };
    const reserving = load(stack, stop);
    const times: number[] = [];
    for (let c = 0; c < CHANGES; c++) {
      const i = (c * 37) % QUOTAS;
      const pods = String(80_000 + c * 10);
      await stack.plane.kubectl(['apply', '-f', '-'], JSON.stringify(ledgerQuota(i, pods)));
      const from = Date.now();
      const expected = `${80_000 + c * 10}`.replace(/000$/, 'k');
      await eventually(
        `quota ${i} at ${pods}`,
        async () => {
          const hard = await ledgerPods(stack, i);
          return hard === pods || hard === expected ? true : undefined;
        },
        60_000,
      );
      times.push(Date.now() - from);
      await sleep(1000);
    }
    stop.done = true;
    const admitted = await reserving;
    const minutes = (Date.now() - loadStart) / 60_000;
    const requests = await ledgerQuotaRequests(stack);
    const cpu = (await reconcilerCpuSeconds(stack)) - cpuBefore;
    const sorted = [...times].sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
    console.log(
      `${CHANGES} hard changes, ms from kubectl to the ledger: p50 ${at(0.5)}, p99 ${at(0.99)}, max ${sorted.at(-1)} (${times.join(' ')})`,
    );
    const perMinute = Object.fromEntries(
      Object.entries(requests).map(([verb, n]) => [verb, Math.round((n - (requestsBefore[verb] ?? 0)) / minutes)]),
    );
    console.log(`meanwhile ${admitted} reservations over ${NAMESPACES} namespaces in ${(minutes * 60).toFixed(0)} s`);
    console.log(`LedgerQuota requests per minute: ${JSON.stringify(perMinute)}; reconciler CPU ${(cpu / minutes).toFixed(1)} s per minute`);
  } finally {
    await stack.stop();
    await stack.plane.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
