import {
  axisLabel,
  denialsOf,
  geometryOf,
  layoutDenials,
  nearestSample,
  tracksOf,
  type Box,
  type Marker,
  type Series,
  type Track,
} from '../chart.js';
import { type ApiError, enc } from '../api.js';
import { changeSummary, type QuotaChange } from '../cluster-quota.js';
import { download, fill, h, s } from '../dom.js';
import { exportName, seriesCsv } from '../export.js';
import { localTime } from '../format.js';
import { instantPanel, type Instant } from './instant.js';
import { rangeToolbar, type RangeRoute, type Span } from './range.js';

const WIDE: Box = { width: 640, height: 190, left: 48, right: 12, top: 16, bottom: 26 };
/**
 * On a narrow screen a chart fills the width alone: drawn in fewer units, so that its labels
 * and marks are not scaled down to specks.
 */
const NARROW: Box = { width: 400, height: 210, left: 44, right: 10, top: 16, bottom: 26 };
const NARROW_MEDIA = '(max-width: 640px)';
/** Denial marks closer than this (in the chart's units) are stacked, one this far above the other, so none hides another. */
const DENIAL_GAP = 14;
/** At most this many marks in a stack; the rest of a cluster is one "+n" mark that zooms in on it. */
const DENIAL_STACK_MAX = 5;
/** The marker list shows this many at first, newest first; the rest on request. */
const MARKERS_SHOWN = 20;

/** Limit changes by quota and stream version (`compute@7`), as the quota's history gives them. */
export type LimitChanges = ReadonlyMap<string, QuotaChange>;
export const limitKey = (quota: string, version: number): string => `${quota}@${version}`;

/** What one limit marker says: "quota compute changed by developer: pods: 10 → 20, requests.cpu: 2 → 4". */
export function limitText(m: Extract<Marker, { kind: 'limit' }>, changes: LimitChanges): string {
  const change = changes.get(limitKey(m.quota, m.version));
  const what = change ? changeSummary(change).join(', ') : '';
  return `quota ${m.quota} ${m.change} by ${m.actor}${what ? `: ${what}` : ''}`;
}

/** How a time axis label reads for a range of this length. */
function tickLabel(atMs: number, spanMs: number): string {
  const d = new Date(atMs);
  const pad = (n: number) => String(n).padStart(2, '0');
  const hm = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  if (spanMs <= 10 * 60_000) return `${hm}:${pad(d.getSeconds())}`;
  if (spanMs <= 26 * 3600_000) return hm;
  if (spanMs <= 21 * 24 * 3600_000) return `${d.toLocaleDateString('en-GB', { weekday: 'short', day: 'numeric' })} ${hm}`;
  return d.toLocaleDateString('en-GB', { day: 'numeric', month: 'short', year: '2-digit' });
}

export interface UsageSectionOptions {
  readonly route: RangeRoute;
  readonly span: Span;
  /** The page's address at another range. */
  readonly href: (route: RangeRoute) => string;
  /** The series the charts draw (the caller loads it, so other sections can read it too). */
  readonly series: Promise<Series>;
  /** The limit changes of the series' markers, before → after (a quota's history); without it, markers say only who changed what. */
  readonly changes?: (series: Series) => Promise<LimitChanges>;
  /** Usage as it was at an instant (`usage?at=`): a click on a chart shows it. */
  readonly instant?: (at: string) => Promise<Instant>;
  /** Told when the instant shown changes, so the page's address can keep it. */
  readonly onInstant?: (at: string) => void;
  /** What the chart data's CSV is named after ("team-a usage"). */
  readonly exportAs: string;
  /** Where the list of limit changes and denials goes (a page with tabs shows it on one of its own); by default under the charts. */
  readonly markersInto?: HTMLElement;
}

/**
 * A page's "Usage over time": the range's controls, a legend, the charts of the series, the
 * usage at a chosen instant, the markers as a list, and the chart data as CSV. A failed load is
 * shown where the charts would be.
 */
