import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  axisLabel,
  binaryCeiling,
  denialsOf,
  geometryOf,
  isByteResource,
  layoutDenials,
  nearestSample,
  niceCeiling,
  sharedSeries,
  tracksOf,
  type Series,
} from './chart.js';

const BOX = { width: 120, height: 60, left: 10, right: 10, top: 5, bottom: 5 };
const point = (at: string, quotas: Series['points'][number]['quotas']) => ({ at, version: 0, quotas });
const series = (points: Series['points']): Series => ({
  namespace: 'ns',
  since: points[0]?.at ?? '',
  until: points.at(-1)?.at ?? '',
  points,
  markers: [],
  truncated: false,
});

describe('tracksOf', () => {
  it('makes one track per quota resource, in order of first appearance, with gaps where the quota did not exist', () => {
    const s = series([
      point('2026-01-01T00:00:00.000Z', []),
      point('2026-01-01T00:01:00.000Z', [{ name: 'compute', hard: { pods: '2' }, used: { pods: '1' } }]),
      point('2026-01-01T00:02:00.000Z', [{ name: 'compute', hard: { pods: '2', 'requests.cpu': '1' }, used: {} }]),
    ]);
    expect(tracksOf(s)).toEqual([
      {
        quota: 'compute',
        resource: 'pods',
        samples: [
          { at: '2026-01-01T00:00:00.000Z' },
          { at: '2026-01-01T00:01:00.000Z', hard: '2', used: '1' },
          { at: '2026-01-01T00:02:00.000Z', hard: '2', used: '0' },
        ],
      },
      {
        quota: 'compute',
        resource: 'requests.cpu',
        samples: [
          { at: '2026-01-01T00:00:00.000Z' },
          { at: '2026-01-01T00:01:00.000Z' },
          { at: '2026-01-01T00:02:00.000Z', hard: '1', used: '0' },
        ],
      },
    ]);
  });
});

describe('sharedSeries', () => {
  it("reads a shared quota's series as one quota named after it, absent where it did not exist, linking no denial", () => {
    const markers: Series['markers'] = [
      { kind: 'limit', at: '2026-01-01T00:00:30.000Z', version: 1, quota: 'acme', change: 'defined', actor: 'platform-admin' },
      {
        kind: 'denial',
        at: '2026-01-01T00:01:30.000Z',
        decisionId: '7',
        reason: 'Forbidden',
        requester: 'ci',
        name: 'web-2',
        message: 'exceeded cluster quota: acme',
      },
    ];
    const s = sharedSeries(
      {
        key: 'clusterresourcequotas/acme',
        since: '2026-01-01T00:00:00.000Z',
        until: '2026-01-01T00:02:00.000Z',
        points: [
          { at: '2026-01-01T00:00:00.000Z', version: 0, defined: false, hard: {}, used: {} },
          { at: '2026-01-01T00:01:00.000Z', version: 1, defined: true, hard: { pods: '1' }, used: { pods: '1' } },
          { at: '2026-01-01T00:02:00.000Z', version: 3, defined: false, hard: {}, used: {} },
        ],
        markers,
        truncated: false,
      },
      'acme',
    );
    expect(s.namespace).toBeUndefined();
    expect(s.markers).toEqual(markers);
    expect(s.points.map((p) => p.quotas)).toEqual([[], [{ name: 'acme', hard: { pods: '1' }, used: { pods: '1' } }], []]);
    expect(tracksOf(s)).toEqual([
      {
        quota: 'acme',
        resource: 'pods',
        samples: [
          { at: '2026-01-01T00:00:00.000Z' },
          { at: '2026-01-01T00:01:00.000Z', hard: '1', used: '1' },
          { at: '2026-01-01T00:02:00.000Z' },
        ],
      },
    ]);
  });
});

