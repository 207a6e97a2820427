import { describe, expect, it } from 'vitest';
import type { LedgerEvent } from '../events/events.js';
import { fold, type Reservation } from '../events/fold.js';
import type { Pod } from '../kube/types.js';
import { measureListed, planListed, type MeasuredObject } from './settle-listed.js';
import { liveReservationsOf } from './stored.js';

const T0 = Date.UTC(2026, 0, 1);
const GRACE = 60_000;
const pods = { group: '', resource: 'pods' };
const facts = {
  NotTerminating: true,
  Terminating: false,
  BestEffort: false,
  NotBestEffort: true,
  PriorityClass: [],
  CrossNamespacePodAffinity: false,
};
const whole = (cpu: string) => ({ 'count/pods': '1', pods: '1', cpu, 'requests.cpu': cpu, 'limits.cpu': cpu });

/** Pod `ox`, its CREATE at 500m (committed unless told), then its changes: [cpu, the resourceVersion each was read at]. */
function ox(
  changes: readonly (readonly [string, string | undefined])[],
  options: { committed?: boolean; changedAt?: number } = {},
): Reservation[] {
  const events: LedgerEvent[] = [
    {
      type: 'Reserved',
      data: { reservationId: 'c', object: { ...pods, uid: 'ox' }, operation: 'CREATE', charged: whole('500m'), scopeFacts: facts },
    },
  ];
  if (options.committed !== false) events.push({ type: 'Committed', data: { reservationId: 'c' } });
  changes.forEach(([cpu, base], i) =>
    events.push({
      type: 'Reserved',
      data: {
        reservationId: `u${i + 1}`,
        object: { ...pods, uid: 'ox' },
        operation: 'UPDATE',
        charged: {},
        objectUsage: whole(cpu),
        scopeFacts: facts,
        previousScopeFacts: facts,
        ...(base ? { oldResourceVersion: base } : {}),
      },
    }),
  );
  const settledAt = events.length - changes.length;
  const state = fold(
    events.map((event, i) => ({ ...event, version: i + 1, at: i < settledAt ? T0 + i : (options.changedAt ?? T0 + 1000) + i })),
  );
  return liveReservationsOf(state, 'ox');
}

function listed(cpu: string, resourceVersion?: string, status?: Pod['status']): MeasuredObject {
  const object: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'ox', namespace: 'ns', uid: 'ox', ...(resourceVersion ? { resourceVersion } : {}) },
    spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu }, limits: { cpu } } }] },
    ...(status ? { status } : {}),
  };
  const measured = measureListed({ groupResource: pods, uid: 'ox', name: 'ox', object }, T0 + 5000);
  if (!measured.readable) throw new Error(measured.reason);
  return measured;
}

/** A kubelet's status: the container at `cpu`, a resize beyond it Infeasible. */
const infeasibleAt = (cpu: string) =>
  ({
    conditions: [{ type: 'PodResizePending', status: 'True', reason: 'Infeasible' }],
    containerStatuses: [{ name: 'c', allocatedResources: { cpu }, resources: { requests: { cpu }, limits: { cpu } } }],
  }) as Pod['status'];

/** The plan in words: `release:<id>:<reason>`, `commit:<id>`, `remeasure:<id>`, `waiting:<n>`. */
function plan(live: readonly Reservation[], object: MeasuredObject, listedAt = T0 + 5000): string[] {
  const p = planListed(live, object, { listedAt, graceMs: GRACE });
  return [
    ...p.release.map(({ reservation, reason }) => `release:${reservation.id}:${reason}`),
    ...p.commit.map((r) => `commit:${r.id}`),
    ...(p.remeasure ? [`remeasure:${p.remeasure.id}`] : []),
    ...(p.waiting > 0 ? [`waiting:${p.waiting}`] : []),
  ];
}