export function usageSection(options: UsageSectionOptions): HTMLElement {
  const { route, span } = options;
  const chartArea = h('div', { id: 'usage', 'aria-busy': 'true' }, h('p', { class: 'status', role: 'status' }, 'Loading usage…'));
  const markersArea = options.markersInto ?? h('div');
  const instantArea = h('div');
  const exportButton = h(
    'button',
    { type: 'button', class: 'secondary', id: 'export-usage', disabled: true },
    'Download the chart data (CSV)',
  );
  void (async () => {
    try {
      const series = await options.series;
      const changes = options.changes
        ? await options.changes(series).catch(() => new Map<string, QuotaChange>())
        : new Map<string, QuotaChange>();
      // A "+n" mark zooms in on its cluster: the same page, over the cluster's seconds.
      const zoomHref = (since: string, until: string) => options.href({ range: route.range, since, until });
      let shown: string | undefined;
      const narrow = matchMedia(NARROW_MEDIA);
      const draw = () =>
        usageCharts(series, {
          changes,
          zoomHref,
          box: narrow.matches ? NARROW : WIDE,
          ...(options.instant ? { onPick: (at: string) => panel?.show(at) } : {}),
        });
      let charts = draw();
      const panel = options.instant
        ? instantPanel(series, options.instant, (at) => {
            shown = at;
            charts.mark(at);
            options.onInstant?.(at);
          })
        : undefined;
      fill(chartArea, charts.element);
      // A window that crosses the narrow width is drawn again in its own units; a page left behind stops listening.
      const redraw = (): void => {
        if (!chartArea.isConnected) {
          narrow.removeEventListener('change', redraw);
          return;
        }
        charts = draw();
        charts.mark(shown);
        fill(chartArea, charts.element);
      };
      narrow.addEventListener('change', redraw);
      fill(instantArea, panel?.element);
      fill(markersArea, markerList(series, changes));
      exportButton.disabled = false;
      exportButton.addEventListener('click', () =>
        download(exportName(options.exportAs, series.since, series.until, 'csv'), 'text/csv', seriesCsv(series)),
      );
      if (route.at) panel?.show(route.at);
    } catch (error) {
      fill(chartArea, h('p', { class: 'error', role: 'alert' }, (error as ApiError).message));
    } finally {
      chartArea.setAttribute('aria-busy', 'false');
    }
  })();
  return h(
    'section',
    { 'aria-labelledby': 'h-usage' },
    h('h2', { id: 'h-usage' }, 'Usage over time'),
    rangeToolbar(route, span, options.href),
    h(
      'p',
      { class: 'legend', 'aria-hidden': 'true' },
      h('span', { class: 'key used' }, 'used'),
      h('span', { class: 'key hard' }, 'hard'),
      h('span', { class: 'key limit' }, 'limit changed'),
      h('span', { class: 'key denial' }, 'denied'),
    ),
    chartArea,
    instantArea,
    options.markersInto ? null : h('h3', {}, 'Limit changes and denials in this range'),
    options.markersInto ? null : markersArea,
    h('p', { class: 'exports' }, exportButton),
  );
}

/** Where a denial leads: its explanation, on a namespace's series; nowhere on a shared quota's (its markers do not say which namespace decided). */
const decisionHref = (series: Series, decisionId: string): string | undefined =>
  series.namespace === undefined ? undefined : `#/ns/${enc(series.namespace)}/decisions/${enc(decisionId)}`;

export interface ChartOptions {
  readonly changes: LimitChanges;
  /** The drawing's units: the wide box by default. */
  readonly box?: Box;
  /** The address of the range between two instants (where a "+n" cluster of denials leads). */
  readonly zoomHref?: (since: string, until: string) => string;
  /** A click on a chart picks the sample nearest to it. */
  readonly onPick?: (at: string) => void;
}

/**
 * One small chart per quota resource: used (solid) and hard (dashed) as steps, a dot per
 * sample (its title gives the exact values), limit changes as vertical lines, denials as red
 * marks linking to their explanation (where the series says whose), stacked where they would
 * touch. Each chart has a text summary for screen readers; the same events are listed under the
 * charts. `mark` draws the instant whose usage is shown on every chart.
 */
