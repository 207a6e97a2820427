import { api, enc } from '../api.js';
import type { Series } from '../chart.js';
import { fill, h } from '../dom.js';
import { canEdit, type WhoAmI } from '../session.js';
import { decisionsLog } from './decisions.js';
import { quotasNow } from './quotas.js';
import { rangeQuery, type RangeRoute, type Span, spanOf } from './range.js';
import { reservationsTable } from './reservations.js';
import { usageSection } from './usage-chart.js';
import { whatIfBox } from './what-if-box.js';

/** A namespace's page at a range (`#/ns/NAME?range=day&until=…`). */
export interface NamespaceRoute extends RangeRoute {
  readonly namespace: string;
}

/** The page's address for a namespace at a range: the zoom and position survive a reload and can be shared. */
export function namespaceHref(route: NamespaceRoute): string {
  return `#/ns/${enc(route.namespace)}?${rangeQuery(route)}`;
}

/** One namespace: its quotas now, usage over a range, the reservations, the decisions and the what-if box. */
export function namespaceView(main: HTMLElement, who: WhoAmI, route: NamespaceRoute): void {
  const { namespace } = route;
  const span = spanOf(route);
  const { since, until } = span;
  const series = (s: Span) => api<Series>('GET', `/v1/namespaces/${enc(namespace)}/usage/series?since=${enc(s.since)}&until=${enc(s.until)}&points=${s.points}`);

  fill(
    main,
    h('p', {}, h('a', { href: '#/' }, '← All namespaces')),
    h('h1', {}, namespace),
    h('section', { 'aria-labelledby': 'h-quotas' }, h('h2', { id: 'h-quotas' }, 'Quotas now'), quotasNow(namespace, canEdit(who), () => namespaceView(main, who, route))),
    usageSection(route, span, (range) => namespaceHref({ namespace, ...range }), series),
    h('section', { 'aria-labelledby': 'h-reservations' }, h('h2', { id: 'h-reservations' }, 'Reservations'), reservationsTable(namespace)),
    h('section', { 'aria-labelledby': 'h-decisions' }, h('h2', { id: 'h-decisions' }, 'Decisions in this range'), decisionsLog(namespace, since, until)),
    h('section', { 'aria-labelledby': 'h-what-if' }, h('h2', { id: 'h-what-if' }, 'What if?'), whatIfBox(namespace)),
  );
}
