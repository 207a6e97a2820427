import { api, ApiError, enc } from '../api.js';
import type { Series } from '../chart.js';
import { fill, h } from '../dom.js';
import { localTime } from '../format.js';
import { canEdit, type WhoAmI } from '../session.js';
import { decisionsLog } from './decisions.js';
import { quotasNow } from './quotas.js';
import { reservationsTable } from './reservations.js';
import { markerList, usageCharts } from './usage-chart.js';
import { whatIfBox } from './what-if-box.js';

/** The zoom levels: each shows this long a range in this many samples (one per minute, 15 minutes, hour). */
export const RANGES = {
  hour: { ms: 3600_000, points: 61, label: 'Hour' },
  day: { ms: 24 * 3600_000, points: 97, label: 'Day' },
  week: { ms: 7 * 24 * 3600_000, points: 169, label: 'Week' },
} as const;
export type RangeName = keyof typeof RANGES;

/** A range given by both ends (a link to an incident's minutes) is sampled at this many points. */
const CUSTOM_POINTS = 100;

export interface NamespaceRoute {
  readonly namespace: string;
  readonly range: RangeName;
  /** The end of the range; undefined for "now". */
  readonly until?: string;
  /** With `until`: an exact range instead of a zoom level. */
  readonly since?: string;
}

/** The page's address for a namespace at a range: the zoom and position survive a reload and can be shared. */
export function namespaceHref(route: NamespaceRoute): string {
  const query = new URLSearchParams({ range: route.range, ...(route.until ? { until: route.until } : {}), ...(route.since && route.until ? { since: route.since } : {}) });
  return `#/ns/${enc(route.namespace)}?${query.toString()}`;
}

/** One namespace: its quotas now, usage over a range, the reservations, the decisions and the what-if box. */
export function namespaceView(main: HTMLElement, who: WhoAmI, route: NamespaceRoute): void {
  const { namespace, range } = route;
  // A range ending now is pinned when the page draws, so every section reads the same instant.
  const until = route.until ?? new Date(Math.ceil(Date.now() / 1000) * 1000).toISOString();
  const custom = route.since !== undefined && route.until !== undefined && Date.parse(route.since) < Date.parse(route.until);
  const span = custom ? { ms: Date.parse(until) - Date.parse(route.since as string), points: CUSTOM_POINTS } : RANGES[range];
  const since = new Date(Date.parse(until) - span.ms).toISOString();
  const chartArea = h('div', { id: 'usage', 'aria-busy': 'true' }, h('p', { class: 'status', role: 'status' }, 'Loading usage…'));
  const markersArea = h('div');

  const zoom = h(
    'div',
    { class: 'zoom', role: 'group', 'aria-label': 'Range' },
    ...(Object.keys(RANGES) as RangeName[]).map((name) =>
      h('a', { class: 'button', href: namespaceHref({ namespace, range: name, ...(route.until ? { until: route.until } : {}) }), 'aria-current': name === range && !custom ? 'true' : undefined, 'data-range': name }, RANGES[name].label),
    ),
  );
  const earlier = new Date(Date.parse(until) - span.ms).toISOString();
  const later = Date.parse(until) + span.ms >= Date.now() ? undefined : new Date(Date.parse(until) + span.ms).toISOString();
  const pan = h(
    'div',
    { class: 'pan', role: 'group', 'aria-label': 'Move the range' },
    h('a', { class: 'button', href: namespaceHref({ namespace, range, until: earlier, ...(custom ? { since: new Date(Date.parse(earlier) - span.ms).toISOString() } : {}) }), rel: 'prev' }, '← Earlier'),
    route.until ? h('a', { class: 'button', href: namespaceHref({ namespace, range, ...(later ? { until: later, ...(custom ? { since: until } : {}) } : {}) }), rel: 'next' }, 'Later →') : null,
    route.until ? h('a', { class: 'button', href: namespaceHref({ namespace, range }) }, 'Now') : null,
  );

  fill(
    main,
    h('p', {}, h('a', { href: '#/' }, '← All namespaces')),
    h('h1', {}, namespace),
    h('section', { 'aria-labelledby': 'h-quotas' }, h('h2', { id: 'h-quotas' }, 'Quotas now'), quotasNow(namespace, canEdit(who), () => namespaceView(main, who, route))),
    h(
      'section',
      { 'aria-labelledby': 'h-usage' },
      h('h2', { id: 'h-usage' }, 'Usage over time'),
      h('div', { class: 'toolbar' }, zoom, pan, h('p', { class: 'range' }, 'From ', h('time', { datetime: since }, localTime(since)), ' to ', h('time', { datetime: until }, localTime(until)))),
      h('p', { class: 'legend', 'aria-hidden': 'true' }, h('span', { class: 'key used' }, 'used'), h('span', { class: 'key hard' }, 'hard'), h('span', { class: 'key limit' }, 'limit changed'), h('span', { class: 'key denial' }, 'denied')),
      chartArea,
      h('h3', {}, 'Limit changes and denials in this range'),
      markersArea,
    ),
    h('section', { 'aria-labelledby': 'h-reservations' }, h('h2', { id: 'h-reservations' }, 'Reservations'), reservationsTable(namespace)),
    h('section', { 'aria-labelledby': 'h-decisions' }, h('h2', { id: 'h-decisions' }, 'Decisions in this range'), decisionsLog(namespace, since, until)),
    h('section', { 'aria-labelledby': 'h-what-if' }, h('h2', { id: 'h-what-if' }, 'What if?'), whatIfBox(namespace)),
  );

  const loadSeries = async (): Promise<void> => {
    chartArea.setAttribute('aria-busy', 'true');
    try {
      const series = await api<Series>('GET', `/v1/namespaces/${enc(namespace)}/usage/series?since=${enc(since)}&until=${enc(until)}&points=${span.points}`);
      fill(chartArea, usageCharts(series));
      fill(markersArea, markerList(series));
    } catch (error) {
      fill(chartArea, h('p', { class: 'error', role: 'alert' }, (error as ApiError).message));
    } finally {
      chartArea.setAttribute('aria-busy', 'false');
    }
  };
  void loadSeries();
}
