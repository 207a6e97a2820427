import { api, type ApiError, enc } from '../api.js';
import { type ClusterResourceQuota, selectorSummary, tightestResource } from '../cluster-quota.js';
import { fill, h } from '../dom.js';
import type { WhoAmI } from '../session.js';
import { usageBar } from './bar.js';
import { rangeQuery, type RangeRoute } from './range.js';
import { sectionsNav } from './sections.js';

/** The address of one cluster quota's page, with its usage chart at a range when one is given. */
export const clusterQuotaHref = (name: string, range?: RangeRoute): string =>
  `#/clusterresourcequotas/${enc(name)}${range ? `?${rangeQuery(range)}` : ''}`;

/** Every ClusterResourceQuota: what its selector picks, how many namespaces, and its tightest resource as a bar. */
export function clusterQuotasView(main: HTMLElement, who: WhoAmI): void {
  const list = h('tbody');
  const status = h('p', { class: 'status', role: 'status' }, 'Loading…');
  fill(
    main,
    sectionsNav('clusterresourcequotas', who),
    h('h1', {}, 'Cluster quotas'),
    h(
      'p',
      { class: 'lede' },
      'Each ClusterResourceQuota: one quota shared by every namespace its selector picks, with its tightest resource across them all, as admission sees it now.',
    ),
    h(
      'table',
      { id: 'crq-list', class: 'list stack' },
      h('caption', { class: 'visually-hidden' }, 'Cluster quotas, their selectors and their tightest resource'),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ...['Cluster quota', 'Selects', 'Namespaces', 'Tightest resource', 'Used / hard'].map((t) => h('th', { scope: 'col' }, t)),
        ),
      ),
      list,
    ),
    status,
  );

  if (who.namespaces !== '*') {
    status.textContent = 'This token is limited to some namespaces; cluster quotas need a token for the whole cluster.';
    return;
  }

  void (async () => {
    try {
      const answer = await api<{ items: ClusterResourceQuota[] }>('GET', '/v1/clusterresourcequotas');
      fill(list, ...answer.items.map(row));
      const n = answer.items.length;
      status.textContent = n === 0 ? 'No ClusterResourceQuota yet.' : `${n} cluster quota${n === 1 ? '' : 's'}.`;
    } catch (error) {
      status.textContent = (error as ApiError).message;
    }
  })();
}

function row(quota: ClusterResourceQuota): HTMLTableRowElement {
  const name = quota.metadata.name;
  const { hard, used } = quota.status.total;
  const tightest = tightestResource(hard, used);
  const count = quota.status.namespaces.length;
  return h(
    'tr',
    { 'data-cluster-quota': name },
    h('td', { 'data-label': 'Cluster quota' }, h('a', { href: clusterQuotaHref(name) }, name)),
    h('td', { 'data-label': 'Selects' }, h('code', {}, selectorSummary(quota.spec.selector))),
    h('td', { 'data-label': 'Namespaces' }, count),
    tightest
      ? h('td', { 'data-label': 'Tightest resource' }, tightest.resource)
      : h('td', { class: 'muted', 'data-label': 'Tightest resource' }, 'no limits'),
    h(
      'td',
      { 'data-label': 'Used / hard' },
      tightest
        ? usageBar(
            tightest.ratio,
            used[tightest.resource] ?? '0',
            hard[tightest.resource] ?? '?',
            `${name}: ${tightest.resource} across ${count} namespace${count === 1 ? '' : 's'}`,
          )
        : '',
    ),
  );
}