describe('denialsOf', () => {
  const denial = (
    decisionId: string,
    fields: Partial<Extract<Series['markers'][number], { kind: 'denial' }>>,
  ): Series['markers'][number] => ({
    kind: 'denial',
    at: '2026-01-01T00:01:00.000Z',
    decisionId,
    reason: 'Forbidden',
    requester: 'ci',
    name: null,
    message: null,
    ...fields,
  });
  const markers: Series['markers'] = [
    denial('1', { quota: 'compute', resources: ['requests.cpu'] }),
    denial('2', { quota: 'compute', resources: ['pods', 'requests.cpu'] }),
    denial('3', { quota: 'storage', resources: ['requests.storage'] }),
    denial('4', { quota: 'compute', quotaKind: 'ClusterResourceQuota', resources: ['pods'] }),
    denial('5', {}),
    { kind: 'limit', at: '2026-01-01T00:01:00.000Z', version: 2, quota: 'compute', change: 'changed', actor: 'admin' },
  ];
  const ids = (s: Series, quota: string, resource: string) => denialsOf(s, { quota, resource }).map((m) => m.decisionId);

  // Every chart used to draw every denial, so a storage chart showed the compute denials.
  it("draws a namespace's denial only on its own quota's charts of the resources it was refused for", () => {
    const s = { ...series([]), markers };
    expect(ids(s, 'compute', 'requests.cpu')).toEqual(['1', '2']);
    expect(ids(s, 'compute', 'pods')).toEqual(['2']);
    expect(ids(s, 'storage', 'requests.storage')).toEqual(['3']);
    expect(ids(s, 'storage', 'requests.cpu')).toEqual([]);
  });

  it("draws a shared quota's denials (all its own) on the charts of their resources", () => {
    const s: Series = { since: '', until: '', points: [], markers: markers.slice(3), truncated: false };
    expect(ids(s, 'acme', 'pods')).toEqual(['4']);
    expect(ids(s, 'acme', 'requests.cpu')).toEqual([]);
  });
});

describe('geometryOf', () => {
  const track = {
    quota: 'q',
    resource: 'pods',
    samples: [
      { at: '2026-01-01T00:00:00.000Z' },
      { at: '2026-01-01T00:01:00.000Z', hard: '4', used: '1' },
      { at: '2026-01-01T00:02:00.000Z', hard: '4', used: '3' },
    ],
  };
  const g = geometryOf(track, '2026-01-01T00:00:00.000Z', '2026-01-01T00:02:00.000Z', BOX);

  it('draws usage as steps that start where the quota appears (no line before it existed)', () => {
    // x: 10 → 110 over two minutes; y: 55 (0) → 5 (yMax 6: three steps of 2, the round step above 4 × 1.05 / 4).
    expect(g.yMax).toBe(6);
    expect(g.usedPath).toBe('M60,46.7H110V30');
    expect(g.hardPath).toBe('M60,21.7H110V21.7');
  });

  it('gives one dot per sample where the quota existed, with the exact strings', () => {
    expect(g.points.map((p) => [p.x, p.used, p.hard])).toEqual([
      [60, '1', '4'],
      [110, '3', '4'],
    ]);
  });

  it('puts the y ticks at a round step from 0 to the top', () => {
    expect(g.yTicks.map((t) => t.value)).toEqual([0, 2, 4, 6]);
  });

  it('keeps every dot inside the box, whatever the values (law)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 10 ** 9 }), fc.integer({ min: 0, max: 10 ** 9 })), { minLength: 1, maxLength: 30 }),
        (values) => {
          const samples = values.map(([used, hard], i) => ({
            at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
            used: `${used}m`,
            hard: `${hard}m`,
          }));
          const geometry = geometryOf(
            { quota: 'q', resource: 'r', samples },
            samples[0]!.at,
            new Date(Date.UTC(2026, 0, 1) + values.length * 1000).toISOString(),
            BOX,
          );
          for (const p of geometry.points) {
            expect(p.x).toBeGreaterThanOrEqual(BOX.left);
            expect(p.x).toBeLessThanOrEqual(BOX.width - BOX.right);
            expect(p.y).toBeGreaterThanOrEqual(BOX.top);
            expect(p.y).toBeLessThanOrEqual(BOX.height - BOX.bottom);
          }
        },
      ),
    );
  });
});

describe('niceCeiling', () => {
  it.each([
    [0, 1],
    [0.3, 0.5],
    [1, 1],
    [1.05, 2],
    [2.1, 2.5],
    [3, 5],
    [7, 10],
    [1200, 2000],
  ])('%d → %d', (value, expected) => {
    expect(niceCeiling(value)).toBeCloseTo(expected, 12);
  });

  it('is at or above its input and below ten times it (law)', () => {
    fc.assert(
      fc.property(fc.double({ min: 1e-6, max: 1e15, noNaN: true }), (value) => {
        const ceiling = niceCeiling(value);
        expect(ceiling).toBeGreaterThanOrEqual(value * (1 - 1e-12));
        expect(ceiling).toBeLessThan(value * 10);
      }),
    );
  });
});

describe('axisLabel', () => {
  it.each([
    [0, '0'],
    [0.25, '0.25'],
    [2.5, '2.5'],
    [1500, '1.5k'],
    [2_000_000, '2M'],
    [1.5e9, '1.5G'],
  ])('%d reads %s', (value, label) => {
    expect(axisLabel(value)).toBe(label);
  });
});

