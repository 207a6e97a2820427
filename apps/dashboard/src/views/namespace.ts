import { api, enc } from '../api.js';
import type { Series } from '../chart.js';
import { fill, h } from '../dom.js';
import { canEdit, type WhoAmI } from '../session.js';
import { decisionsLog } from './decisions.js';
import { historyTable, limitChanges } from './history.js';
import type { Instant } from './instant.js';
import { quotasNow } from './quotas.js';
import { rangeQuery, type RangeRoute, spanOf } from './range.js';
import { reservationsTable } from './reservations.js';
import { usageSection } from './usage-chart.js';
import { whatIfBox } from './what-if-box.js';

/** A namespace's page at a range (`#/ns/NAME?range=all&until=…&at=…`). */
export interface NamespaceRoute extends RangeRoute {
  readonly namespace: string;
}

/** The page's address for a namespace at a range: the zoom, position and instant survive a reload and can be shared. */
export function namespaceHref(route: NamespaceRoute): string {
  return `#/ns/${enc(route.namespace)}?${rangeQuery(route)}`;
}

interface Usage {
  readonly version: number;
  readonly quotas: readonly { readonly name: string; readonly hard: Record<string, string>; readonly used: Record<string, string> }[];
}

/**
 * One namespace: its quotas now, usage over a range (the whole history by default, which needs
 * its first event first), the quotas' history, the reservations, the decisions and the what-if box.
 */
export function namespaceView(main: HTMLElement, who: WhoAmI, route: NamespaceRoute): void {
  const { namespace } = route;
  const base = `/v1/namespaces/${enc(namespace)}`;
  const rest = h('p', { class: 'status', role: 'status' }, 'Loading…');
  fill(
    main,
    h('p', {}, h('a', { href: '#/' }, '← All namespaces')),
    h('h1', {}, namespace),
    h('section', { 'aria-labelledby': 'h-quotas' }, h('h2', { id: 'h-quotas' }, 'Quotas now'), quotasNow(namespace, canEdit(who), () => namespaceView(main, who, route))),
    rest,
  );
  void (async () => {
    const fitting = route.range === 'all' && !(route.since && route.until);
    // The whole history starts at its first event (the oldest retained one); without it, a day.
    const first = fitting ? await api<{ items: { time: string }[] }>('GET', `${base}/events?limit=1`).then((page) => page.items[0]?.time, () => undefined) : undefined;
    // The page moved on while asking: this one is gone.
    if (!rest.isConnected) return;
    const span = spanOf(route, first);
    const { since, until } = span;
    const series = api<Series>('GET', `${base}/usage/series?since=${enc(since)}&until=${enc(until)}&points=${span.points}`);
    const instant = async (at: string): Promise<Instant> => {
      const then = await api<Usage>('GET', `${base}/usage?at=${enc(at)}`);
      return { at, version: then.version, quotas: then.quotas };
    };
    rest.replaceWith(
      usageSection({
        route,
        span,
        href: (range) => namespaceHref({ namespace, ...range }),
        series,
        changes: (loaded) => limitChanges(loaded, (quota) => `${base}/resourcequotas/${enc(quota)}`),
        instant,
        // The address keeps the instant (shareable) without reloading the page.
        onInstant: (at) => history.replaceState(null, '', namespaceHref({ ...route, at })),
        exportAs: `${namespace} usage`,
      }),
      h('section', { 'aria-labelledby': 'h-history' }, h('h2', { id: 'h-history' }, 'Quota history'), quotaHistory(base, series)),
      h('section', { 'aria-labelledby': 'h-reservations' }, h('h2', { id: 'h-reservations' }, 'Reservations'), reservationsTable(namespace)),
      h('section', { 'aria-labelledby': 'h-decisions' }, h('h2', { id: 'h-decisions' }, 'Decisions in this range'), decisionsLog(namespace, since, until)),
      h('section', { 'aria-labelledby': 'h-what-if' }, h('h2', { id: 'h-what-if' }, 'What if?'), whatIfBox(namespace)),
    );
  })();
}

/**
 * Every change of each quota the namespace has now or had in the range (a removed one keeps its
 * history): when, who, and each hard limit before → after.
 */
function quotaHistory(base: string, series: Promise<Series>): HTMLElement {
  const area = h('div', { id: 'quota-history' }, h('p', { class: 'status', role: 'status' }, 'Loading…'));
  void (async () => {
    const [now, drawn] = await Promise.all([api<Usage>('GET', `${base}/usage`).catch(() => undefined), series.catch(() => undefined)]);
    const names = new Set<string>(now?.quotas.map((q) => q.name));
    for (const point of drawn?.points ?? []) for (const quota of point.quotas) names.add(quota.name);
    for (const marker of drawn?.markers ?? []) if (marker.kind === 'limit') names.add(marker.quota);
    if (names.size === 0) {
      fill(area, h('p', { class: 'muted' }, 'No ResourceQuota in this namespace, now or in this range.'));
      return;
    }
    fill(
      area,
      ...[...names].sort().map((name) =>
        h(
          'section',
          { class: 'quota-history', 'data-quota': name, 'aria-labelledby': `history-${name}` },
          h('h3', { id: `history-${name}` }, name),
          historyTable(`${base}/resourcequotas/${enc(name)}`, `history-table-${name}`, `Changes to quota ${name}, oldest first`),
        ),
      ),
    );
  })();
  return area;
}
