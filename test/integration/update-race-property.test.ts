import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluatorFor, Resources, type GroupResource, type KubeObject, type ResourceList } from '@quota/domain';
import { UsageProjection, type AdmitCommand, type ReconcileListing } from '@quota/ledger';
import type { DataSource } from 'typeorm';
import { Ledger } from '../support/ledger.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';

// Random interleavings on PostgreSQL of one object's changes (the webhook's UPDATE reviews, each
// written by the API server later, or lost to a concurrent write, or refused by a later admission
// step), the writes the webhook never sees (a status write: only the resourceVersion moves),
// listings of the object (kept, so that a reconcile may act on one taken long before) and the
// reconciler's corrections. The object is a pod resized in place, a PVC grown or shrunk, a PVC
// whose status reports allocated storage, or a Service changing type; a change may also bypass the
// webhook (failing open), which only a listing can tell the ledger. After every step the ledger
// charges at least what the object's spec asks, and what every change that may still be written
// asks; after a fresh listing, once nothing is in flight and the grace period has passed, it
// charges exactly what the spec asks, and so do the projection and the as-of fold.
const GRACE_MS = 60_000;
let db: TestDatabase & { dataSource: DataSource };
let now = Date.UTC(2026, 4, 1);
let ledger: Ledger;
let projection: UsageProjection;

beforeAll(async () => {
  db = await createMigratedDatabase('qlupdrace');
  ledger = new Ledger(db.dataSource, { clock: () => now, retryBaseMs: 1 });
  projection = new UsageProjection(db.dataSource);
});
afterAll(async () => {
  await ledger?.close();
  await db?.drop();
});

/** One kind of change: the object in each of its states, the request that makes it, what the quota limits. */
interface Kind {
  readonly name: string;
  readonly groupResource: GroupResource;
  readonly subresource?: string;
  readonly hard: Record<string, string>;
  readonly states: number;
  object(state: number, meta: { name: string; uid: string; resourceVersion: string }): KubeObject;
}

const CPU = ['100m', '300m', '500m', '700m'];
const STORAGE = ['1Gi', '2Gi', '3Gi', '5Gi'];
const ALLOCATED = [undefined, '1Gi', '2Gi', '4Gi'];
const SERVICE_TYPES = ['ClusterIP', 'NodePort', 'LoadBalancer'];

const KINDS: readonly Kind[] = [
  {
    name: 'pod resize',
    groupResource: { group: '', resource: 'pods' },
    subresource: 'resize',
    hard: { 'requests.cpu': '100', pods: '10' },
    states: CPU.length,
    object: (state, metadata) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { ...metadata, namespace: '' },
      spec: { containers: [{ name: 'app', image: 'x', resources: { requests: { cpu: CPU[state] as string } } }] },
    }),
  },
  {
    name: 'PVC resize',
    groupResource: { group: '', resource: 'persistentvolumeclaims' },
    hard: { 'requests.storage': '1Ti', persistentvolumeclaims: '10' },
    states: STORAGE.length,
    object: (state, metadata) => ({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata,
      spec: { resources: { requests: { storage: STORAGE[state] as string } } },
    }),
  },
  {
    name: "PVC status (the claim's allocated storage)",
    groupResource: { group: '', resource: 'persistentvolumeclaims' },
    subresource: 'status',
    hard: { 'requests.storage': '1Ti', persistentvolumeclaims: '10' },
    states: ALLOCATED.length,
    object: (state, metadata) => {
      const allocated = ALLOCATED[state];
      return {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata,
        spec: { resources: { requests: { storage: '1Gi' } } },
        ...(allocated ? { status: { allocatedResources: { storage: allocated } } } : {}),
      };
    },
  },
  {
    name: 'Service type',
    groupResource: { group: '', resource: 'services' },
    hard: { services: '10', 'services.nodeports': '10', 'services.loadbalancers': '10' },
    states: SERVICE_TYPES.length,
    object: (state, metadata) => {
      const type = SERVICE_TYPES[state] as string;
      return {
        apiVersion: 'v1',
        kind: 'Service',
        metadata,
        spec: { type, ports: [{ port: 80, ...(type === 'ClusterIP' ? {} : { nodePort: 30080 }) }] },
      };
    },
  },
];

