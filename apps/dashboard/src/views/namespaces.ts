import { enc } from '../api.js';
import { type CoveringQuota, coveringPlace } from '../cluster-quota.js';
import { fill, h } from '../dom.js';
import type { WhoAmI } from '../session.js';
import { usageBar } from './bar.js';
import { pager } from './pager.js';
import { sectionsNav } from './sections.js';

interface NamespaceSummary {
  readonly namespace: string;
  readonly version: number;
  readonly quotas: readonly { readonly name: string; readonly hard: Record<string, string>; readonly used: Record<string, string> }[];
  readonly tightest?: { readonly quota: string; readonly resource: string; readonly ratio: number };
  /** The shared quotas covering it: a namespace without a ResourceQuota of its own may still be limited by them. */
  readonly shared?: readonly CoveringQuota[];
}

const PAGE = 50;
const SEARCH_DEBOUNCE_MS = 200;

/** Every namespace with its tightest quota as a bar, searchable by name, paged. */
export function namespacesView(main: HTMLElement, who: WhoAmI): void {
  const search = h('input', {
    id: 'ns-search',
    type: 'search',
    placeholder: 'part of a name',
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-controls': 'ns-list',
  });
  const list = h('tbody');
  const footer = h('div');
  fill(
    main,
    sectionsNav('namespaces', who),
    h('h1', {}, 'Namespaces'),
    h('p', { class: 'lede' }, 'Each namespace with its tightest quota: the resource closest to its hard limit, as admission sees it now.'),
    h('div', { class: 'search' }, h('label', { for: 'ns-search' }, 'Find a namespace'), search),
    h(
      'table',
      { id: 'ns-list', class: 'list stack' },
      h('caption', { class: 'visually-hidden' }, 'Namespaces and their tightest quota'),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col' }, 'Namespace'),
          h('th', { scope: 'col' }, 'Tightest quota'),
          h('th', { scope: 'col' }, 'Used / hard'),
        ),
      ),
      list,
    ),
    footer,
  );

  if (who.namespaces !== '*') {
    // A namespace-scoped token cannot list the cluster; it can open its own namespaces.
    search.disabled = true;
    fill(
      list,
      ...who.namespaces.map((ns) =>
        h(
          'tr',
          {},
          h('td', { 'data-label': 'Namespace' }, h('a', { href: `#/ns/${enc(ns)}` }, ns)),
          h('td', { 'data-label': 'Tightest quota' }, '—'),
          h('td', { 'data-label': '' }, ''),
        ),
      ),
    );
    fill(footer, h('p', { class: 'status', role: 'status' }, 'This token is limited to these namespaces.'));
    return;
  }

  const { more, status, reload } = pager<NamespaceSummary>(list, {
    path: (after) => {
      const contains = search.value.trim();
      return `/v1/namespaces?limit=${PAGE}${contains ? `&contains=${enc(contains)}` : ''}${after ? `&after=${enc(after)}` : ''}`;
    },
    row,
    summary: (shown, hasMore) => {
      const contains = search.value.trim();
      if (shown === 0) return contains ? `No namespace contains “${contains}”.` : 'No namespace has a quota or limit range yet.';
      return `${shown}${hasMore ? '+' : ''} namespace${shown === 1 ? '' : 's'}.`;
    },
  });
  fill(footer, more, status);
  let timer: ReturnType<typeof setTimeout> | undefined;
  search.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(reload, SEARCH_DEBOUNCE_MS);
  });
}

function row(summary: NamespaceSummary): HTMLTableRowElement {
  const link = h('a', { href: `#/ns/${enc(summary.namespace)}` }, summary.namespace);
  const tightest = summary.tightest;
  if (!tightest) {
    const shared = summary.shared ?? [];
    // Limited only by shared quotas: named, each a link to where it is shown; "no quota" only when nothing limits it.
    const cell =
      shared.length === 0
        ? h('td', { class: 'muted', 'data-label': 'Tightest quota' }, 'no quota')
        : h(
            'td',
            { class: 'covered', 'data-label': 'Tightest quota' },
            'covered by ',
            ...shared.flatMap((q, i) => [i > 0 ? ', ' : '', h('a', { href: coveringPlace(q).href }, coveringPlace(q).label)]),
          );
    return h(
      'tr',
      { 'data-namespace': summary.namespace },
      h('td', { 'data-label': 'Namespace' }, link),
      cell,
      h('td', { 'data-label': '' }, ''),
    );
  }
  const quota = summary.quotas.find((q) => q.name === tightest.quota);
  const used = quota?.used[tightest.resource] ?? '0';
  const hard = quota?.hard[tightest.resource] ?? '?';
  return h(
    'tr',
    { 'data-namespace': summary.namespace },
    h('td', { 'data-label': 'Namespace' }, link),
    h('td', { 'data-label': 'Tightest quota' }, `${tightest.quota} · ${tightest.resource}`),
    h(
      'td',
      { 'data-label': 'Used / hard' },
      usageBar(tightest.ratio, used, hard, `${summary.namespace}: ${tightest.resource} in quota ${tightest.quota}`),
    ),
  );
}