describe('memory and storage axes', () => {
  it.each([
    ['memory', true],
    ['requests.memory', true],
    ['limits.memory', true],
    ['requests.storage', true],
    ['ephemeral-storage', true],
    ['limits.ephemeral-storage', true],
    ['gold.storageclass.storage.k8s.io/requests.storage', true],
    ['requests.hugepages-2Mi', true],
    ['pods', false],
    ['requests.cpu', false],
    ['persistentvolumeclaims', false],
    ['count/configmaps', false],
  ])('%s is counted in bytes: %s', (resource, bytes) => {
    expect(isByteResource(resource)).toBe(bytes);
  });

  it.each([
    [0, '0'],
    [512, '512'],
    [1024, '1Ki'],
    [256 * 2 ** 20, '256Mi'],
    [768 * 2 ** 20, '768Mi'],
    [2 ** 30, '1Gi'],
    [1.5 * 2 ** 30, '1.5Gi'],
    [2 ** 40, '1Ti'],
  ])('labels %d bytes %s', (value, label) => {
    expect(axisLabel(value, true)).toBe(label);
  });

  it('puts the gridlines of a memory chart at binary steps, labelled as the values are written (256Mi, not 268M)', () => {
    const samples = [{ at: '2026-01-01T00:00:00.000Z', hard: '1Gi', used: '300Mi' }];
    const g = geometryOf({ quota: 'q', resource: 'requests.memory', samples }, '2026-01-01T00:00:00.000Z', '2026-01-01T00:01:00.000Z', BOX);
    expect(g.bytes).toBe(true);
    expect(g.yTicks.map((t) => axisLabel(t.value, g.bytes))).toEqual(['0', '512Mi', '1Gi', '1.5Gi']);
    // Other resources keep decimal steps.
    expect(
      geometryOf(
        { quota: 'q', resource: 'pods', samples: [{ at: samples[0]!.at, hard: '10', used: '3' }] },
        samples[0]!.at,
        '2026-01-01T00:01:00.000Z',
        BOX,
      ).bytes,
    ).toBe(false);
  });

  it('steps by the smallest power of two at or above the step asked for (law)', () => {
    fc.assert(
      fc.property(fc.double({ min: 1, max: 2 ** 50, noNaN: true }), (value) => {
        const step = binaryCeiling(value);
        expect(Number.isInteger(Math.log2(step))).toBe(true);
        expect(step).toBeGreaterThanOrEqual(value * (1 - 1e-12));
        expect(step).toBeLessThan(value * 2 + 1e-9);
      }),
    );
  });
});

describe('layoutDenials', () => {
  it('stacks markers closer than the gap, each its own mark, and starts a new cluster a gap away', () => {
    expect(layoutDenials([100, 101, 120, 200], 14, 5)).toEqual({
      placed: [
        { index: 0, x: 100, level: 0 },
        { index: 1, x: 100, level: 1 },
        { index: 2, x: 120, level: 0 },
        { index: 3, x: 200, level: 0 },
      ],
      overflow: [],
    });
  });

  it('puts what does not fit in a stack under one mark at its top', () => {
    expect(layoutDenials([10, 10, 11, 12, 13], 14, 3)).toEqual({
      placed: [
        { index: 0, x: 10, level: 0 },
        { index: 1, x: 10, level: 1 },
      ],
      overflow: [{ x: 10, level: 2, indices: [2, 3, 4] }],
    });
  });

  it('never draws two marks of one level closer than the gap, and shows every marker once (law)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 640, noNaN: true }), { maxLength: 60 }),
        fc.integer({ min: 2, max: 6 }),
        (unsorted, stackMax) => {
          const xs = [...unsorted].sort((a, b) => a - b);
          const { placed, overflow } = layoutDenials(xs, 14, stackMax);
          const marks = [...placed.map((p) => ({ x: p.x, level: p.level })), ...overflow];
          for (const a of marks)
            for (const b of marks) if (a !== b && a.level === b.level) expect(Math.abs(a.x - b.x)).toBeGreaterThanOrEqual(14);
          for (const m of marks) expect(m.level).toBeLessThan(stackMax);
          expect([...placed.map((p) => p.index), ...overflow.flatMap((o) => o.indices)].sort((a, b) => a - b)).toEqual(xs.map((_, i) => i));
        },
      ),
    );
  });
});

describe('nearestSample', () => {
  it('picks the sample closest to a clicked instant', () => {
    const ats = ['2026-01-01T00:00:00.000Z', '2026-01-01T00:01:00.000Z', '2026-01-01T00:02:00.000Z'];
    expect(nearestSample(ats, Date.parse('2026-01-01T00:01:20.000Z'))).toBe(ats[1]);
    expect(nearestSample(ats, Date.parse('2025-12-31T00:00:00.000Z'))).toBe(ats[0]);
    expect(nearestSample([], 0)).toBeUndefined();
  });
});
