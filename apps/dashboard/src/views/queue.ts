import type { NamespaceQueue } from '@quota/api';
import { api, type ApiError, enc } from '../api.js';
import { fill, h } from '../dom.js';
import { localTime } from '../format.js';
import { queueRow, sharedWaiters } from '../queue.js';
import { pager } from './pager.js';

/**
 * The namespace's queue (issue 41): the reservations that asked to wait for room, in the order
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
      h('thead', {}, h('tr', {}, ...['#', 'Object', 'Priority', 'Waiting for', 'Waited', 'Expires'].map((t) => h('th', { scope: 'col' }, t)))),
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
    h('td', { 'data-label': 'Position' }, r.position, r.passed ? h('div', { class: 'muted small', title: 'reservations behind it admitted before it' }, r.passed) : null),
    h('td', { 'data-label': 'Object', class: 'object' }, h('span', { class: 'nowrap' }, r.object), h('div', { class: 'muted small uid' }, r.id)),
    h('td', { 'data-label': 'Priority' }, r.priority),
    h('td', { 'data-label': 'Waiting for' }, ...r.waiting.map((w) => h('div', {}, h('strong', {}, w.quota), w.detail ? `: ${w.detail}` : ''))),
    h('td', { 'data-label': 'Waited', class: 'nowrap' }, item.queuedAt ? h('time', { datetime: item.queuedAt, title: localTime(item.queuedAt) }, r.waited) : r.waited),
    h('td', { 'data-label': 'Expires', class: 'nowrap' }, item.expiresAt ? h('time', { datetime: item.expiresAt, title: localTime(item.expiresAt) }, r.expires) : r.expires),
  );
}

/** The namespaces whose queues a shared quota's page reads, at most (one request each). */
const SHARED_NAMESPACES_MAX = 50;

/**
 * A shared quota's waiters: those of the namespaces it covers whose `waitingFor` names it, by
 * namespace (each namespace's queue read once). Its fair drain serves the namespaces by weighted
 * dominant share, so the order across namespaces is not the order of admission.
 */
export function sharedQueueTable(quota: string, namespaces: readonly string[]): HTMLElement {
  const area = h('div', { id: 'crq-queue' }, h('p', { class: 'status', role: 'status' }, 'Loading…'));
  const read = namespaces.slice(0, SHARED_NAMESPACES_MAX);
  void Promise.all(read.map((namespace) => api<Partial<NamespaceQueue>>('GET', `/v1/namespaces/${enc(namespace)}/queue`).then((queue) => ({ namespace, items: queue.items ?? [] }))))
    .then((queues) => {
      const waiters = sharedWaiters(queues, quota);
      const beyond = namespaces.length > read.length ? ` (the first ${read.length} of its ${namespaces.length} namespaces)` : '';
      if (waiters.length === 0) return fill(area, h('p', { class: 'muted' }, `No reservation is waiting for ${quota}${beyond}.`));
      const now = Date.now();
      fill(
        area,
        h(
          'table',
          { class: 'list stack' },
          h('caption', {}, `Reservations waiting for ${quota}, by namespace, each in its queue's order${beyond}; the fair share decides which namespace is served next`),
          h('thead', {}, h('tr', {}, ...['Namespace', '#', 'Object', 'Priority', 'Waiting for', 'Waited', 'Expires'].map((t) => h('th', { scope: 'col' }, t)))),
          h(
            'tbody',
            {},
            ...waiters.map(({ namespace, item }) => {
              const line = row(item, now);
              line.prepend(h('td', { 'data-label': 'Namespace' }, h('a', { href: `#/ns/${enc(namespace)}?tab=queue` }, namespace)));
              return line;
            }),
          ),
        ),
      );
    })
    .catch((error: ApiError) => fill(area, h('p', { class: 'error', role: 'alert' }, error.message)));
  return area;
}
