import type { SharedQuotaUsageSeries, UsageMarker, UsageSeries } from '@quota/api';
import { quantityNumber } from './format.js';

/**
 * The audit API's usage series (GET /v1/namespaces/{ns}/usage/series), as the chart reads it. Its
 * namespace says whose decisions the denial markers link to: none for a shared quota's series
 * (sharedSeries), whose denials come from the namespaces it covers, and a marker does not say which.
 */
export type Series = Omit<UsageSeries, 'namespace'> & { readonly namespace?: string };

export type Marker = UsageMarker;

/**
 * A shared quota's usage series (GET /v1/clusterresourcequotas/{name}/usage/series): one quota,
 * and at each sample whether it existed then (when it did not, `hard` and `used` are empty).
 */
export type SharedSeries = SharedQuotaUsageSeries;

/**
 * A shared quota's series as a namespace's, so the same charts draw it: one quota named
 * `name` (its limit markers name it so too), absent from the samples where it did not exist.
 * No namespace: its denial markers link nowhere.
 */
export function sharedSeries(series: SharedSeries, name: string): Series {
  return {
    since: series.since,
    until: series.until,
    points: series.points.map((p) => ({ at: p.at, version: p.version, quotas: p.defined ? [{ name, hard: p.hard, used: p.used }] : [] })),
    markers: series.markers,
    truncated: series.truncated,
  };
}

/** One resource of one quota over the range: what one small chart shows. */
export interface Track {
  readonly quota: string;
  readonly resource: string;
  /** One per sample; `hard` and `used` are the API's strings, undefined where the quota did not exist. */
  readonly samples: readonly { readonly at: string; readonly hard?: string; readonly used?: string }[];
}

/**
 * Every (quota, resource) pair that had a hard limit somewhere in the range, in the order
 * they first appear, each with its value at every sample. A quota removed mid-range keeps
 * its track, with gaps where it did not exist.
 */
export function tracksOf(series: Series): Track[] {
  const keys: { quota: string; resource: string }[] = [];
  const seen = new Set<string>();
  for (const point of series.points) {
    for (const quota of point.quotas) {
      for (const resource of Object.keys(quota.hard)) {
        const key = `${quota.name}\u0000${resource}`;
        if (!seen.has(key)) {
          seen.add(key);
          keys.push({ quota: quota.name, resource });
        }
      }
    }
  }
  return keys.map(({ quota, resource }) => ({
    quota,
    resource,
    samples: series.points.map((point) => {
      const q = point.quotas.find((candidate) => candidate.name === quota);
      const hard = q?.hard[resource];
      return { at: point.at, ...(hard === undefined ? {} : { hard, used: q?.used[resource] ?? '0' }) };
    }),
  }));
}

type Denial = Extract<Marker, { kind: 'denial' }>;

/**
 * The denials one chart draws: those its quota refused for its resource. On a namespace's series
 * that is its ResourceQuota of that name (a shared quota's denial is not one of its quotas'); on a
 * shared quota's series (no namespace) every denial is already its own. A denial that names no
 * quota or resource (a LimitRange's) is on no chart: the list under the charts has every one.
 */
export function denialsOf(series: Series, track: Pick<Track, 'quota' | 'resource'>): Denial[] {
  return series.markers.filter(
    (m): m is Denial =>
      m.kind === 'denial' &&
      (m.resources ?? []).includes(track.resource) &&
      (series.namespace === undefined || (m.quota === track.quota && m.quotaKind === undefined)),
  );
}

export interface Box {
  readonly width: number;
  readonly height: number;
  /** Room for the axis labels. */
  readonly left: number;
  readonly right: number;
  readonly top: number;
  readonly bottom: number;
}

