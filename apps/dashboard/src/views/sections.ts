import { h } from '../dom.js';
import type { WhoAmI } from '../session.js';

export type Section = 'namespaces' | 'clusterresourcequotas';

/**
 * The two lists, linked above each: namespaces and cluster quotas. A token limited to some
 * namespaces cannot read the cluster-scoped quotas, so it is shown no link to them.
 */
export function sectionsNav(current: Section, who: WhoAmI): HTMLElement | null {
  if (who.namespaces !== '*') return null;
  const link = (section: Section, href: string, text: string) =>
    h('a', { href, 'aria-current': section === current ? 'page' : undefined }, text);
  return h(
    'nav',
    { class: 'sections', 'aria-label': 'Lists' },
    link('namespaces', '#/', 'Namespaces'),
    link('clusterresourcequotas', '#/clusterresourcequotas', 'Cluster quotas'),
  );
}
