import { NAMESPACE_JOB, reconcileQueue, type NamespaceJobData } from '@quota/jobs';
import type { Queue } from 'bullmq';
import type { Answer } from '../../support/api.js';
import type { KubeAnswer, KubeApi } from '../../support/kube-api.js';
import { collectionPath } from './objects.js';
import { kubeletStatus, type Op, type World } from './operations.js';
import { sameQuantity, type Usage } from './outcome.js';
import { limitRangeObject, quotaObject, type QuotaDefinition, type ResourceList, type Scenario } from './scenario.js';

/**
 * The two namespaces of a run. Both are written through the same kube-apiserver with the same
 * requests; they differ in who enforces: Kubernetes' own ResourceQuota and LimitRanger plugins
 * (ResourceQuota and LimitRange objects in the namespace, our webhooks excluded by the
 * namespace's label) or the ledger (its REST definitions, our webhooks; no ResourceQuota or
 * LimitRange object there, so the built-in plugins, enabled cluster-wide, find nothing to do).
 */

export const SIDE_LABEL = 'quota-ledger.io/differential';
/**
 * A hard entry only the Kubernetes side's unscoped quotas carry, never charged by anything: raising
 * it makes kube-controller-manager sync the quota (a spec.hard change), and status.hard showing the
 * new value proves a recount that began after the step. Scoped quotas cannot hold it (a scope
 * allows only pod resources); the same replenishment that recounts the unscoped ones recounts them.
 */
export const SYNC_RESOURCE = 'count/differential-sync.example.com';

const POLL_MS = 50;
const WAIT_MS = 60_000;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = WAIT_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(POLL_MS);
  }
}

export interface Side {
  readonly label: 'kubernetes' | 'ledger';
  readonly namespace: string;
  define(scenario: Scenario): Promise<void>;
  /** Plays `op` in this side's namespace; a delete answers once the object is gone (or after a while, if a finalizer holds it). */
  perform(op: Op, world: World): Promise<KubeAnswer>;
  usage(): Promise<Usage>;
  /** Makes the enforcer recount (Kubernetes: a quota sync; the ledger: a reconcile) and waits until it has. */
  refresh(): Promise<void>;
  dispose(): Promise<void>;
}

function objectPath(kind: string, namespace: string, name: string): string {
  return `${collectionPath(kind, namespace)}/${name}`;
}

/** The object requests of `op`, the same on both sides. */
async function performObjectOp(
  kube: KubeApi,
  namespace: string,
  op: Exclude<Op, { op: 'hard' | 'define' }>,
  world: World,
): Promise<KubeAnswer> {
  switch (op.op) {
    case 'create':
      return kube.create(collectionPath(op.manifest.kind, namespace), { ...op.manifest, metadata: { ...op.manifest.metadata, namespace } });
    case 'label':
      return kube.patch(objectPath(op.kind, namespace, op.name), { metadata: { labels: { tier: op.value } } });
    case 'resize':
      return kube.patch(
        `${objectPath('Pod', namespace, op.name)}/resize`,
        { spec: { containers: [{ name: op.container, resources: op.resources }] } },
        'strategic',
      );
    case 'finish':
      return kube.patch(`${objectPath('Pod', namespace, op.name)}/status`, { status: { phase: op.phase } });
    case 'deadline':
      return kube.patch(objectPath('Pod', namespace, op.name), { spec: { activeDeadlineSeconds: op.seconds } });
    case 'kubelet':
      return kube.patch(`${objectPath('Pod', namespace, op.name)}/status`, kubeletStatus(op));
    case 'allocate':
      return kube.patch(`${objectPath('PersistentVolumeClaim', namespace, op.name)}/status`, {
        status: { allocatedResources: { storage: op.storage } },
      });
    case 'bind': {
      const claim = world.objects.get(op.name);
      const storage = claim?.kind === 'PersistentVolumeClaim' ? claim.storage : '1Gi';
      return kube.patch(`${objectPath('PersistentVolumeClaim', namespace, op.name)}/status`, {
        status: { phase: 'Bound', capacity: { storage } },
      });
    }
    case 'expand':
      return kube.patch(objectPath('PersistentVolumeClaim', namespace, op.name), {
        spec: { resources: { requests: { storage: op.storage } } },
      });
    case 'retype':
      return kube.patch(objectPath('Service', namespace, op.name), {
        spec: { type: op.type, allocateLoadBalancerNodePorts: op.allocateLoadBalancerNodePorts ?? null },
      });
    case 'delete':
      return deleted(kube, objectPath(op.kind, namespace, op.name), op.graceSeconds);
  }
}

/**
 * DELETE, then wait until what follows has happened: a pod deleted gracefully stays until its
 * grace period has run out (Kubernetes stops charging it then: deletionTimestamp plus
 * deletionGracePeriodSeconds); a claim's pvc-protection finalizer is removed by its controller
 * (unless a pod uses it: then it stays, and is charged, after a few seconds of waiting).
 */
