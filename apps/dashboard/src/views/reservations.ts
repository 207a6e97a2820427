import { api, ApiError, enc } from '../api.js';
import { fill, h } from '../dom.js';
import { age, localTime, resourceList } from '../format.js';

interface Reservation {
  readonly id: string;
  readonly state: 'reserved' | 'committed' | 'released';
  readonly operation: string;
  readonly object: { readonly group: string; readonly resource: string; readonly kind?: string; readonly name?: string; readonly uid?: string };
  readonly charged: Record<string, string>;
  readonly reservedAt: string;
  readonly expiresAt?: string;
  readonly requester?: string;
}

const PAGE = 100;

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
  const status = h('p', { class: 'status', role: 'status' });
  const more = h('button', { type: 'button', class: 'more', hidden: true }, 'Show more');
  let next: string | undefined;
  let generation = 0;
  const load = async (append: boolean): Promise<void> => {
    const mine = ++generation;
    status.textContent = 'Loading…';
    try {
      const page = await api<{ items: Reservation[]; next?: string }>(
        'GET',
        `/v1/namespaces/${enc(namespace)}/reservations?limit=${PAGE}${state.value ? `&state=${state.value}` : ''}${append && next ? `&after=${enc(next)}` : ''}`,
      );
      if (mine !== generation) return;
      next = page.next;
      const now = Date.now();
      const rows = page.items.map((r) => row(r, now));
      if (append) body.append(...rows);
      else fill(body, ...rows);
      more.hidden = next === undefined;
      status.textContent = body.children.length === 0 ? `No ${state.value || ''} reservations.`.replace('  ', ' ') : '';
    } catch (error) {
      if (mine === generation) status.textContent = (error as ApiError).message;
    }
  };
  state.addEventListener('change', () => void load(false));
  more.addEventListener('click', () => void load(true));
  void load(false);
  return h(
    'div',
    {},
    h('label', { for: 'reservation-state' }, 'State '),
    state,
    h('table', { class: 'list', id: 'reservations' }, h('caption', { class: 'visually-hidden' }, 'Reservations, oldest first'), h('thead', {}, h('tr', {}, ...['Object', 'State', 'Age', 'Requester', 'Charged', 'Expires'].map((t) => h('th', { scope: 'col' }, t)))), body),
    more,
    status,
  );
}

function row(r: Reservation, now: number): HTMLTableRowElement {
  const object = `${r.object.kind ?? r.object.resource}${r.object.name ? ` ${r.object.name}` : ''}`;
  return h(
    'tr',
    { 'data-reservation': r.id },
    h('td', {}, object, r.object.uid ? h('div', { class: 'muted small' }, r.object.uid) : null),
    h('td', {}, r.state, r.operation === 'ADOPT' ? h('span', { class: 'badge' }, 'adopted') : null),
    h('td', {}, h('time', { datetime: r.reservedAt, title: localTime(r.reservedAt) }, age(r.reservedAt, now))),
    h('td', {}, r.requester ?? '—'),
    h('td', {}, resourceList(r.charged)),
    h('td', {}, r.expiresAt ? h('time', { datetime: r.expiresAt }, localTime(r.expiresAt)) : '—'),
  );
}