type Op =
  | { t: 'review'; to: number }
  | { t: 'write'; pick: number }
  | { t: 'deny'; pick: number }
  | { t: 'touch' }
  | { t: 'bypass'; to: number }
  | { t: 'list' }
  | { t: 'reconcile'; pick: number }
  | { t: 'tick'; seconds: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ t: fc.constant('review' as const), to: fc.nat(3) }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('write' as const), pick: fc.nat(3) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('deny' as const), pick: fc.nat(3) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('touch' as const) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('bypass' as const), to: fc.nat(3) }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('list' as const) }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('reconcile' as const), pick: fc.nat(7) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('tick' as const), seconds: fc.integer({ min: 1, max: 90 }) }) },
);

// The report's sequence: pod `ox` (500m) resized down to 300m, the reconciler lists it there,
// it is resized back up to 500m, and the reconciler's commit from that listing lands after.
const RESIZE_DOWN_THEN_UP: [number, number, Op[]] = [
  0,
  2,
  [
    { t: 'list' },
    { t: 'reconcile', pick: 0 },
    { t: 'review', to: 1 },
    { t: 'write', pick: 0 },
    { t: 'list' },
    { t: 'review', to: 2 },
    { t: 'write', pick: 0 },
    { t: 'reconcile', pick: 1 },
  ],
];

// Histories random runs found (kept: they seldom find them again): the same change asked twice,
// read at two versions of the pod (the first can no longer be written once the second is read),
// or at one version after the first timed out; a ledger that kept only the first released it
// (shown dead by the listing, or stale) while the second could still be written.
const SAME_CHANGE_TWO_VERSIONS: [number, number, Op[]] = [
  0,
  0,
  [
    { t: 'review', to: 0 },
    { t: 'review', to: 3 },
    { t: 'write', pick: 0 },
    { t: 'review', to: 3 },
    { t: 'deny', pick: 0 },
    { t: 'reconcile', pick: 0 },
  ],
];
const SAME_CHANGE_AFTER_TIMEOUT: [number, number, Op[]] = [
  0,
  0,
  [
    { t: 'review', to: 3 },
    { t: 'tick', seconds: 60 },
    { t: 'review', to: 3 },
    { t: 'reconcile', pick: 0 },
  ],
];

/** The cluster's side: the object as stored, the changes admitted and not yet written, the listings taken. */
interface Cluster {
  state: number;
  resourceVersion: number;
  /** A change reached the object without a review (a webhook failing open): the ledger learns it from a listing only. */
  bypassed: boolean;
  /** Admitted changes not yet written: each read at `base`, reviewed at `at`. */
  readonly inFlight: { to: number; base: number; at: number }[];
  readonly listings: { state: number; resourceVersion: number; listedAt: number }[];
}

let run = 0;

