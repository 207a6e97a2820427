import { api, type ApiError, enc } from '../api.js';
import { sharedSeries, type SharedSeries } from '../chart.js';
import { type ClusterResourceQuota, type QuotaChange, selectorSummary, share } from '../cluster-quota.js';
import { fill, h } from '../dom.js';
import { localTime, usageRatio } from '../format.js';
import { usageBar } from './bar.js';
import { clusterQuotaHref } from './cluster-quotas.js';
import { historyTable, limitChanges } from './history.js';
import { sharedQueueTable } from './queue.js';
import type { Instant } from './instant.js';
import { type RangeRoute, spanOf } from './range.js';
import { usageSection } from './usage-chart.js';

/** A cluster quota as it stood at an instant (`GET …/usage?at=`). */
interface SharedInstant {
  readonly at: string;
  readonly version: number;
  readonly defined: boolean;
  readonly hard: Record<string, string>;
  readonly used: Record<string, string>;
  readonly namespaces: readonly { readonly namespace: string; readonly used: Record<string, string> }[];
}

/**
 * One cluster quota: its total used/hard, its usage over a range (as a namespace's page charts
 * its quotas), each namespace's part of it, the reservations waiting for its room, and how its
 * definition changed.
 */
export async function clusterQuotaView(main: HTMLElement, name: string, route: RangeRoute): Promise<void> {
  const back = h('p', {}, h('a', { href: '#/clusterresourcequotas' }, '← All cluster quotas'));
  fill(main, back, h('p', { class: 'status', role: 'status' }, 'Loading…'));
  const base = `/v1/clusterresourcequotas/${enc(name)}`;
  let quota: ClusterResourceQuota;
  let first: string | undefined;
  try {
    // Its first change is where the whole history (the default range) starts.
    const [object, history] = await Promise.all([
      api<ClusterResourceQuota>('GET', base),
      api<{ items: QuotaChange[] }>('GET', `${base}/history?limit=1`).catch(() => ({ items: [] })),
    ]);
    quota = object;
    first = history.items[0]?.time;
  } catch (error) {
    fill(main, back, h('h1', {}, name), h('p', { class: 'error', role: 'alert' }, (error as ApiError).message));
    return;
  }
  const { hard, used } = quota.status.total;
  const created = quota.metadata.creationTimestamp;
  const facts: [string, Node | string][] = [
    ['Selects', h('code', {}, selectorSummary(quota.spec.selector))],
    ['Namespaces', String(quota.status.namespaces.length)],
    ...(created ? ([['Created', h('time', { datetime: created }, localTime(created))]] as [string, Node][]) : []),
    ...(quota.metadata.resourceVersion ? ([['Version', quota.metadata.resourceVersion]] as [string, string][]) : []),
  ];
  // The same charts as a namespace's, of one quota named after it (its limit changes name it so).
  const span = spanOf(route, first);
  const series = api<SharedSeries>(
    'GET',
    `${base}/usage/series?since=${enc(span.since)}&until=${enc(span.until)}&points=${span.points}`,
  ).then((answer) => sharedSeries(answer, name));
  const instant = async (at: string): Promise<Instant> => {
    const then = await api<SharedInstant>('GET', `${base}/usage?at=${enc(at)}`);
    return { at, version: then.version, quotas: then.defined ? [{ name, hard: then.hard, used: then.used }] : [], parts: then.namespaces };
  };
  fill(
    main,
    back,
    h('h1', {}, name),
    h('p', { class: 'lede' }, 'A ClusterResourceQuota: one set of hard limits shared by every namespace its selector picks.'),
    h('dl', { class: 'facts' }, ...facts.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
    totalSection(name, hard, used),
    usageSection({
      route,
      span,
      href: (range) => clusterQuotaHref(name, range),
      series,
      changes: (loaded) => limitChanges(loaded, () => base),
      instant,
      onInstant: (at) => history.replaceState(null, '', clusterQuotaHref(name, { ...route, at })),
      exportAs: `${name} usage`,
    }),
    h('section', { 'aria-labelledby': 'h-namespaces' }, h('h2', { id: 'h-namespaces' }, 'Namespaces'), namespacesTable(quota)),
    h(
      'section',
      { 'aria-labelledby': 'h-queue' },
      h('h2', { id: 'h-queue' }, 'Waiting for room'),
      sharedQueueTable(`${base}/queue`, name, 'crq-queue'),
    ),
    h(
      'section',
      { 'aria-labelledby': 'h-history' },
      h('h2', { id: 'h-history' }, 'History'),
      historyTable(base, 'crq-history', 'Changes to its definition, oldest first'),
    ),
  );
}

/** Its total used/hard per resource, over all its namespaces. */
function totalSection(name: string, hard: Readonly<Record<string, string>>, used: Readonly<Record<string, string>>): HTMLElement {
  return h(
    'section',
    { 'aria-labelledby': 'h-total' },
    h('h2', { id: 'h-total' }, 'Total now'),
    Object.keys(hard).length === 0
      ? h('p', { class: 'muted' }, 'No hard limits.')
      : h(
          'table',
          { id: 'crq-total', class: 'list' },
          h('caption', { class: 'visually-hidden' }, 'Used and hard per resource, over all its namespaces'),
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Resource'), h('th', { scope: 'col' }, 'Used / hard'))),
          h(
            'tbody',
            {},
            ...Object.entries(hard).map(([resource, limit]) =>
              h(
                'tr',
                { 'data-resource': resource },
                h('td', { 'data-label': 'Resource' }, resource),
                h(
                  'td',
                  { 'data-label': 'Used / hard' },
                  usageBar(usageRatio(used[resource], limit), used[resource] ?? '0', limit, `${resource} in cluster quota ${name}`),
                ),
              ),
            ),
          ),
        ),
  );
}

/** Each namespace the selector picks: what it uses of each resource, and its share of the total use. */
function namespacesTable(quota: ClusterResourceQuota): HTMLElement {
  const { hard, used } = quota.status.total;
  const resources = Object.keys(hard);
  if (quota.status.namespaces.length === 0) return h('p', { class: 'muted', id: 'crq-namespaces' }, 'The selector picks no namespace yet.');
  return h(
    'table',
    { id: 'crq-namespaces', class: 'list stack' },
    h('caption', {}, 'Used per resource, and (in brackets) its share of what all the namespaces use'),
    h(
      'thead',
      {},
      h('tr', {}, h('th', { scope: 'col' }, 'Namespace'), ...resources.map((resource) => h('th', { scope: 'col' }, resource))),
    ),
    h(
      'tbody',
      {},
      ...quota.status.namespaces.map((n) =>
        h(
          'tr',
          { 'data-namespace': n.namespace },
          h('td', { 'data-label': 'Namespace' }, h('a', { href: `#/ns/${enc(n.namespace)}` }, n.namespace)),
          ...resources.map((resource) =>
            h(
              'td',
              { 'data-resource': resource, 'data-label': resource },
              n.status.used[resource] ?? '0',
              ' ',
              h('span', { class: 'muted' }, `(${share(n.status.used[resource], used[resource])})`),
            ),
          ),
        ),
      ),
    ),
    h(
      'tfoot',
      {},
      h(
        'tr',
        {},
        h('th', { scope: 'row' }, 'All namespaces'),
        ...resources.map((resource) =>
          h('td', { 'data-resource': resource, 'data-label': resource }, `${used[resource] ?? '0'} of ${hard[resource]}`),
        ),
      ),
    ),
  );
}
