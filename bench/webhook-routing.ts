/**
 * What the count webhook's routing costs, through a real kube-apiserver: the calls each kind of
 * write makes to our validating webhooks and the time kube-apiserver spends in them, with this
 * version's configuration (every namespaced kind's CREATE, less what validate charges and quota
 * never charges, by one matchCondition) beside the fixed list before it (the count-only kinds of
 * CHARGED_KINDS on CREATE, UPDATE and DELETE), in one run on one control plane and one managed
 * namespace. Read from kube-apiserver's own series: apiserver_admission_webhook_admission_duration_seconds
 * (calls and seconds by webhook) and apiserver_admission_match_condition_* (requests the
 * condition left out, and the evaluations it timed).
 *
 *   npx tsx --tsconfig tsconfig.json bench/webhook-routing.ts [--writes=200]
 *
 * Asserts nothing. The writes run one at a time, so a write's mean time includes its webhook calls.
 */
import { parseAllDocuments } from 'yaml';
import { CHARGED_KINDS } from '@quota/domain';
import { kubeApi, type KubeApi } from '../test/support/kube-api.js';
import { defineQuota, untilCounted } from '../test/support/ledger-reads.js';
import { startLedgerCluster, type LedgerStack } from '../test/support/ledger-stack.js';

const WRITES = Number(process.argv.find((a) => a.startsWith('--writes='))?.split('=')[1] ?? 200);
const NAMESPACE = 'routing';

interface Series {
  readonly calls: Record<string, number>;
  readonly seconds: Record<string, number>;
  readonly excluded: number;
  readonly timed: number;
  readonly timedSeconds: number;
}

/** Our webhooks' calls and seconds (by webhook name), and the count webhook's matchCondition figures, so far. */
async function series(stack: LedgerStack): Promise<Series> {
  const lines = (await stack.plane.kubectl(['get', '--raw', '/metrics'])).split('\n');
  const value = (line: string) => Number(line.slice(line.lastIndexOf(' ') + 1));
  const byName = (prefix: string) => {
    const totals: Record<string, number> = {};
    for (const line of lines.filter((l) => l.startsWith(`${prefix}{`))) {
      const name = /name="([^"]*quota-ledger[^"]*)"/.exec(line)?.[1];
      if (name) totals[name] = (totals[name] ?? 0) + value(line);
    }
    return totals;
  };
  const sum = (prefix: string) => Object.values(byName(prefix)).reduce((a, b) => a + b, 0);
  return {
    calls: byName('apiserver_admission_webhook_admission_duration_seconds_count'),
    seconds: byName('apiserver_admission_webhook_admission_duration_seconds_sum'),
    excluded: sum('apiserver_admission_match_condition_exclusions_total'),
    timed: sum('apiserver_admission_match_condition_evaluation_seconds_count'),
    timedSeconds: sum('apiserver_admission_match_condition_evaluation_seconds_sum'),
  };
}

