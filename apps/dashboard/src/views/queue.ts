import type { NamespaceQueue, SharedQuotaQueue } from '@quota/api';
import { api, type ApiError, enc } from '../api.js';
import { fill, h } from '../dom.js';
import { localTime } from '../format.js';
import { queueRow, sharedWaiters } from '../queue.js';
import { pager } from './pager.js';

/**
 * The namespace's queue: the reservations that asked to wait for room, in the order
 * they will be admitted (priority, then arrival), each with what it waits for: the quota and
 * its resources that are short, or the blocking reservation ahead of it. "Refresh" reads it again.
 */
export function queueTable(namespace: string): HTMLElement {
  const body = h('tbody');
  const { more, status, reload } = pager<Partial<NamespaceQueue['items'][number]>>(body, {
    path: () => `/v1/namespaces/${enc(namespace)}/queue`,
    row: (item) => row(item, Date.now()),
    summary: (shown) => (shown === 0 ? 'No reservation is waiting.' : `${shown} waiting.`),
  });
  return h(
    'div',
    {},
    h('button', { type: 'button', id: 'queue-refresh', onclick: () => reload() }, 'Refresh'),
    h(
      'table',
      { class: 'list stack', id: 'queue' },
      h('caption', { class: 'visually-hidden' }, 'Reservations waiting for room, in the order they will be admitted'),
      h(
        'thead',
        {},
        h('tr', {}, ...['#', 'Object', 'Priority', 'Waiting for', 'Waited', 'Expires'].map((t) => h('th', { scope: 'col' }, t))),
      ),
      body,
    ),
    more,
    status,
  );
}

function row(item: Partial<NamespaceQueue['items'][number]>, now: number): HTMLTableRowElement {
  const r = queueRow(item, now);
  return h(
    'tr',
    { 'data-reservation': r.id },
    h(
      'td',
      { 'data-label': 'Position' },
      r.position,
      r.passed ? h('div', { class: 'muted small', title: 'reservations behind it admitted before it' }, r.passed) : null,
    ),
    h(
      'td',
      { 'data-label': 'Object', class: 'object' },
      h('span', { class: 'nowrap' }, r.object),
      h('div', { class: 'muted small uid' }, r.id),
    ),
    h('td', { 'data-label': 'Priority' }, r.priority),
    h(
      'td',
      { 'data-label': 'Waiting for' },
      ...r.waiting.map((w) => h('div', {}, h('strong', {}, w.quota), w.detail ? `: ${w.detail}` : '')),
    ),
    h(
      'td',
      { 'data-label': 'Waited', class: 'nowrap' },
      item.queuedAt ? h('time', { datetime: item.queuedAt, title: localTime(item.queuedAt) }, r.waited) : r.waited,
      r.typical ? h('div', { class: 'muted small', title: 'the median and p90 of the waits of recent waiters like it' }, r.typical) : null,
    ),
    h(
      'td',
      { 'data-label': 'Expires', class: 'nowrap' },
      item.expiresAt ? h('time', { datetime: item.expiresAt, title: localTime(item.expiresAt) }, r.expires) : r.expires,
    ),
  );
}

/**
 * A shared quota's waiters (`path`: its `GET …/queue`), one request: the namespaces in the order
 * its fair drain serves them (lowest weighted dominant share first; a weight other than 1 is
 * shown), each namespace's waiters in its queue's order. A token limited to namespaces is told
 * how many waiting namespaces it may not see; one that may not read the quota's queue at all, why.
 */
export function sharedQueueTable(path: string, quota: string, id: string): HTMLElement {
  const area = h('div', { id }, h('p', { class: 'status', role: 'status' }, 'Loading…'));
  void api<Partial<SharedQuotaQueue>>('GET', path)
    .then((queue) => {
      const waiters = sharedWaiters(queue);
      const withheld = queue.namespacesWithheld
        ? h(
            'p',
            { class: 'muted small' },
            `${queue.namespacesWithheld} waiting namespace(s) outside your token's namespaces are not shown.`,
          )
        : null;
      if (waiters.length === 0) return fill(area, h('p', { class: 'muted' }, `No reservation is waiting for ${quota}.`), withheld);
      const now = Date.now();
      fill(
        area,
        h(
          'table',
          { class: 'list stack' },
          h(
            'caption',
            {},
            `Reservations waiting for ${quota}: namespaces in the order its fair share serves them, each in its queue's order`,
          ),
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ...['Namespace', '#', 'Object', 'Priority', 'Waiting for', 'Waited', 'Expires'].map((t) => h('th', { scope: 'col' }, t)),
            ),
          ),
          h(
            'tbody',
            {},
            ...waiters.map(({ namespace, weight, item }) => {
              const line = row(item, now);
              const cell = h('td', { 'data-label': 'Namespace' }, h('a', { href: `#/ns/${enc(namespace)}?tab=queue` }, namespace));
              if (weight !== 1)
                cell.append(h('div', { class: 'muted small', title: 'quota-ledger.io/fair-share-weight' }, `weight ${weight}`));
              line.prepend(cell);
              return line;
            }),
          ),
        ),
        withheld,
      );
    })
    .catch((error: ApiError) => {
      const message =
        error.status === 403 ? `Its waiters are shown to tokens that may read the quota itself (${error.message})` : error.message;
      fill(area, h('p', { class: error.status === 403 ? 'muted' : 'error', role: 'alert' }, message));
    });
  return area;
}