describe('one object changed, written, listed and reconciled in random orders on PostgreSQL', () => {
  it('is never charged less than its spec asks (or a change still in flight), and exactly its spec after a fresh listing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat(KINDS.length - 1), fc.nat(3), fc.array(op, { minLength: 8, maxLength: 30 }), async (k, initial, ops) => {
        const kind = KINDS[k] as Kind;
        const namespace = `upd-${++run}`;
        const meta = { name: 'ox', uid: `uid-${namespace}` };
        const objectAt = (state: number, resourceVersion: number) =>
          kind.object(state % kind.states, { ...meta, resourceVersion: String(resourceVersion) });
        await ledger.putQuota(namespace, { name: 'q', spec: { hard: kind.hard } }, { actor: 't' });
        const cluster: Cluster = { state: initial % kind.states, resourceVersion: 100, bypassed: false, inFlight: [], listings: [] };
        const created = await ledger.admit(review(namespace, kind, 'CREATE', objectAt(cluster.state, 0), undefined, `c-${namespace}`));
        expect(created.result.allowed).toBe(true);
        let step = 0;
        for (const o of ops) {
          now += 1;
          timeOut(cluster);
          await apply(o, namespace, kind, cluster, objectAt, `${namespace}-${++step}`);
          timeOut(cluster);
          await expectCovered(namespace, kind, cluster, objectAt, o);
        }
        // Everything in flight is written (the first wins, the rest lose), the grace period passes, and a fresh listing is reconciled.
        for (const change of cluster.inFlight.splice(0)) written(cluster, change);
        now += GRACE_MS + 1_000;
        await reconcileWith(namespace, kind, objectAt, { state: cluster.state, resourceVersion: cluster.resourceVersion, listedAt: now });
        now += 1;
        const fresh = await reconcileWith(namespace, kind, objectAt, {
          state: cluster.state,
          resourceVersion: cluster.resourceVersion,
          listedAt: now,
        });
        expect(fresh.actions).toEqual([]);
        const spec = asked(kind, objectAt(cluster.state, cluster.resourceVersion));
        expect(await charged(namespace, kind)).toEqual(spec);
        // The projection and the as-of fold read the same events the same way.
        await projected();
        const read = (used: Readonly<Record<string, string>> | undefined) =>
          Resources.canonicalResourceList(Resources.mask(Resources.resourceList(used ?? {}), Object.keys(kind.hard)));
        expect(read((await ledger.projectedUsage(namespace))?.used.get('q'))).toEqual(spec);
        expect(read((await ledger.usageAt(namespace, new Date(now + 1).toISOString()))?.quotas[0]?.used)).toEqual(spec);
      }),
      { numRuns: 200, examples: [RESIZE_DOWN_THEN_UP, SAME_CHANGE_TWO_VERSIONS, SAME_CHANGE_AFTER_TIMEOUT] },
    );
  }, 600_000);
});

function review(
  namespace: string,
  kind: Kind,
  operation: 'CREATE' | 'UPDATE',
  object: KubeObject,
  oldObject: KubeObject | undefined,
  key: string,
): AdmitCommand {
  return {
    namespace,
    source: 'webhook',
    request: {
      operation,
      groupResource: kind.groupResource,
      ...(operation === 'UPDATE' && kind.subresource ? { subresource: kind.subresource } : {}),
      namespace,
      name: 'ox',
      object,
      ...(oldObject ? { oldObject } : {}),
    },
    requestKey: `review:${key}`,
    dryRun: false,
    requester: 'kube-apiserver',
  };
}

type ObjectAt = (state: number, resourceVersion: number) => KubeObject;

