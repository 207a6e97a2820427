import { api, type ApiError, enc } from '../api.js';
import { sharedSeries, type SharedSeries } from '../chart.js';
import { changeSummary, changeType, type ClusterResourceQuota, type QuotaChange, selectorSummary, share } from '../cluster-quota.js';
import { fill, h } from '../dom.js';
import { localTime, usageRatio, who } from '../format.js';
import { usageBar } from './bar.js';
import { clusterQuotaHref } from './cluster-quotas.js';
import { pager } from './pager.js';
import { type RangeRoute, type Span, spanOf } from './range.js';
import { usageSection } from './usage-chart.js';

const HISTORY_PAGE = 50;

/**
 * One cluster quota: its total used/hard, its usage over a range (as a namespace's page charts
 * its quotas), each namespace's part of it, and how its definition changed.
 */
export async function clusterQuotaView(main: HTMLElement, name: string, route: RangeRoute): Promise<void> {
  const back = h('p', {}, h('a', { href: '#/clusterresourcequotas' }, '← All cluster quotas'));
  fill(main, back, h('p', { class: 'status', role: 'status' }, 'Loading…'));
  let quota: ClusterResourceQuota;
  try {
    quota = await api<ClusterResourceQuota>('GET', `/v1/clusterresourcequotas/${enc(name)}`);
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
  const series = async (s: Span) => sharedSeries(await api<SharedSeries>('GET', `/v1/clusterresourcequotas/${enc(name)}/usage/series?since=${enc(s.since)}&until=${enc(s.until)}&points=${s.points}`), name);
  fill(
    main,
    back,
    h('h1', {}, name),
    h('p', { class: 'lede' }, 'A ClusterResourceQuota: one set of hard limits shared by every namespace its selector picks.'),
    h('dl', { class: 'facts' }, ...facts.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
    h(
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
            h('tbody', {}, ...Object.entries(hard).map(([resource, limit]) => h('tr', { 'data-resource': resource }, h('td', {}, resource), h('td', {}, usageBar(usageRatio(used[resource], limit), used[resource] ?? '0', limit, `${resource} in cluster quota ${name}`))))),
          ),
    ),
    usageSection(route, spanOf(route), (range) => clusterQuotaHref(name, range), series),
    h('section', { 'aria-labelledby': 'h-namespaces' }, h('h2', { id: 'h-namespaces' }, 'Namespaces'), namespacesTable(quota)),
    h('section', { 'aria-labelledby': 'h-history' }, h('h2', { id: 'h-history' }, 'History'), historyTable(name)),
  );
}

/** Each namespace the selector picks: what it uses of each resource, and its share of the total use. */
function namespacesTable(quota: ClusterResourceQuota): HTMLElement {
  const { hard, used } = quota.status.total;
  const resources = Object.keys(hard);
  if (quota.status.namespaces.length === 0) return h('p', { class: 'muted', id: 'crq-namespaces' }, 'The selector picks no namespace yet.');
  return h(
    'table',
    { id: 'crq-namespaces', class: 'list' },
    h('caption', {}, 'Used per resource, and (in brackets) its share of what all the namespaces use'),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Namespace'), ...resources.map((resource) => h('th', { scope: 'col' }, resource)))),
    h(
      'tbody',
      {},
      ...quota.status.namespaces.map((n) =>
        h(
          'tr',
          { 'data-namespace': n.namespace },
          h('td', {}, h('a', { href: `#/ns/${enc(n.namespace)}` }, n.namespace)),
          ...resources.map((resource) => h('td', { 'data-resource': resource }, n.status.used[resource] ?? '0', ' ', h('span', { class: 'muted' }, `(${share(n.status.used[resource], used[resource])})`))),
        ),
      ),
    ),
    h('tfoot', {}, h('tr', {}, h('th', { scope: 'row' }, 'All namespaces'), ...resources.map((resource) => h('td', { 'data-resource': resource }, `${used[resource] ?? '0'} of ${hard[resource]}`)))),
  );
}

/** The definition's changes as the API pages them (oldest first): type, actor, time and what changed. */
function historyTable(name: string): HTMLElement {
  const body = h('tbody');
  const { more, status } = pager<QuotaChange>(body, {
    path: (after) => `/v1/clusterresourcequotas/${enc(name)}/history?limit=${HISTORY_PAGE}${after ? `&after=${enc(after)}` : ''}`,
    row: (c) =>
      h(
        'tr',
        { 'data-position': c.position },
        h('td', {}, h('time', { datetime: c.time }, localTime(c.time))),
        h('td', {}, changeType(c.type)),
        h('td', {}, who(c.actor, c.onBehalfOf)),
        h('td', {}, ...changeSummary(c).map((line) => h('div', {}, line))),
      ),
    summary: (shown) => (shown === 0 ? 'No change recorded.' : ''),
    moreLabel: 'Show later changes',
  });
  return h(
    'div',
    {},
    h('table', { class: 'list', id: 'crq-history' }, h('caption', { class: 'visually-hidden' }, 'Changes to its definition, oldest first'), h('thead', {}, h('tr', {}, ...['Time', 'Change', 'By', 'What changed'].map((t) => h('th', { scope: 'col' }, t)))), body),
    more,
    status,
  );
}