export interface Geometry {
  /** Step lines (SVG path data): used, and the hard limit (dashed). */
  readonly usedPath: string;
  readonly hardPath: string;
  readonly points: readonly { readonly x: number; readonly y: number; readonly at: string; readonly used: string; readonly hard: string }[];
  /** The y axis runs from 0 to this, a round number at or above every value. */
  readonly yMax: number;
  readonly yTicks: readonly { readonly y: number; readonly value: number }[];
  readonly xTicks: readonly { readonly x: number; readonly at: number }[];
  readonly x: (atMs: number) => number;
  /** The values are bytes: label the axis with axisLabel(value, true). */
  readonly bytes: boolean;
}

/**
 * Resources counted in bytes (memory, storage, ephemeral storage, huge pages, a storage class's
 * requests.storage): Kubernetes writes them in binary units (256Mi, 1Gi), so their axes do too.
 */
export function isByteResource(resource: string): boolean {
  return /(?:^|[./])(?:memory|storage|ephemeral-storage)$/.test(resource) || /(?:^|\.)hugepages-/.test(resource);
}

/** The smallest power of two at or above `value` (at least 1): a gridline step in bytes. */
export function binaryCeiling(value: number): number {
  if (!(value > 1) || !Number.isFinite(value)) return 1;
  return 2 ** Math.ceil(Math.log2(value) - 1e-12);
}

/** 1, 2, 2.5, 5 × 10^k: the smallest such number at or above `value`. */
export function niceCeiling(value: number): number {
  if (!(value > 0) || !Number.isFinite(value)) return 1;
  const exponent = Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) {
    const candidate = step * 10 ** exponent;
    if (candidate >= value * (1 - 1e-12)) return candidate;
  }
  return 10 ** (exponent + 1);
}

const round = (n: number): number => Math.round(n * 10) / 10;

/**
 * Where a track's lines and points go in a box. Usage is a step function: a sample's value
 * holds until the next sample, so both lines are drawn as steps, never as slopes that would
 * suggest usage between two samples that nobody measured.
 */
export function geometryOf(track: Track, since: string, until: string, box: Box): Geometry {
  const from = Date.parse(since);
  const to = Date.parse(until);
  const innerWidth = box.width - box.left - box.right;
  const innerHeight = box.height - box.top - box.bottom;
  const x = (atMs: number): number => round(box.left + (to === from ? 0 : ((atMs - from) / (to - from)) * innerWidth));
  let peak = 0;
  for (const sample of track.samples) {
    if (sample.hard !== undefined) peak = Math.max(peak, quantityNumber(sample.hard) || 0, quantityNumber(sample.used) || 0);
  }
  // Four gridlines at a round step, the top one at or above every value: 1, 2, 2.5 or 5 × 10^k,
  // or for bytes a power of two (256Mi, 512Mi, 768Mi, 1Gi), so the labels read as the values do.
  const bytes = isByteResource(track.resource);
  const yStep = bytes ? binaryCeiling((peak * 1.05) / 4) : niceCeiling((peak * 1.05) / 4);
  const yMax = yStep * Math.max(1, Math.ceil((peak * 1.05) / yStep - 1e-9));
  const y = (value: number): number => round(box.top + innerHeight - (Math.min(value, yMax) / yMax) * innerHeight);

  const step = (value: (sample: Track['samples'][number]) => string | undefined): string => {
    let path = '';
    let previousY: number | undefined;
    for (const sample of track.samples) {
      const raw = value(sample);
      const sx = x(Date.parse(sample.at));
      if (raw === undefined) {
        previousY = undefined;
        continue;
      }
      const sy = y(quantityNumber(raw));
      path += previousY === undefined ? `M${sx},${sy}` : `H${sx}V${sy}`;
      previousY = sy;
    }
    return path;
  };

  const points = track.samples.flatMap((sample) =>
    sample.hard === undefined
      ? []
      : [{ x: x(Date.parse(sample.at)), y: y(quantityNumber(sample.used)), at: sample.at, used: sample.used ?? '0', hard: sample.hard }],
  );
  const yTicks = Array.from({ length: Math.round(yMax / yStep) + 1 }, (_, i) => ({ value: i * yStep, y: y(i * yStep) }));
  const xTicks = [0, 0.25, 0.5, 0.75, 1].map((f) => {
    const at = from + (to - from) * f;
    return { at, x: x(at) };
  });
  return { usedPath: step((s) => s.used), hardPath: step((s) => s.hard), points, yMax, yTicks, xTicks, x, bytes };
}