export function usageCharts(series: Series, options: ChartOptions): { element: HTMLElement; mark: (at: string | undefined) => void } {
  const tracks = tracksOf(series);
  if (tracks.length === 0)
    return { element: h('p', { class: 'muted' }, 'No quota had a hard limit in this range.'), mark: () => undefined };
  const cursors: SVGLineElement[] = [];
  const from = Date.parse(series.since);
  const to = Date.parse(series.until);
  const BOX = options.box ?? WIDE;
  const xOf = (atMs: number) => BOX.left + (to === from ? 0 : ((atMs - from) / (to - from)) * (BOX.width - BOX.left - BOX.right));
  const element = h('div', { class: 'charts' }, ...tracks.map((track) => chart(track, series, options, cursors)));
  const mark = (at: string | undefined): void => {
    for (const cursor of cursors) {
      if (at === undefined) {
        cursor.setAttribute('hidden', '');
        continue;
      }
      const x = String(Math.round(xOf(Date.parse(at)) * 10) / 10);
      cursor.setAttribute('x1', x);
      cursor.setAttribute('x2', x);
      cursor.setAttribute('data-at', at);
      cursor.removeAttribute('hidden');
    }
  };
  return { element, mark };
}

function chart(track: Track, series: Series, options: ChartOptions, cursors: SVGLineElement[]): HTMLElement {
  const BOX = options.box ?? WIDE;
  const g = geometryOf(track, series.since, series.until, BOX);
  const spanMs = Date.parse(series.until) - Date.parse(series.since);
  const last = g.points[g.points.length - 1];
  const peak = g.points.reduce((max, p) => (p.y < max.y ? p : max), g.points[0] ?? { y: Infinity, used: '0', at: '' });
  const summary = last
    ? `${track.resource} in quota ${track.quota}: at the end of the range ${last.used} used of ${last.hard}; highest ${peak.used} at ${localTime(peak.at)}.`
    : `${track.resource} in quota ${track.quota}: the quota did not exist in this range.`;
  const bottom = BOX.height - BOX.bottom;
  const cursor = s('line', { class: 'instant', x1: 0, x2: 0, y1: BOX.top, y2: bottom, hidden: true, 'aria-hidden': 'true' });
  cursors.push(cursor);
  const limits = series.markers.filter((m): m is Extract<Marker, { kind: 'limit' }> => m.kind === 'limit' && m.quota === track.quota);
  const denials = denialsOf(series, track);
  const svg = s(
    'svg',
    // A group, not an image: an image's children are hidden from assistive technology, and
    // the denial markers inside are links. The drawing itself is summarized by the label.
    {
      viewBox: `0 0 ${BOX.width} ${BOX.height}`,
      class: options.onPick ? 'chart pickable' : 'chart',
      role: 'group',
      'aria-label': summary,
      'data-quota': track.quota,
      'data-resource': track.resource,
      'data-since': series.since,
      'data-until': series.until,
    },
    s(
      'g',
      { 'aria-hidden': 'true' },
      ...g.yTicks.map((t) =>
        s(
          'g',
          { class: 'tick' },
          s('line', { x1: BOX.left, x2: BOX.width - BOX.right, y1: t.y, y2: t.y }),
          s('text', { class: 'ylabel', x: BOX.left - 6, y: t.y + 4, 'text-anchor': 'end' }, axisLabel(t.value, g.bytes)),
        ),
      ),
      ...g.xTicks.map((t, i) =>
        s(
          'text',
          { class: 'xlabel', x: t.x, y: BOX.height - 8, 'text-anchor': i === 0 ? 'start' : i === g.xTicks.length - 1 ? 'end' : 'middle' },
          tickLabel(t.at, spanMs),
        ),
      ),
      s('path', { class: 'hard', d: g.hardPath }),
      s('path', { class: 'used', d: g.usedPath }),
      ...g.points.map((p) =>
        s(
          'circle',
          { class: 'point', cx: p.x, cy: p.y, r: 2.5, 'data-at': p.at, 'data-used': p.used, 'data-hard': p.hard },
          s('title', {}, `${localTime(p.at)}: ${p.used} used of ${p.hard}`),
        ),
      ),
      cursor,
    ),
    ...limits.map((m) => limitMarker(m, g.x(Date.parse(m.at)), BOX.top, bottom, options.changes)),
    ...denialMarkers(denials, series, g.x, bottom, options.zoomHref),
  );
  if (options.onPick) pickOnClick(svg, series, BOX, spanMs, options.onPick);
  return h(
    'figure',
    { class: 'chart-card' },
    h(
      'figcaption',
      {},
      h('strong', {}, track.resource),
      ` · quota ${track.quota}`,
      last ? h('span', { class: 'now' }, `${last.used} / ${last.hard}`) : null,
    ),
    svg,
  );
}

