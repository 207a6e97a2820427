import { h } from '../dom.js';
import { localTime } from '../format.js';

/** The zoom levels: each shows this long a range in this many samples (one per minute, 15 minutes, hour). */
export const RANGES = {
  hour: { ms: 3600_000, points: 61, label: 'Hour' },
  day: { ms: 24 * 3600_000, points: 97, label: 'Day' },
  week: { ms: 7 * 24 * 3600_000, points: 169, label: 'Week' },
} as const;
/**
 * `all`: from a little before the first event to the end, so a namespace's whole history fills
 * the chart (the default: a day would squash a new namespace's minutes against its right edge).
 */
export const ALL = { label: 'All' } as const;
export type RangeName = keyof typeof RANGES | 'all';

/** A range given by both ends (a link to an incident's minutes), or the whole history, is sampled at this many points. */
const CUSTOM_POINTS = 100;
/** The whole history starts this share of its length before the first event, so the first step shows. */
const HISTORY_LEAD = 0.04;
/** ...and at least this long before it, so a history of one event is still a range. */
const HISTORY_LEAD_MIN_MS = 100;

/** A usage chart's range, as a page's address gives it (`?range=day&until=…&since=…`). */
export interface RangeRoute {
  readonly range: RangeName;
  /** The end of the range; undefined for "now". */
  readonly until?: string;
  /** With `until`: an exact range instead of a zoom level. */
  readonly since?: string;
  /** An instant whose usage is shown beside the charts ("usage at this instant"). */
  readonly at?: string;
}

const isRangeName = (name: string): name is RangeName => name === 'all' || Object.hasOwn(RANGES, name);

/** The range in an address's query: the whole history by default and for an unknown name, an instant that does not parse is left out. */
export function rangeRoute(params: URLSearchParams): RangeRoute {
  const range = params.get('range') ?? 'all';
  const instant = (name: string): string | undefined => {
    const value = params.get(name);
    return value && !Number.isNaN(Date.parse(value)) ? new Date(value).toISOString() : undefined;
  };
  const until = instant('until');
  const since = until ? instant('since') : undefined;
  const at = instant('at');
  return { range: isRangeName(range) ? range : 'all', ...(until ? { until } : {}), ...(since ? { since } : {}), ...(at ? { at } : {}) };
}

/** The query (without `?`) of a page's address at a range: the zoom and position survive a reload and can be shared. */
export function rangeQuery(route: RangeRoute): string {
  return new URLSearchParams({
    range: route.range,
    ...(route.until ? { until: route.until } : {}),
    ...(route.since && route.until ? { since: route.since } : {}),
    ...(route.at ? { at: route.at } : {}),
  }).toString();
}

/** The instants a range covers and how many samples a chart of it draws. */
export interface Span {
  readonly since: string;
  readonly until: string;
  readonly ms: number;
  readonly points: number;
  /** Given by both ends rather than as a zoom level. */
  readonly custom: boolean;
  /** The whole history (`all`), fitted to its first event. */
  readonly fitted: boolean;
}

/**
 * A range ending now is pinned when this is called (the page draws), so every section reads the
 * same instant. `firstEventAt` (the history's first event) is what `all` fits; without one (no
 * history yet, or it starts after the end) `all` is a day.
 */
export function spanOf(route: RangeRoute, firstEventAt?: string): Span {
  const until = route.until ?? new Date(Math.ceil(Date.now() / 1000) * 1000).toISOString();
  const end = Date.parse(until);
  const custom = route.since !== undefined && route.until !== undefined && Date.parse(route.since) < end;
  if (custom) {
    const ms = end - Date.parse(route.since as string);
    return { since: new Date(end - ms).toISOString(), until, ms, points: CUSTOM_POINTS, custom, fitted: false };
  }
  const first = firstEventAt === undefined ? Number.NaN : Date.parse(firstEventAt);
  if (route.range === 'all' && first < end) {
    const lead = Math.max(HISTORY_LEAD_MIN_MS, (end - first) * HISTORY_LEAD);
    const since = Math.round(first - lead);
    return { since: new Date(since).toISOString(), until, ms: end - since, points: CUSTOM_POINTS, custom: false, fitted: true };
  }
  const { ms, points } = RANGES[route.range === 'all' ? 'day' : route.range];
  return { since: new Date(end - ms).toISOString(), until, ms, points, custom: false, fitted: false };
}

/**
 * The zoom links (hour, day, week), the pan links (earlier, later, now) and the range in words.
 * `href` gives the page's own address at another range; each control is a link, so it works
 * by keyboard, and the range it leads to can be shared or opened in a new tab.
 */
export function rangeToolbar(route: RangeRoute, span: Span, href: (route: RangeRoute) => string): HTMLElement {
  const { since, until, custom, fitted } = span;
  // What is drawn: `all` without a history to fit is drawn as a day, and its controls say so.
  const range: RangeName = route.range === 'all' && !fitted && !custom ? 'day' : route.range;
  const names: RangeName[] = ['all', ...(Object.keys(RANGES) as (keyof typeof RANGES)[])];
  const zoom = h(
    'div',
    { class: 'zoom', role: 'group', 'aria-label': 'Range' },
    ...names.map((name) =>
      h(
        'a',
        {
          class: 'button',
          href: href({ range: name, ...(route.until ? { until: route.until } : {}) }),
          'aria-current': name === range && !custom ? 'true' : undefined,
          'data-range': name,
          ...(name === 'all' ? { title: 'From the first event to the end of the range' } : {}),
        },
        name === 'all' ? ALL.label : RANGES[name].label,
      ),
    ),
  );
  const earlier = new Date(Date.parse(until) - span.ms).toISOString();
  const later = Date.parse(until) + span.ms >= Date.now() ? undefined : new Date(Date.parse(until) + span.ms).toISOString();
  // The whole history has nothing earlier; a range given by both ends moves by its length.
  const pan = h(
    'div',
    { class: 'pan', role: 'group', 'aria-label': 'Move the range' },
    fitted
      ? null
      : h(
          'a',
          {
            class: 'button',
            href: href({ range, until: earlier, ...(custom ? { since: new Date(Date.parse(earlier) - span.ms).toISOString() } : {}) }),
            rel: 'prev',
          },
          '← Earlier',
        ),
    route.until && !fitted
      ? h(
          'a',
          { class: 'button', href: href({ range, ...(later ? { until: later, ...(custom ? { since: until } : {}) } : {}) }), rel: 'next' },
          'Later →',
        )
      : null,
    route.until ? h('a', { class: 'button', href: href({ range }) }, 'Now') : null,
  );
  return h(
    'div',
    { class: 'toolbar' },
    zoom,
    pan,
    h(
      'p',
      { class: 'range' },
      'From ',
      h('time', { datetime: since }, localTime(since)),
      ' to ',
      h('time', { datetime: until }, localTime(until)),
    ),
  );
}
