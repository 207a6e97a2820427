import { enc } from '../api.js';
import { pager } from './pager.js';
import { h } from '../dom.js';
import { age, localTime, resourceList, who } from '../format.js';

interface Reservation {
  readonly id: string;
  readonly state: 'reserved' | 'committed' | 'released';
  readonly operation: string;
  readonly object: {
    readonly group: string;
    readonly resource: string;
    readonly kind?: string;
    readonly name?: string;
    readonly uid?: string;
  };
  readonly charged: Record<string, string>;
  readonly reservedAt: string;
  readonly expiresAt?: string;
  readonly requester?: string;
  readonly onBehalfOf?: string;
}

/** Rows per page: a screen or two of them (on a narrow screen each row is a card of several lines). */
const PAGE = (): number => (matchMedia('(max-width: 640px)').matches ? 6 : 20);

/** Reservations by state, oldest first (the oldest uncommitted one is the one to look at). */
export function reservationsTable(namespace: string): HTMLElement {
  const state = h(
    'select',
    { id: 'reservation-state' },
    h('option', { value: 'reserved', selected: true }, 'reserved, not yet committed'),
    h('option', { value: 'committed' }, 'committed'),
    h('option', { value: 'released' }, 'released'),
    h('option', { value: '' }, 'all'),
  );
  const body = h('tbody');
  const { more, status, reload } = pager<Reservation>(body, {
    path: (after) =>
      `/v1/namespaces/${enc(namespace)}/reservations?limit=${PAGE()}${state.value ? `&state=${state.value}` : ''}${after ? `&after=${enc(after)}` : ''}`,
    row: (r) => row(r, Date.now()),
    summary: (shown) => (shown === 0 ? (state.value ? `No ${state.value} reservations.` : 'No reservations.') : ''),
  });
  state.addEventListener('change', reload);
  return h(
    'div',
    {},
    h('label', { for: 'reservation-state' }, 'State '),
    state,
    h(
      'table',
      { class: 'list stack', id: 'reservations' },
      h('caption', { class: 'visually-hidden' }, 'Reservations, oldest first'),
      h(
        'thead',
        {},
        h('tr', {}, ...['Object', 'State', 'Age', 'Requester', 'Charged', 'Expires'].map((t) => h('th', { scope: 'col' }, t))),
      ),
      body,
    ),
    more,
    status,
  );
}

function row(r: Reservation, now: number): HTMLTableRowElement {
  const object = `${r.object.kind ?? r.object.resource}${r.object.name ? ` ${r.object.name}` : ''}`;
  return h(
    'tr',
    { 'data-reservation': r.id },
    // The object's kind and name on one line ("Pod hook-1", never "Pod hook-" over "1"); its uid may break.
    h(
      'td',
      { 'data-label': 'Object', class: 'object' },
      h('span', { class: 'nowrap' }, object),
      r.object.uid ? h('div', { class: 'muted small uid' }, r.object.uid) : null,
    ),
    h('td', { 'data-label': 'State' }, r.state, r.operation === 'ADOPT' ? h('span', { class: 'badge' }, 'adopted') : null),
    h(
      'td',
      { 'data-label': 'Age', class: 'nowrap' },
      h('time', { datetime: r.reservedAt, title: localTime(r.reservedAt) }, age(r.reservedAt, now)),
    ),
    h('td', { 'data-label': 'Requester', class: 'nowrap' }, who(r.requester, r.onBehalfOf)),
    h('td', { 'data-label': 'Charged' }, resourceList(r.charged)),
    h('td', { 'data-label': 'Expires' }, r.expiresAt ? h('time', { datetime: r.expiresAt }, localTime(r.expiresAt)) : '—'),
  );
}