/** A click on a chart picks the sample clicked, or else the one nearest the pointer (`spanMs`: the range the chart spans). */
function pickOnClick(svg: SVGSVGElement, series: Series, BOX: Box, spanMs: number, pick: (at: string) => void): void {
  const ats = series.points.map((p) => p.at);
  svg.addEventListener('click', (event) => {
    // A denial's link leads to its explanation; anywhere else picks the instant under the pointer.
    if ((event.target as Element).closest('a')) return;
    // A drawn sample is the instant aimed at, even where samples closer than a pixel overlap.
    const point = (event.target as Element).closest('circle.point')?.getAttribute('data-at');
    if (point) return pick(point);
    const box = svg.getBoundingClientRect();
    const x = ((event.clientX - box.left) / box.width) * BOX.width;
    const atMs = Date.parse(series.since) + ((x - BOX.left) / (BOX.width - BOX.left - BOX.right)) * spanMs;
    const at = nearestSample(ats, atMs);
    if (at) pick(at);
  });
}

function limitMarker(m: Extract<Marker, { kind: 'limit' }>, x: number, top: number, bottom: number, changes: LimitChanges): SVGElement {
  return s(
    'g',
    { class: `limit-marker ${m.change}`, 'data-at': m.at, 'aria-hidden': 'true' },
    s('line', { x1: x, x2: x, y1: top - 6, y2: bottom }),
    s('path', { d: `M${x - 5},${top - 10}h10l-5,7z` }),
    s('title', {}, `${localTime(m.at)}: ${limitText(m, changes)}`),
  );
}

/**
 * The denials as marks above the time axis: each its own link (where it leads somewhere), those
 * that would touch stacked upward from the first of their cluster (only the lowest has a stem,
 * so no mark's stem crosses another's dot), and what a stack cannot hold as one "+n" mark.
 */