/** Catches the projection up to the ledger (one catchUp may stop early on a shared server). */
async function projected(): Promise<void> {
  for (;;) {
    await projection.catchUp();
    if ((await projection.lag()).eventsBehind === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function apply(o: Op, namespace: string, kind: Kind, cluster: Cluster, objectAt: ObjectAt, key: string): Promise<void> {
  switch (o.t) {
    case 'review': {
      // The API server read the object at its resourceVersion, applied the change, and asks.
      const to = o.to % kind.states;
      const { result } = await ledger.admit(
        review(namespace, kind, 'UPDATE', objectAt(to, cluster.resourceVersion), objectAt(cluster.state, cluster.resourceVersion), key),
      );
      // A refused change (409: too many waiting) is never written.
      if (result.allowed) cluster.inFlight.push({ to, base: cluster.resourceVersion, at: now });
      return;
    }
    case 'write': {
      const [change] = cluster.inFlight.splice(o.pick % Math.max(1, cluster.inFlight.length), 1);
      if (change) written(cluster, change);
      return;
    }
    case 'deny':
      // Refused by a later admission step: never written.
      cluster.inFlight.splice(o.pick % Math.max(1, cluster.inFlight.length), 1);
      return;
    case 'touch':
      cluster.resourceVersion++;
      return;
    case 'bypass':
      cluster.state = o.to % kind.states;
      cluster.resourceVersion++;
      cluster.bypassed = true;
      return;
    case 'list':
      cluster.listings.push({ state: cluster.state, resourceVersion: cluster.resourceVersion, listedAt: now });
      return;
    case 'reconcile': {
      const listing = cluster.listings.length === 0 ? undefined : cluster.listings[o.pick % cluster.listings.length];
      await reconcileWith(
        namespace,
        kind,
        objectAt,
        listing ?? { state: cluster.state, resourceVersion: cluster.resourceVersion, listedAt: now },
      );
      return;
    }
    case 'tick':
      now += o.seconds * 1000;
      return;
  }
}

/**
 * The API server writes a change within its request timeout or never: what the grace period
 * stands for (RECONCILE_GRACE_SECONDS is set above it). Older changes are dropped, never written.
 */
function timeOut(cluster: Cluster): void {
  const live = cluster.inFlight.filter((change) => now - change.at < GRACE_MS);
  cluster.inFlight.splice(0, cluster.inFlight.length, ...live);
}

/** The API server's compare-and-set: a change read at an older resourceVersion is lost (its retry is a new review). */
function written(cluster: Cluster, change: { to: number; base: number; at: number }): void {
  if (change.base !== cluster.resourceVersion) return;
  cluster.state = change.to;
  cluster.resourceVersion++;
}

function reconcileWith(
  namespace: string,
  kind: Kind,
  objectAt: ObjectAt,
  listing: { state: number; resourceVersion: number; listedAt: number },
) {
  const object = objectAt(listing.state, listing.resourceVersion);
  const input: ReconcileListing = {
    covers: [kind.groupResource],
    objects: [{ groupResource: kind.groupResource, uid: object.metadata?.uid ?? '', name: 'ox', object }],
    listedAt: listing.listedAt,
  };
  return ledger.reconcile(namespace, input, { actor: 'system:reconciler', graceMs: GRACE_MS });
}

/** What the namespace's one quota charges, on the resources it limits. */
async function charged(namespace: string, kind: Kind): Promise<Record<string, string>> {
  const used = (await ledger.usage(namespace))?.quotas[0]?.used ?? {};
  return Resources.canonicalResourceList(Resources.mask(Resources.resourceList(used), Object.keys(kind.hard)));
}

/** What the object asks of that quota, as admission measures it. */
function asked(kind: Kind, object: KubeObject): Record<string, string> {
  const usage: ResourceList = evaluatorFor(kind.groupResource).usage(object, { asLive: true });
  const names = Object.keys(kind.hard);
  const zeros = Resources.resourceList(Object.fromEntries(names.map((name) => [name, '0'])));
  return Resources.canonicalResourceList(Resources.add(zeros, Resources.mask(usage, names)));
}

async function expectCovered(namespace: string, kind: Kind, cluster: Cluster, objectAt: ObjectAt, o: Op): Promise<void> {
  const charge = Resources.resourceList(await charged(namespace, kind));
  // The spec as stored (unless a change bypassed the webhook: until a listing shows it, the ledger
  // cannot know it), and every change that may still be written (read at the current version).
  const states = [
    ...(cluster.bypassed ? [] : [cluster.state]),
    ...cluster.inFlight.filter((c) => c.base === cluster.resourceVersion).map((c) => c.to),
  ];
  for (const state of states) {
    const ask = Resources.resourceList(asked(kind, objectAt(state, cluster.resourceVersion)));
    const check = Resources.lessThanOrEqual(ask, charge);
    expect(
      check.ok,
      `after ${JSON.stringify(o)}: ${kind.name} charged ${JSON.stringify(Resources.canonicalResourceList(charge))}, state ${state} asks ${JSON.stringify(Resources.canonicalResourceList(ask))}`,
    ).toBe(true);
  }
}