describe('planListed: what the listing of one object the ledger holds settles', () => {
  // ox: 500m (version 10), resized down to 300m (read at 10, written at 11), up again to 500m (read at 11, written at 12).
  const downThenUp = ox([
    ['300m', '10'],
    ['500m', '11'],
  ]);

  it.each([
    // [case, listed cpu, listed resourceVersion, expected plan]
    ['before either resize: both may still be written, nothing is settled', '500m', '10', ['waiting:2']],
    [
      'between them (the report: committing the resize down here charged 300m for good): the resize up may still be written, so it waits',
      '300m',
      '11',
      ['waiting:2'],
    ],
    ['after both: the resize up holds, the resize down and the CREATE are superseded by its commit', '500m', '12', ['commit:u2']],
    [
      'after the resize down only, the up lost to another write: the up is stale, the down holds',
      '300m',
      '13',
      ['release:u2:stale', 'commit:u1'],
    ],
    [
      'after neither, both lost (a write the webhook never saw): both stale, the CREATE measured again',
      '700m',
      '13',
      ['release:u1:stale', 'release:u2:stale', 'remeasure:c'],
    ],
  ] as const)('%s', (_case, cpu, resourceVersion, expected) => {
    expect(plan(downThenUp, listed(cpu, resourceVersion))).toEqual(expected);
  });

  it('releases, while a later change waits, one the listing shows was overtaken by the change it shows', () => {
    // 300m read at 10 written at 11, 400m read at 11 written at 12, then 200m read at 12 still in flight.
    const live = ox([
      ['300m', '10'],
      ['400m', '11'],
      ['200m', '12'],
    ]);
    expect(plan(live, listed('400m', '12'))).toEqual(['release:u1:superseded', 'waiting:2']);
  });

  it('lets a change that may still be written wait until the grace period, then releases it as stale', () => {
    const live = ox([['300m', '10']]);
    expect(plan(live, listed('500m', '10'), T0 + 1000 + GRACE)).toEqual(['waiting:1']);
    expect(plan(live, listed('500m', '10'), T0 + 1002 + GRACE)).toEqual(['release:u1:stale']);
  });

  describe('without versions to compare (changes recorded before they were, sources whose objects carry none)', () => {
    const legacy = ox([
      ['300m', undefined],
      ['500m', undefined],
    ]);

    it.each([
      ['a listing matching the older change: the later one may still be written', '300m', ['waiting:2']],
      ['a listing matching the later change: the older one, unmatched, may still be written until the grace period', '500m', ['waiting:2']],
    ] as const)('%s', (_case, cpu, expected) => {
      expect(plan(legacy, listed(cpu))).toEqual(expected);
    });

    it('nor a resourceVersion out of the comparable form (KEP-5504: a positive integer, no leading zeros)', () => {
      expect(plan(downThenUp, listed('500m', '012'))).toEqual(['waiting:2']);
      expect(plan(downThenUp, listed('500m', '12'))).toEqual(['commit:u2']);
    });

    it('commits the change the listing matches once the other has waited the grace period', () => {
      expect(plan(legacy, listed('500m'), T0 + 1002 + GRACE)).toEqual(['release:u1:stale', 'commit:u2']);
    });
  });

  describe('measuring the settled record again', () => {
    it.each([
      ['a listing that shows other usage than the committed record, nothing waiting', ox([]), listed('300m', '20'), ['remeasure:c']],
      ['one that shows the record: nothing to do', ox([]), listed('500m', '20'), []],
      [
        'a reserved CREATE listed at other usage: measured again rather than committed',
        ox([], { committed: false }),
        listed('300m', '20'),
        ['remeasure:c'],
      ],
      ['a reserved CREATE listed as reserved: committed', ox([], { committed: false }), listed('500m', '20'), ['commit:c']],
      ['a pod at its end: the Terminated event cuts it down, not a measure', ox([]), listed('300m', '20', { phase: 'Succeeded' }), []],
      // Kubernetes counts it at what the node holds (300m); the kubelet may apply it yet.
      [
        'a pod whose resize up to 500m its kubelet found Infeasible: still its spec',
        ox([]),
        listed('500m', '20', infeasibleAt('300m')),
        [],
      ],
    ] as const)('%s', (_case, live, object, expected) => {
      expect(plan(live, object)).toEqual(expected);
    });

    it('not what a REST call reserved: its client says what it charges (a resource list, maybe, no evaluator measures)', () => {
      const [created] = ox([]);
      expect(plan([{ ...(created as Reservation), source: 'rest' }], listed('300m', '20'))).toEqual([]);
    });

    it('not from a listing begun before the record was committed: it may show the object before it', () => {
      const live = ox([]);
      const committedAt = live[0]?.committedAt ?? 0;
      expect(plan(live, listed('300m', '20'), committedAt)).toEqual([]);
      expect(plan(live, listed('300m', '20'), committedAt + 1)).toEqual(['remeasure:c']);
    });
  });
});

describe('measureListed: a listed object as the API server stored it', () => {
  const pod = (extra: Partial<Pod>): Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'ns', uid: 'p' },
    spec: { containers: [{ name: 'c', image: 'x' }] },
    ...extra,
  });
  const measure = (object: Pod) => measureListed({ groupResource: pods, uid: 'p', name: 'p', object }, T0);

  it.each([
    [
      'a status condition whose reason is longer than 253 bytes (the API server bounds none)',
      pod({ status: { conditions: [{ type: 'Ready', status: 'False', reason: 'x'.repeat(300) }] } as Pod['status'] }),
    ],
    [
      'more extended resources than the ledger lets one request name (the API server has no such bound)',
      pod({
        spec: {
          containers: [
            {
              name: 'c',
              image: 'x',
              resources: {
                requests: Object.fromEntries(Array.from({ length: 70 }, (_, i) => [`example.com/r${i}`, '1'])),
                limits: Object.fromEntries(Array.from({ length: 70 }, (_, i) => [`example.com/r${i}`, '1'])),
              },
            },
          ],
        },
      }),
    ],
  ] as const)('reads %s', (_case, object) => {
    expect(measure(object)).toMatchObject({ readable: true });
  });

  it('reports one that still cannot be read (a quantity Kubernetes would not parse either)', () => {
    const bad = pod({ spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: 'lots' } } }] } });
    expect(measure(bad)).toMatchObject({ readable: false, reason: expect.stringContaining('spec.containers[0].resources.requests[cpu]') });
  });
});