function denialMarkers(
  denials: readonly Extract<Marker, { kind: 'denial' }>[],
  series: Series,
  x: (atMs: number) => number,
  bottom: number,
  zoomHref: ChartOptions['zoomHref'],
): SVGElement[] {
  const { placed, overflow } = layoutDenials(
    denials.map((m) => x(Date.parse(m.at))),
    DENIAL_GAP,
    DENIAL_STACK_MAX,
  );
  const cy = (level: number) => bottom - 12 - level * DENIAL_GAP;
  const marks: SVGElement[] = placed.map(({ index, x: mx, level }) => {
    const m = denials[index] as Extract<Marker, { kind: 'denial' }>;
    const drawing = [
      level === 0 ? s('line', { x1: mx, x2: mx, y1: bottom - 7, y2: bottom }) : null,
      s('circle', { class: 'hit', cx: mx, cy: cy(level), r: DENIAL_GAP / 2 }),
      s('circle', { class: 'dot', cx: mx, cy: cy(level), r: 5 }),
      s('title', {}, `${localTime(m.at)}: denied ${m.name ?? ''} (${m.requester}) — ${m.message ?? m.reason ?? ''}`),
    ];
    const href = decisionHref(series, m.decisionId);
    // Nowhere to lead: a mark like a limit change's, read as text in the list under the charts.
    if (href === undefined)
      return s('g', { class: 'denial-marker', 'data-decision': m.decisionId, 'data-level': level, 'aria-hidden': 'true' }, ...drawing);
    // A link: keyboard users reach it with Tab, and Enter opens the explanation.
    return s(
      'a',
      {
        href,
        class: 'denial-marker',
        'data-decision': m.decisionId,
        'data-level': level,
        'aria-label': `denied ${m.name ?? 'a request'} of ${m.requester} at ${localTime(m.at)}`,
      },
      ...drawing,
    );
  });
  for (const cluster of overflow) {
    const first = denials[cluster.indices[0] as number] as Extract<Marker, { kind: 'denial' }>;
    const lastOne = denials[cluster.indices[cluster.indices.length - 1] as number] as Extract<Marker, { kind: 'denial' }>;
    // The cluster's seconds, widened a little on each side, so its denials spread out.
    const since = new Date(Date.parse(first.at) - 1000).toISOString();
    const until = new Date(Date.parse(lastOne.at) + 1000).toISOString();
    const label = `${cluster.indices.length} more denials from ${localTime(first.at)} to ${localTime(lastOne.at)}`;
    const drawing = [
      s('circle', { class: 'hit', cx: cluster.x, cy: cy(cluster.level), r: DENIAL_GAP / 2 }),
      s('circle', { class: 'more', cx: cluster.x, cy: cy(cluster.level), r: 6.5 }),
      s('text', { x: cluster.x, y: cy(cluster.level) + 3, 'text-anchor': 'middle' }, '+'),
      s('title', {}, `${label}: zoom in to see each`),
    ];
    marks.push(
      zoomHref
        ? s(
            'a',
            {
              href: zoomHref(since, until),
              class: 'denial-cluster',
              'data-count': cluster.indices.length,
              'aria-label': `${label}: zoom in`,
            },
            ...drawing,
          )
        : s('g', { class: 'denial-cluster', 'data-count': cluster.indices.length, 'aria-hidden': 'true' }, ...drawing),
    );
  }
  return marks;
}

/**
 * The range's limit changes (before → after) and denials as a list of text and links (where they
 * lead somewhere): the charts' markers, readable without the charts. Newest first; the first
 * few, then the rest on request, so a busy range does not bury the page.
 */
export function markerList(series: Series, changes: LimitChanges): HTMLElement {
  if (series.markers.length === 0) return h('p', { class: 'muted', id: 'markers' }, 'No limit changes or denials in this range.');
  const items = [...series.markers].reverse().map((m) => {
    if (m.kind === 'limit')
      return h(
        'li',
        { class: 'limit', 'data-version': m.version },
        h('time', { datetime: m.at }, localTime(m.at)),
        ` ${limitText(m, changes)}`,
      );
    const href = decisionHref(series, m.decisionId);
    const what = `denied ${m.name ?? 'a request'}`;
    return h(
      'li',
      { class: 'denial' },
      h('time', { datetime: m.at }, localTime(m.at)),
      ' ',
      href === undefined ? h('span', { 'data-decision': m.decisionId }, what) : h('a', { href, 'data-decision': m.decisionId }, what),
      ` (${m.requester})${m.message ? `: ${m.message}` : ''}`,
    );
  });
  const list = h('ol', { class: 'markers' }, ...items.slice(0, MARKERS_SHOWN));
  const rest = items.slice(MARKERS_SHOWN);
  const more = rest.length > 0 ? h('button', { type: 'button', class: 'more', id: 'markers-more' }, `Show ${rest.length} older`) : null;
  more?.addEventListener('click', () => {
    list.append(...rest);
    more.remove();
  });
  return h(
    'div',
    { id: 'markers' },
    series.truncated ? h('p', { class: 'warning' }, 'More than 1,000 markers of a kind in this range: zoom in to see them all.') : null,
    list,
    more,
  );
}