async function deleted(kube: KubeApi, path: string, graceSeconds?: number): Promise<KubeAnswer> {
  const answer = await kube.delete(graceSeconds === undefined ? path : `${path}?gracePeriodSeconds=${graceSeconds}`);
  if (answer.status >= 300) return answer;
  const left = await kube.get(path);
  const { deletionTimestamp, deletionGracePeriodSeconds } = left.body?.metadata ?? {};
  if (left.status === 200 && deletionTimestamp && deletionGracePeriodSeconds !== undefined) {
    const over = Date.parse(deletionTimestamp) + deletionGracePeriodSeconds * 1000 + 1500;
    await sleep(Math.max(0, over - Date.now()));
  }
  await until(`${path} to be gone`, async () => ((await kube.get(path)).status === 404 ? true : undefined), 5_000).catch(() => undefined);
  return answer;
}

/** The hard limits of `quota` after a `hard` step. */
export function hardAfter(quota: QuotaDefinition, op: Extract<Op, { op: 'hard' }>): ResourceList {
  const hard = { ...quota.hard };
  if (op.value === null) delete hard[op.resource];
  else hard[op.resource] = op.value;
  return hard;
}

function sameList(a: ResourceList | undefined, b: ResourceList | undefined): boolean {
  const keys = new Set([...Object.keys(a ?? {}), ...Object.keys(b ?? {})]);
  return [...keys].every((key) => a?.[key] !== undefined && b?.[key] !== undefined && sameQuantity(a[key], b[key]));
}

/** A `define` step's answer: the definitions written (and counted), or the error that stopped them. */
async function defined(define: () => Promise<void>): Promise<KubeAnswer> {
  try {
    await define();
    return { status: 200, body: {} };
  } catch (error) {
    return { status: 500, body: { reason: 'DefinitionFailed', message: (error as Error).message } };
  }
}

export async function createNamespace(kube: KubeApi, name: string, side: Side['label']): Promise<void> {
  const answer = await kube.create('/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels: { [SIDE_LABEL]: side } },
  });
  if (answer.status !== 201) throw new Error(`namespace ${name}: ${answer.status} ${JSON.stringify(answer.body)}`);
}

/** Kubernetes' own plugins, with ResourceQuota and LimitRange objects; kube-controller-manager counts. */
export class KubernetesSide implements Side {
  readonly label = 'kubernetes';
  private sync = 1;

  constructor(
    private readonly kube: KubeApi,
    readonly namespace: string,
  ) {}

  private quotaPath(name = ''): string {
    return `/api/v1/namespaces/${this.namespace}/resourcequotas${name ? `/${name}` : ''}`;
  }

  async define(scenario: Scenario): Promise<void> {
    for (const quota of scenario.quotas) {
      const extra: ResourceList = quota.scopes || quota.scopeSelector ? {} : { [SYNC_RESOURCE]: String(this.sync) };
      const answer = await this.kube.create(this.quotaPath(), quotaObject(quota, this.namespace, extra));
      if (answer.status !== 201) throw new Error(`kubernetes quota ${quota.name}: ${JSON.stringify(answer.body)}`);
    }
    if (scenario.limitRange) {
      const answer = await this.kube.create(
        `/api/v1/namespaces/${this.namespace}/limitranges`,
        limitRangeObject(scenario.limitRange, this.namespace),
      );
      if (answer.status !== 201) throw new Error(`kubernetes limit range: ${JSON.stringify(answer.body)}`);
    }
    await this.synced();
  }

  async perform(op: Op, world: World): Promise<KubeAnswer> {
    if (op.op === 'define') return defined(() => this.define(world.later ?? { quotas: [] }));
    if (op.op !== 'hard') return performObjectOp(this.kube, this.namespace, op, world);
    return this.kube.patch(this.quotaPath(op.quota), { spec: { hard: { [op.resource]: op.value } } });
  }

  async usage(): Promise<Usage> {
    const list = await this.kube.get(this.quotaPath());
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a ResourceQuotaList
    return Object.fromEntries((list.body.items as any[]).map((q) => [q.metadata.name, { ...q.status?.used }]));
  }

  async refresh(): Promise<void> {
    this.sync++;
    const list = await this.kube.get(this.quotaPath());
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a ResourceQuotaList
    for (const quota of list.body.items as any[]) {
      if (quota.spec.hard[SYNC_RESOURCE] === undefined) continue;
      const answer = await this.kube.patch(this.quotaPath(quota.metadata.name), { spec: { hard: { [SYNC_RESOURCE]: String(this.sync) } } });
      if (answer.status !== 200) throw new Error(`kubernetes quota ${quota.metadata.name}: ${JSON.stringify(answer.body)}`);
    }
    await this.synced();
  }

