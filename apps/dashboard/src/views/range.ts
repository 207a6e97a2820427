import { h } from '../dom.js';
import { localTime } from '../format.js';

/** The zoom levels: each shows this long a range in this many samples (one per minute, 15 minutes, hour). */
export const RANGES = {
  hour: { ms: 3600_000, points: 61, label: 'Hour' },
  day: { ms: 24 * 3600_000, points: 97, label: 'Day' },
  week: { ms: 7 * 24 * 3600_000, points: 169, label: 'Week' },
} as const;
export type RangeName = keyof typeof RANGES;

/** A range given by both ends (a link to an incident's minutes) is sampled at this many points. */
const CUSTOM_POINTS = 100;

/** A usage chart's range, as a page's address gives it (`?range=day&until=…&since=…`). */
export interface RangeRoute {
  readonly range: RangeName;
  /** The end of the range; undefined for "now". */
  readonly until?: string;
  /** With `until`: an exact range instead of a zoom level. */
  readonly since?: string;
}

/** The range in an address's query: an unknown zoom level is a day, an instant that does not parse is left out. */
export function rangeRoute(params: URLSearchParams): RangeRoute {
  const range = params.get('range') ?? 'day';
  const instant = (name: string): string | undefined => {
    const value = params.get(name);
    return value && !Number.isNaN(Date.parse(value)) ? new Date(value).toISOString() : undefined;
  };
  const until = instant('until');
  const since = until ? instant('since') : undefined;
  return { range: Object.hasOwn(RANGES, range) ? (range as RangeName) : 'day', ...(until ? { until } : {}), ...(since ? { since } : {}) };
}

/** The query (without `?`) of a page's address at a range: the zoom and position survive a reload and can be shared. */
export function rangeQuery(route: RangeRoute): string {
  return new URLSearchParams({ range: route.range, ...(route.until ? { until: route.until } : {}), ...(route.since && route.until ? { since: route.since } : {}) }).toString();
}

/** The instants a range covers and how many samples a chart of it draws. */
export interface Span {
  readonly since: string;
  readonly until: string;
  readonly ms: number;
  readonly points: number;
  /** Given by both ends rather than as a zoom level. */
  readonly custom: boolean;
}

/** A range ending now is pinned when this is called (the page draws), so every section reads the same instant. */
export function spanOf(route: RangeRoute): Span {
  const until = route.until ?? new Date(Math.ceil(Date.now() / 1000) * 1000).toISOString();
  const custom = route.since !== undefined && route.until !== undefined && Date.parse(route.since) < Date.parse(route.until);
  const { ms, points } = custom ? { ms: Date.parse(until) - Date.parse(route.since as string), points: CUSTOM_POINTS } : RANGES[route.range];
  return { since: new Date(Date.parse(until) - ms).toISOString(), until, ms, points, custom };
}

/**
 * The zoom links (hour, day, week), the pan links (earlier, later, now) and the range in words.
 * `href` gives the page's own address at another range; each control is a link, so it works
 * by keyboard, and the range it leads to can be shared or opened in a new tab.
 */
export function rangeToolbar(route: RangeRoute, span: Span, href: (route: RangeRoute) => string): HTMLElement {
  const { range } = route;
  const { since, until, custom } = span;
  const zoom = h(
    'div',
    { class: 'zoom', role: 'group', 'aria-label': 'Range' },
    ...(Object.keys(RANGES) as RangeName[]).map((name) =>
      h('a', { class: 'button', href: href({ range: name, ...(route.until ? { until: route.until } : {}) }), 'aria-current': name === range && !custom ? 'true' : undefined, 'data-range': name }, RANGES[name].label),
    ),
  );
  const earlier = new Date(Date.parse(until) - span.ms).toISOString();
  const later = Date.parse(until) + span.ms >= Date.now() ? undefined : new Date(Date.parse(until) + span.ms).toISOString();
  const pan = h(
    'div',
    { class: 'pan', role: 'group', 'aria-label': 'Move the range' },
    h('a', { class: 'button', href: href({ range, until: earlier, ...(custom ? { since: new Date(Date.parse(earlier) - span.ms).toISOString() } : {}) }), rel: 'prev' }, '← Earlier'),
    route.until ? h('a', { class: 'button', href: href({ range, ...(later ? { until: later, ...(custom ? { since: until } : {}) } : {}) }), rel: 'next' }, 'Later →') : null,
    route.until ? h('a', { class: 'button', href: href({ range }) }, 'Now') : null,
  );
  return h('div', { class: 'toolbar' }, zoom, pan, h('p', { class: 'range' }, 'From ', h('time', { datetime: since }, localTime(since)), ' to ', h('time', { datetime: until }, localTime(until))));
}
