import { axisLabel, geometryOf, tracksOf, type Box, type Marker, type Series, type Track } from '../chart.js';
import { type ApiError, enc } from '../api.js';
import { fill, h, s } from '../dom.js';
import { localTime } from '../format.js';
import { rangeToolbar, type RangeRoute, type Span } from './range.js';

const BOX: Box = { width: 640, height: 190, left: 48, right: 12, top: 16, bottom: 26 };

/** How a time axis label reads for a range of this length. */
function tickLabel(atMs: number, spanMs: number): string {
  const d = new Date(atMs);
  const pad = (n: number) => String(n).padStart(2, '0');
  const hm = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  if (spanMs <= 10 * 60_000) return `${hm}:${pad(d.getSeconds())}`;
  if (spanMs <= 26 * 3600_000) return hm;
  return `${d.toLocaleDateString('en-GB', { weekday: 'short', day: 'numeric' })} ${hm}`;
}

/**
 * A page's "Usage over time": the range's controls (`href` gives the page's address at another
 * range), a legend, the charts of the series `load` answers for the span, and their markers as
 * a list. A failed load is shown where the charts would be.
 */
export function usageSection(route: RangeRoute, span: Span, href: (route: RangeRoute) => string, load: (span: Span) => Promise<Series>): HTMLElement {
  const chartArea = h('div', { id: 'usage', 'aria-busy': 'true' }, h('p', { class: 'status', role: 'status' }, 'Loading usage…'));
  const markersArea = h('div');
  void (async () => {
    try {
      const series = await load(span);
      fill(chartArea, usageCharts(series));
      fill(markersArea, markerList(series));
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
    rangeToolbar(route, span, href),
    h('p', { class: 'legend', 'aria-hidden': 'true' }, h('span', { class: 'key used' }, 'used'), h('span', { class: 'key hard' }, 'hard'), h('span', { class: 'key limit' }, 'limit changed'), h('span', { class: 'key denial' }, 'denied')),
    chartArea,
    h('h3', {}, 'Limit changes and denials in this range'),
    markersArea,
  );
}

/** Where a denial leads: its explanation, on a namespace's series; nowhere on a shared quota's (its markers do not say which namespace decided). */
const decisionHref = (series: Series, decisionId: string): string | undefined => (series.namespace === undefined ? undefined : `#/ns/${enc(series.namespace)}/decisions/${enc(decisionId)}`);

/**
 * One small chart per quota resource: used (solid) and hard (dashed) as steps, a dot per
 * sample (its title gives the exact values), limit changes as vertical lines, denials as red
 * marks linking to their explanation (where the series says whose). Each chart has a text
 * summary for screen readers; the same events are listed under the charts.
 */
export function usageCharts(series: Series): HTMLElement {
  const tracks = tracksOf(series);
  if (tracks.length === 0) return h('p', { class: 'muted' }, 'No quota had a hard limit in this range.');
  return h('div', { class: 'charts' }, ...tracks.map((track) => chart(track, series)));
}

function chart(track: Track, series: Series): HTMLElement {
  const g = geometryOf(track, series.since, series.until, BOX);
  const spanMs = Date.parse(series.until) - Date.parse(series.since);
  const last = g.points[g.points.length - 1];
  const peak = g.points.reduce((max, p) => (p.y < max.y ? p : max), g.points[0] ?? { y: Infinity, used: '0', at: '' });
  const summary = last
    ? `${track.resource} in quota ${track.quota}: at the end of the range ${last.used} used of ${last.hard}; highest ${peak.used} at ${localTime(peak.at)}.`
    : `${track.resource} in quota ${track.quota}: the quota did not exist in this range.`;
  const bottom = BOX.height - BOX.bottom;
  const svg = s(
    'svg',
    // A group, not an image: an image's children are hidden from assistive technology, and
    // the denial markers inside are links. The drawing itself is summarized by the label.
    { viewBox: `0 0 ${BOX.width} ${BOX.height}`, class: 'chart', role: 'group', 'aria-label': summary, 'data-quota': track.quota, 'data-resource': track.resource, 'data-since': series.since, 'data-until': series.until },
    s(
      'g',
      { 'aria-hidden': 'true' },
      ...g.yTicks.map((t) => s('g', { class: 'tick' }, s('line', { x1: BOX.left, x2: BOX.width - BOX.right, y1: t.y, y2: t.y }), s('text', { x: BOX.left - 6, y: t.y + 4, 'text-anchor': 'end' }, axisLabel(t.value)))),
      ...g.xTicks.map((t, i) => s('text', { class: 'xlabel', x: t.x, y: BOX.height - 8, 'text-anchor': i === 0 ? 'start' : i === g.xTicks.length - 1 ? 'end' : 'middle' }, tickLabel(t.at, spanMs))),
      s('path', { class: 'hard', d: g.hardPath }),
      s('path', { class: 'used', d: g.usedPath }),
      ...g.points.map((p) => s('circle', { class: 'point', cx: p.x, cy: p.y, r: 2.5, 'data-at': p.at, 'data-used': p.used, 'data-hard': p.hard }, s('title', {}, `${localTime(p.at)}: ${p.used} used of ${p.hard}`))),
    ),
    ...series.markers.filter((m) => m.kind === 'denial' || m.quota === track.quota).map((m) => marker(m, g.x(Date.parse(m.at)), bottom, m.kind === 'denial' ? decisionHref(series, m.decisionId) : undefined)),
  );
  return h(
    'figure',
    { class: 'chart-card' },
    h('figcaption', {}, h('strong', {}, track.resource), ` · quota ${track.quota}`, last ? h('span', { class: 'now' }, `${last.used} / ${last.hard}`) : null),
    svg,
  );
}

function marker(m: Marker, x: number, bottom: number, href: string | undefined): SVGElement {
  if (m.kind === 'limit') {
    return s(
      'g',
      { class: `limit-marker ${m.change}`, 'data-at': m.at, 'aria-hidden': 'true' },
      s('line', { x1: x, x2: x, y1: BOX.top - 6, y2: bottom }),
      s('path', { d: `M${x - 5},${BOX.top - 10}h10l-5,7z` }),
      s('title', {}, `${localTime(m.at)}: quota ${m.quota} ${m.change} by ${m.actor}`),
    );
  }
  const drawing = [
    s('line', { x1: x, x2: x, y1: bottom - 8, y2: bottom }),
    s('circle', { cx: x, cy: bottom - 12, r: 4.5 }),
    s('title', {}, `${localTime(m.at)}: denied ${m.name ?? ''} (${m.requester}) — ${m.message ?? m.reason ?? ''}`),
  ];
  // Nowhere to lead: a mark like a limit change's, read as text in the list under the charts.
  if (href === undefined) return s('g', { class: 'denial-marker', 'data-decision': m.decisionId, 'aria-hidden': 'true' }, ...drawing);
  // A link: keyboard users reach it with Tab, and Enter opens the explanation.
  return s('a', { href, class: 'denial-marker', 'data-decision': m.decisionId, 'aria-label': `denied ${m.name ?? 'a request'} of ${m.requester} at ${localTime(m.at)}` }, ...drawing);
}

/** The range's limit changes and denials as a list of text and links (where they lead somewhere): the charts' markers, readable without the charts. */
export function markerList(series: Series): HTMLElement {
  if (series.markers.length === 0) return h('p', { class: 'muted', id: 'markers' }, 'No limit changes or denials in this range.');
  return h(
    'div',
    { id: 'markers' },
    series.truncated ? h('p', { class: 'warning' }, 'More than 1,000 markers of a kind in this range: zoom in to see them all.') : null,
    h(
      'ol',
      { class: 'markers' },
      ...[...series.markers].reverse().map((m) => {
        if (m.kind === 'limit') return h('li', { class: 'limit' }, h('time', { datetime: m.at }, localTime(m.at)), ` quota ${m.quota} ${m.change} by ${m.actor}`);
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
      }),
    ),
  );
}