/** The kinds of write measured, each `WRITES` times, one after another. */
const WORKLOADS: readonly { readonly name: string; readonly write: (kube: KubeApi, i: number, tag: string) => Promise<number> }[] = [
  {
    name: 'pod create',
    write: async (kube, i, tag) =>
      (
        await kube.create(`/api/v1/namespaces/${NAMESPACE}/pods`, {
          metadata: { name: `${tag}-p${i}` },
          spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '1m' } } }] },
        })
      ).status,
  },
  {
    name: 'configmap create',
    write: async (kube, i, tag) =>
      (await kube.create(`/api/v1/namespaces/${NAMESPACE}/configmaps`, { metadata: { name: `${tag}-c${i}` } })).status,
  },
  {
    name: 'configmap update',
    write: async (kube, i, tag) =>
      (await kube.patch(`/api/v1/namespaces/${NAMESPACE}/configmaps/${tag}-c${i}`, { data: { at: String(Date.now()) } }, 'merge')).status,
  },
  {
    name: 'role create',
    write: async (kube, i, tag) =>
      (
        await kube.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${NAMESPACE}/roles`, {
          metadata: { name: `${tag}-r${i}` },
          rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
        })
      ).status,
  },
  {
    name: 'lease create',
    write: async (kube, i, tag) =>
      (await kube.create(`/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases`, { metadata: { name: `${tag}-l${i}` } })).status,
  },
  {
    name: 'event create',
    write: async (kube, i, tag) =>
      (
        await kube.create(`/api/v1/namespaces/${NAMESPACE}/events`, {
          metadata: { name: `${tag}-e${i}` },
          involvedObject: { kind: 'Pod', name: `${tag}-p${i}`, namespace: NAMESPACE },
          reason: 'Bench',
          message: 'routing',
        })
      ).status,
  },
  {
    name: 'configmap delete',
    write: async (kube, i, tag) => (await kube.delete(`/api/v1/namespaces/${NAMESPACE}/configmaps/${tag}-c${i}`)).status,
  },
];

/** The configuration before this version's: validate-count sent the count-only kinds of CHARGED_KINDS, CREATE, UPDATE and DELETE, and no condition. */
function fixedList(yaml: string): string {
  const docs = parseAllDocuments(yaml).map((d) => d.toJS() as { kind: string; webhooks: Record<string, unknown>[] });
  const groups = new Map<string, string[]>();
  for (const k of CHARGED_KINDS.filter((kind) => kind.countOnly))
    groups.set(k.groupResource.group, [...(groups.get(k.groupResource.group) ?? []), k.groupResource.resource]);
  const rules = [...groups].map(([group, resources]) => ({
    apiGroups: [group],
    apiVersions: ['*'],
    resources,
    operations: ['CREATE', 'UPDATE', 'DELETE'],
    scope: 'Namespaced',
  }));
  for (const doc of docs.filter((d) => d.kind === 'ValidatingWebhookConfiguration'))
    doc.webhooks = doc.webhooks.map((w) => {
      if (w['name'] !== 'validate-count.quota-ledger.io') return w;
      const { matchConditions: _dropped, ...rest } = w;
      return { ...rest, rules };
    });
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items: docs });
}

/** The condition's evaluations kube-apiserver timed between two readings, and their mean. */
function conditionMicros(before: Series, after: Series): string {
  const timed = after.timed - before.timed;
  return timed === 0 ? 'none timed' : `${timed} timed, ${Math.round(((after.timedSeconds - before.timedSeconds) / timed) * 1e6)} µs each`;
}

const delta = (after: Record<string, number>, before: Record<string, number>, name: string) => (after[name] ?? 0) - (before[name] ?? 0);

async function measure(stack: LedgerStack, kube: KubeApi, tag: string): Promise<void> {
  for (const workload of WORKLOADS) {
    const before = await series(stack);
    const started = process.hrtime.bigint();
    for (let i = 0; i < WRITES; i++) {
      const status = await workload.write(kube, i, tag);
      if (status >= 300) throw new Error(`${workload.name} ${i} (${tag}): ${status}`);
    }
    const ms = Number(process.hrtime.bigint() - started) / 1e6 / WRITES;
    const after = await series(stack);
    const per = (n: number) => Math.round((n / WRITES) * 100) / 100;
    const count = 'validate-count.quota-ledger.io';
    console.log(
      `  ${workload.name.padEnd(17)} calls per write: validate ${per(delta(after.calls, before.calls, 'validate.quota-ledger.io'))}, ` +
        `validate-count ${per(delta(after.calls, before.calls, count))} (${Math.round((delta(after.seconds, before.seconds, count) / WRITES) * 1e6)} µs each write); ` +
        `left out by the condition ${per(after.excluded - before.excluded)} (${conditionMicros(before, after)}); mean write ${ms.toFixed(2)} ms`,
    );
  }
}

async function main(): Promise<void> {
  const stack = await startLedgerCluster({ controllers: ['namespace'] });
  const kube = kubeApi(stack.plane);
  try {
    await stack.plane.createNamespace(NAMESPACE);
    await defineQuota(stack, NAMESPACE, 'objects', { 'count/configmaps': '100000', pods: '100000' });
    await untilCounted(stack, NAMESPACE);
    const current = await stack.webhookConfig();
    console.log(
      `webhook routing, ${WRITES} writes of each kind, one at a time, into a managed namespace; kube-apiserver ${stack.plane.version}`,
    );
    for (const [tag, yaml, what] of [
      ['fixed', fixedList(current), 'the fixed list of count-only kinds (CREATE, UPDATE, DELETE; no condition)'],
      ['every', current, "every kind's CREATE under one matchCondition (this version)"],
    ] as const) {
      await stack.plane.kubectl(['apply', '-f', '-'], yaml);
      await new Promise((resolve) => setTimeout(resolve, 3000)); // the configuration reaches kube-apiserver's webhook cache
      console.log(` ${what}:`);
      await measure(stack, kube, tag);
    }
  } finally {
    kube.close();
    await stack.stop();
    await stack.plane.stop();
  }
}

await main();
