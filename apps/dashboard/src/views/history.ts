import { api } from '../api.js';
import type { Marker, Series } from '../chart.js';
import { changeSummary, changeType, type QuotaChange } from '../cluster-quota.js';
import { h } from '../dom.js';
import { localTime, who } from '../format.js';
import { pager } from './pager.js';
import { limitKey, type LimitChanges } from './usage-chart.js';

const HISTORY_PAGE = 50;
/** A history read to explain a chart's limit markers: pages of this many changes... */
const CHANGES_PAGE = 1000;
/** ...and at most this many pages per quota (limits change rarely; a marker beyond says only who changed it). */
const CHANGES_PAGES_MAX = 10;

/**
 * A quota's definition changes as the API pages them (`base` is the quota's address; oldest
 * first): time, type, actor, and what changed, before → after, one line a resource.
 */
export function historyTable(base: string, id: string, caption: string): HTMLElement {
  const body = h('tbody');
  const { more, status } = pager<QuotaChange>(body, {
    path: (after) => historyPage(base, HISTORY_PAGE, after),
    row: (c) =>
      h(
        'tr',
        { 'data-position': c.position, 'data-version': c.version },
        h('td', { 'data-label': 'Time' }, h('time', { datetime: c.time }, localTime(c.time))),
        h('td', { 'data-label': 'Change' }, changeType(c.type)),
        h('td', { 'data-label': 'By' }, who(c.actor, c.onBehalfOf)),
        h('td', { 'data-label': 'What changed' }, h('div', { class: 'lines' }, ...changeSummary(c).map((line) => h('div', {}, line)))),
      ),
    summary: (shown) => (shown === 0 ? 'No change recorded.' : ''),
    moreLabel: 'Show later changes',
  });
  return h(
    'div',
    {},
    h(
      'table',
      { class: 'list stack history', id },
      h('caption', { class: 'visually-hidden' }, caption),
      h('thead', {}, h('tr', {}, ...['Time', 'Change', 'By', 'What changed'].map((t) => h('th', { scope: 'col' }, t)))),
      body,
    ),
    more,
    status,
  );
}

/** A page of a quota's history: `GET …/history?limit=&after=`. */
const historyPage = (base: string, limit: number, after: string | undefined): string =>
  `${base}/history?limit=${limit}${after ? `&after=${encodeURIComponent(after)}` : ''}`;

/**
 * The changes behind a series' limit markers, by quota and version: each named quota's history
 * (`base(quota)` is its address), read until it passes the newest marker's version.
 */
export async function limitChanges(series: Series, base: (quota: string) => string): Promise<LimitChanges> {
  const limits = series.markers.filter((m): m is Extract<Marker, { kind: 'limit' }> => m.kind === 'limit');
  const newest = new Map<string, number>();
  for (const m of limits) newest.set(m.quota, Math.max(newest.get(m.quota) ?? 0, m.version));
  const changes = new Map<string, QuotaChange>();
  await Promise.all(
    [...newest].map(async ([quota, version]) => {
      let after: string | undefined;
      for (let page = 0; page < CHANGES_PAGES_MAX; page++) {
        const answer = await api<{ items: QuotaChange[]; next?: string }>('GET', historyPage(base(quota), CHANGES_PAGE, after));
        for (const change of answer.items) changes.set(limitKey(quota, change.version), change);
        const last = answer.items.at(-1);
        if (!answer.next || (last && last.version >= version)) break;
        after = answer.next;
      }
    }),
  );
  return changes;
}
