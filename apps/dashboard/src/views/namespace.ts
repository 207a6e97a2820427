import { api, enc } from '../api.js';
import type { Series } from '../chart.js';
import { fill, h } from '../dom.js';
import { canEdit, type WhoAmI } from '../session.js';
import { decisionsLog } from './decisions.js';
import { historyTable, limitChanges } from './history.js';
import type { Instant } from './instant.js';
import { queueTable } from './queue.js';
import { quotasNow } from './quotas.js';
import { rangeQuery, type RangeRoute, type Span, spanOf } from './range.js';
import { reservationsTable } from './reservations.js';
import { tabs } from './tabs.js';
import { usageSection } from './usage-chart.js';
import { whatIfBox } from './what-if-box.js';

/** The views of a namespace's page, one tab each; its quotas now by default. */
export const NAMESPACE_TABS = ['quotas', 'usage', 'changes', 'reservations', 'queue', 'decisions', 'what-if'] as const;
export type NamespaceTab = (typeof NAMESPACE_TABS)[number];

/** The tab an address names (`tab=`); the quotas for none or one the page does not have. */
export function namespaceTab(value: string | null | undefined): NamespaceTab {
  return (NAMESPACE_TABS as readonly string[]).includes(value ?? '') ? (value as NamespaceTab) : 'quotas';
}

/** A namespace's page at a range, on a tab (`#/ns/NAME?tab=decisions&range=all&until=…&at=…`). */
export interface NamespaceRoute extends RangeRoute {
  readonly namespace: string;
  readonly tab?: NamespaceTab;
}

/** The page's address for a namespace at a range and tab: the zoom, position, instant and tab survive a reload and can be shared. */
export function namespaceHref(route: NamespaceRoute): string {
  const tab = route.tab && route.tab !== 'quotas' ? `tab=${enc(route.tab)}&` : '';
  return `#/ns/${enc(route.namespace)}?${tab}${rangeQuery(route)}`;
}

interface Usage {
  readonly version: number;
  readonly quotas: readonly { readonly name: string; readonly hard: Record<string, string>; readonly used: Record<string, string> }[];
}

/** What the range's sections share once the range is known: its span and the usage series over it. */
interface Loaded {
  readonly span: Span;
  readonly series: Promise<Series>;
}

/**
 * One namespace, as tabs (each view a screen or two): its quotas now; their usage over a range
 * (the whole history by default, which needs its first event first); the range's limit changes
 * and denials with each quota's history; the reservations; the queue of those waiting for room; the decisions in the range; the
 * what-if box. The address keeps the tab. The range is read once for the tabs that show it.
 */
export function namespaceView(main: HTMLElement, who: WhoAmI, route: NamespaceRoute): void {
  const { namespace } = route;
  const base = `/v1/namespaces/${enc(namespace)}`;
  let current: NamespaceTab = route.tab ?? 'quotas';
  const loaded = loadRange(base, route);
  const loading = (): HTMLElement => h('p', { class: 'status', role: 'status' }, 'Loading…');
  // A part of the range: "Loading…" until the range is known, then itself.
  const ranged = (build: (range: Loaded) => Node): Node => {
    const slot = h('div', {}, loading());
    void loaded.then((range) => slot.isConnected && slot.replaceChildren(build(range)));
    return slot;
  };
  const section = (id: string, title: string, ...content: Node[]): HTMLElement =>
    h('section', { 'aria-labelledby': id }, h('h2', { id }, title), ...content);
  // The charts' section lists the range's markers on the Changes tab.
  const markers = h('div', {}, loading());
  const usage = ranged(({ span, series }) =>
    usageSection({
      route,
      span,
      // The range's links (zoom, pan, a "+n" of denials) are on the Usage tab, and lead back to it.
      href: (range) => namespaceHref({ namespace, tab: 'usage', ...range }),
      series,
      changes: (drawn) => limitChanges(drawn, (quota) => `${base}/resourcequotas/${enc(quota)}`),
      instant: async (at: string): Promise<Instant> => {
        const then = await api<Usage>('GET', `${base}/usage?at=${enc(at)}`);
        return { at, version: then.version, quotas: then.quotas };
      },
      // The address keeps the instant (shareable) without reloading the page.
      onInstant: (at) => history.replaceState(null, '', namespaceHref({ ...route, tab: 'usage', at })),
      exportAs: `${namespace} usage`,
      markersInto: markers,
    }),
  );
  const quotas = quotasNow(namespace, canEdit(who), () => namespaceView(main, who, { ...route, tab: current }));
  fill(
    main,
    h('p', {}, h('a', { href: '#/' }, '← All namespaces')),
    h('h1', {}, namespace),
    tabs<NamespaceTab>(
      `Views of ${namespace}`,
      [
        { id: 'quotas', label: 'Quotas now', panel: section('h-quotas', 'Quotas now', quotas) },
        { id: 'usage', label: 'Usage', panel: usage },
        {
          id: 'changes',
          label: 'Changes',
          panel: h(
            'div',
            {},
            section('h-markers', 'Limit changes and denials in this range', markers),
            section(
              'h-history',
              'Quota history',
              ranged(({ series }) => quotaHistory(base, series)),
            ),
          ),
        },
        { id: 'reservations', label: 'Reservations', panel: section('h-reservations', 'Reservations', reservationsTable(namespace)) },
        { id: 'queue', label: 'Queue', panel: section('h-queue', 'Waiting for room', queueTable(namespace)) },
        {
          id: 'decisions',
          label: 'Decisions',
          panel: section(
            'h-decisions',
            'Decisions in this range',
            ranged(({ span }) => decisionsLog(namespace, span.since, span.until)),
          ),
        },
        { id: 'what-if', label: 'What if?', panel: section('h-what-if', 'What if?', whatIfBox(namespace)) },
      ],
      current,
      (tab) => {
        current = tab;
        // The address keeps the tab (a reload or a shared link opens it) without reloading the page.
        history.replaceState(null, '', namespaceHref({ ...route, tab }));
      },
    ),
  );
}

/** The range's span (the whole history from its first event, when asked for it) and the usage series over it, asked for once. */
async function loadRange(base: string, route: RangeRoute): Promise<Loaded> {
  const fitting = route.range === 'all' && !(route.since && route.until);
  // The whole history starts at its first event (the oldest retained one); without it, a day.
  const first = fitting
    ? await api<{ items: { time: string }[] }>('GET', `${base}/events?limit=1`).then(
        (page) => page.items[0]?.time,
        () => undefined,
      )
    : undefined;
  const span = spanOf(route, first);
  return {
    span,
    series: api<Series>('GET', `${base}/usage/series?since=${enc(span.since)}&until=${enc(span.until)}&points=${span.points}`),
  };
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
      ...[...names]
        .sort()
        .map((name) =>
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
