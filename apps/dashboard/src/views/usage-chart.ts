import { axisLabel, geometryOf, tracksOf, type Box, type Marker, type Series, type Track } from '../chart.js';
import { enc } from '../api.js';
import { h, s } from '../dom.js';
import { localTime } from '../format.js';

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
 * One small chart per quota resource: used (solid) and hard (dashed) as steps, a dot per
 * sample (its title gives the exact values), limit changes as vertical lines, denials as red
 * marks linking to their explanation. Each chart is an image with a text summary for screen
 * readers; the same events are listed as links under the charts.
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
    ...series.markers.filter((m) => m.kind === 'denial' || m.quota === track.quota).map((m) => marker(m, g.x(Date.parse(m.at)), bottom, series.namespace)),
  );
  return h(
    'figure',
    { class: 'chart-card' },
    h('figcaption', {}, h('strong', {}, track.resource), ` · quota ${track.quota}`, last ? h('span', { class: 'now' }, `${last.used} / ${last.hard}`) : null),
    svg,
  );
}

function marker(m: Marker, x: number, bottom: number, namespace: string): SVGElement {
  if (m.kind === 'limit') {
    return s(
      'g',
      { class: `limit-marker ${m.change}`, 'data-at': m.at, 'aria-hidden': 'true' },
      s('line', { x1: x, x2: x, y1: BOX.top - 6, y2: bottom }),
      s('path', { d: `M${x - 5},${BOX.top - 10}h10l-5,7z` }),
      s('title', {}, `${localTime(m.at)}: quota ${m.quota} ${m.change} by ${m.actor}`),
    );
  }
  // A link: keyboard users reach it with Tab, and Enter opens the explanation.
  return s(
    'a',
    { href: `#/ns/${enc(namespace)}/decisions/${enc(m.decisionId)}`, class: 'denial-marker', 'data-decision': m.decisionId, 'aria-label': `denied ${m.name ?? 'a request'} of ${m.requester} at ${localTime(m.at)}` },
    s('line', { x1: x, x2: x, y1: bottom - 8, y2: bottom }),
    s('circle', { cx: x, cy: bottom - 12, r: 4.5 }),
    s('title', {}, `${localTime(m.at)}: denied ${m.name ?? ''} (${m.requester}) — ${m.message ?? m.reason ?? ''}`),
  );
}

/** The range's limit changes and denials as a list of text and links: the charts' markers, readable without the charts. */
export function markerList(series: Series): HTMLElement {
  if (series.markers.length === 0) return h('p', { class: 'muted', id: 'markers' }, 'No limit changes or denials in this range.');
  return h(
    'div',
    { id: 'markers' },
    series.truncated ? h('p', { class: 'warning' }, 'More than 1,000 markers of a kind in this range: zoom in to see them all.') : null,
    h(
      'ol',
      { class: 'markers' },
      ...[...series.markers].reverse().map((m) =>
        m.kind === 'limit'
          ? h('li', { class: 'limit' }, h('time', { datetime: m.at }, localTime(m.at)), ` quota ${m.quota} ${m.change} by ${m.actor}`)
          : h(
              'li',
              { class: 'denial' },
              h('time', { datetime: m.at }, localTime(m.at)),
              ' ',
              h('a', { href: `#/ns/${enc(series.namespace)}/decisions/${enc(m.decisionId)}`, 'data-decision': m.decisionId }, `denied ${m.name ?? 'a request'}`),
              ` (${m.requester})${m.message ? `: ${m.message}` : ''}`,
            ),
      ),
    ),
  );
}