  /** Until kube-controller-manager has synced every quota since its spec last changed (status.hard = spec.hard). */
  private synced(): Promise<true> {
    return until(`kube-controller-manager to sync the quotas of ${this.namespace}`, async () => {
      const list = await this.kube.get(this.quotaPath());
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a ResourceQuotaList
      const items = list.body.items as any[];
      return items.every((q) => q.status?.used && sameList(q.spec.hard, q.status.hard)) ? true : undefined;
    });
  }

  async dispose(): Promise<void> {
    await this.kube.delete(`/api/v1/namespaces/${this.namespace}`);
  }
}

type Request = (method: string, path: string, body?: unknown) => Promise<Answer>;

/** Our webhooks and REST definitions; our reconciler settles what the cluster did. */
export class LedgerSide implements Side {
  readonly label = 'ledger';
  private readonly queue: Queue<NamespaceJobData>;
  private readonly definitions = new Map<string, QuotaDefinition>();
  private serial = 0;

  constructor(
    private readonly kube: KubeApi,
    private readonly request: Request,
    databaseUrl: string,
    readonly namespace: string,
  ) {
    this.queue = reconcileQueue({ kind: 'postgres', url: databaseUrl });
  }

  private async put(quota: QuotaDefinition): Promise<Answer> {
    const body = quotaObject(quota, this.namespace);
    return this.request('PUT', `/v1/namespaces/${this.namespace}/resourcequotas/${quota.name}`, body);
  }

  async define(scenario: Scenario): Promise<void> {
    for (const quota of scenario.quotas) {
      const answer = await this.put(quota);
      if (answer.status !== 201) throw new Error(`ledger quota ${quota.name}: ${answer.status} ${JSON.stringify(answer.body)}`);
      this.definitions.set(quota.name, quota);
    }
    if (scenario.limitRange) {
      const answer = await this.request(
        'PUT',
        `/v1/namespaces/${this.namespace}/limitranges/limits`,
        limitRangeObject(scenario.limitRange, this.namespace),
      );
      if (answer.status !== 201) throw new Error(`ledger limit range: ${answer.status} ${JSON.stringify(answer.body)}`);
    }
    // The namespace became managed: its quotas refuse until the reconciler's first count.
    await until(`the first count of ${this.namespace}`, async () => {
      const usage = await this.request('GET', `/v1/namespaces/${this.namespace}/usage`);
      return usage.status === 200 && !usage.body.awaitingFirstCountSince ? true : undefined;
    });
  }

  async perform(op: Op, world: World): Promise<KubeAnswer> {
    if (op.op === 'define') return defined(() => this.define(world.later ?? { quotas: [] }));
    if (op.op !== 'hard') return performObjectOp(this.kube, this.namespace, op, world);
    const quota = this.definitions.get(op.quota);
    if (!quota) throw new Error(`no quota ${op.quota}`);
    const next = { ...quota, hard: hardAfter(quota, op) };
    const answer = await this.put(next);
    if (answer.status < 300) this.definitions.set(op.quota, next);
    return answer;
  }

  async usage(): Promise<Usage> {
    const answer = await this.request('GET', `/v1/namespaces/${this.namespace}/usage`);
    // Before its definitions (Scenario.definedAfter) the ledger does not know the namespace.
    if (answer.status === 404 && this.definitions.size === 0) return {};
    if (answer.status !== 200) throw new Error(`ledger usage: ${answer.status} ${JSON.stringify(answer.body)}`);
    return Object.fromEntries((answer.body.quotas as { name: string; used: ResourceList }[]).map((q) => [q.name, { ...q.used }]));
  }

  /** A reconcile of the namespace, queued now (so its listing begins after the step), until it completed. */
  async refresh(): Promise<void> {
    const jobId = `differential-${Date.now()}-${this.serial++}.${this.namespace}`;
    await this.queue.add(
      NAMESPACE_JOB,
      { namespace: this.namespace, reason: 'differential' },
      { jobId, removeOnComplete: false, removeOnFail: false, attempts: 3, backoff: { type: 'fixed', delay: 200 } },
    );
    await until(`the reconcile of ${this.namespace}`, async () => {
      const state = await this.queue.getJobState(jobId);
      if (state === 'failed') throw new Error(`the reconcile of ${this.namespace} failed`);
      return state === 'completed' ? true : undefined;
    });
    await this.queue.remove(jobId).catch(() => undefined);
  }

  async dispose(): Promise<void> {
    for (const name of this.definitions.keys()) await this.request('DELETE', `/v1/namespaces/${this.namespace}/resourcequotas/${name}`);
    await this.request('DELETE', `/v1/namespaces/${this.namespace}/limitranges/limits`);
    await this.kube.delete(`/api/v1/namespaces/${this.namespace}`);
    await this.queue.close();
  }
}
