import { api, ApiError, enc } from '../api.js';
import { fill, h } from '../dom.js';
import type { WhoAmI } from '../session.js';
import { usageBar } from './bar.js';

interface NamespaceSummary {
  readonly namespace: string;
  readonly version: number;
  readonly quotas: readonly { readonly name: string; readonly hard: Record<string, string>; readonly used: Record<string, string> }[];
  readonly tightest?: { readonly quota: string; readonly resource: string; readonly ratio: number };
}

const PAGE = 50;
const SEARCH_DEBOUNCE_MS = 200;

/** Every namespace with its tightest quota as a bar, searchable by name, paged. */
export function namespacesView(main: HTMLElement, who: WhoAmI): void {
  const search = h('input', { id: 'ns-search', type: 'search', placeholder: 'part of a name', autocomplete: 'off', spellcheck: 'false', 'aria-controls': 'ns-list' });
  const status = h('p', { class: 'status', role: 'status' });
  const list = h('tbody');
  const more = h('button', { type: 'button', class: 'more', hidden: true }, 'Show more');
  fill(
    main,
    h('h1', {}, 'Namespaces'),
    h('p', { class: 'lede' }, 'Each namespace with its tightest quota: the resource closest to its hard limit, as admission sees it now.'),
    h('div', { class: 'search' }, h('label', { for: 'ns-search' }, 'Find a namespace'), search),
    h('table', { id: 'ns-list', class: 'list' }, h('caption', { class: 'visually-hidden' }, 'Namespaces and their tightest quota'), h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Namespace'), h('th', { scope: 'col' }, 'Tightest quota'), h('th', { scope: 'col' }, 'Used / hard'))), list),
    more,
    status,
  );

  if (who.namespaces !== '*') {
    // A namespace-scoped token cannot list the cluster; it can open its own namespaces.
    search.disabled = true;
    fill(list, ...who.namespaces.map((ns) => h('tr', {}, h('td', {}, h('a', { href: `#/ns/${enc(ns)}` }, ns)), h('td', {}, '—'), h('td', {}, ''))));
    status.textContent = 'This token is limited to these namespaces.';
    return;
  }

  let generation = 0;
  let next: string | undefined;
  const load = async (append: boolean): Promise<void> => {
    const mine = ++generation;
    const contains = search.value.trim();
    status.textContent = 'Loading…';
    try {
      const page = await api<{ items: NamespaceSummary[]; next?: string }>(
        'GET',
        `/v1/namespaces?limit=${PAGE}${contains ? `&contains=${enc(contains)}` : ''}${append && next ? `&after=${enc(next)}` : ''}`,
      );
      if (mine !== generation) return; // a newer search has started
      next = page.next;
      const rows = page.items.map(row);
      if (append) list.append(...rows);
      else fill(list, ...rows);
      more.hidden = next === undefined;
      const shown = list.children.length;
      status.textContent = shown === 0 ? (contains ? `No namespace contains “${contains}”.` : 'No namespace has a quota or limit range yet.') : `${shown}${next ? '+' : ''} namespace${shown === 1 ? '' : 's'}.`;
    } catch (error) {
      if (mine === generation) status.textContent = (error as ApiError).message;
    }
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  search.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => void load(false), SEARCH_DEBOUNCE_MS);
  });
  more.addEventListener('click', () => void load(true));
  void load(false);
}

function row(summary: NamespaceSummary): HTMLTableRowElement {
  const link = h('a', { href: `#/ns/${enc(summary.namespace)}` }, summary.namespace);
  const tightest = summary.tightest;
  if (!tightest) return h('tr', { 'data-namespace': summary.namespace }, h('td', {}, link), h('td', { class: 'muted' }, 'no quota'), h('td', {}, ''));
  const quota = summary.quotas.find((q) => q.name === tightest.quota);
  const used = quota?.used[tightest.resource] ?? '0';
  const hard = quota?.hard[tightest.resource] ?? '?';
  return h(
    'tr',
    { 'data-namespace': summary.namespace },
    h('td', {}, link),
    h('td', {}, `${tightest.quota} · ${tightest.resource}`),
    h('td', {}, usageBar(tightest.ratio, used, hard, `${summary.namespace}: ${tightest.resource} in quota ${tightest.quota}`)),
  );
}