const BINARY_UNITS: [number, string][] = [
  [2 ** 50, 'Pi'],
  [2 ** 40, 'Ti'],
  [2 ** 30, 'Gi'],
  [2 ** 20, 'Mi'],
  [2 ** 10, 'Ki'],
];

/**
 * A y-axis label: 1500 → "1.5k", 0.25 → "0.25"; bytes in binary units, as their values are
 * written: 536870912 → "512Mi", 1610612736 → "1.5Gi". Exact values are in the points' titles.
 */
export function axisLabel(value: number, bytes = false): string {
  if (bytes) {
    for (const [size, suffix] of BINARY_UNITS) {
      if (Math.abs(value) >= size) return `${Number((value / size).toPrecision(3))}${suffix}`;
    }
    return String(Number(value.toPrecision(3)));
  }
  const units: [number, string][] = [
    [1e12, 'T'],
    [1e9, 'G'],
    [1e6, 'M'],
    [1e3, 'k'],
  ];
  for (const [size, suffix] of units) {
    if (Math.abs(value) >= size) return `${Number((value / size).toPrecision(3))}${suffix}`;
  }
  return String(Number(value.toPrecision(3)));
}

/** Where one denial marker is drawn: at its cluster's x, `level` marks up from the axis. */
export interface PlacedDenial {
  readonly index: number;
  readonly x: number;
  readonly level: number;
}

/** The denials of a cluster too many to stack: one "+n" mark at the top of the stack, leading to a range that spreads them out. */
export interface DenialOverflow {
  readonly x: number;
  readonly level: number;
  readonly indices: readonly number[];
}

/**
 * Lays out denial markers (their x, in time order) so that none covers another: markers closer
 * than `gap` to the first of their cluster are stacked upward from it, one level each, each its
 * own mark (and its own link). A cluster of more than `stackMax` keeps `stackMax - 1` marks and
 * puts the rest under one "+n" mark. Clusters start at least `gap` apart, so marks of the same
 * level in different clusters never touch either.
 */
export function layoutDenials(
  xs: readonly number[],
  gap: number,
  stackMax: number,
): { placed: PlacedDenial[]; overflow: DenialOverflow[] } {
  const clusters: { x: number; indices: number[] }[] = [];
  xs.forEach((x, index) => {
    const last = clusters.at(-1);
    if (last && x - last.x < gap) last.indices.push(index);
    else clusters.push({ x, indices: [index] });
  });
  const placed: PlacedDenial[] = [];
  const overflow: DenialOverflow[] = [];
  for (const cluster of clusters) {
    const fits = cluster.indices.length <= stackMax;
    const shown = fits ? cluster.indices : cluster.indices.slice(0, stackMax - 1);
    shown.forEach((index, level) => placed.push({ index, x: cluster.x, level }));
    if (!fits) overflow.push({ x: cluster.x, level: stackMax - 1, indices: cluster.indices.slice(stackMax - 1) });
  }
  return { placed, overflow };
}

/**
 * The sample nearest to an instant (a click on a chart, as a time): what "usage at this instant"
 * shows, so the answer is the point drawn there. Undefined without samples.
 */
export function nearestSample(ats: readonly string[], atMs: number): string | undefined {
  let best: string | undefined;
  let distance = Infinity;
  for (const at of ats) {
    const d = Math.abs(Date.parse(at) - atMs);
    if (d < distance) {
      distance = d;
      best = at;
    }
  }
  return best;
}
