import { api, type ApiError, enc } from '../api.js';
import { pager } from './pager.js';
import { fill, h } from '../dom.js';
import { localTime, resourceList, who } from '../format.js';

export interface Denial {
  readonly kind: string;
  readonly quota?: string;
  readonly resource?: string;
  readonly requested?: string;
  readonly used?: string;
  readonly hard?: string;
  readonly exceeded?: readonly { readonly resource: string; readonly requested: string; readonly used?: string; readonly hard: string }[];
  readonly resources?: readonly string[];
}

export interface Decision {
  readonly id: string;
  readonly namespace: string;
  readonly time: string;
  readonly source: string;
  readonly operation: string;
  readonly resource: string;
  readonly kind?: string;
  readonly name?: string;
  readonly objectUid?: string;
  readonly requester: string;
  /** The Kubernetes user a trusted relay (the kube-apiserver) asked for. */
  readonly onBehalfOf?: string;
  readonly dryRun: boolean;
  readonly allowed: boolean;
  readonly result: { readonly code: number; readonly message?: string; readonly stage?: string; readonly denial?: Denial; readonly charged?: Record<string, string>; readonly reservationId?: string };
}

const PAGE = 50;

const what = (d: Decision): string => `${d.operation} ${d.kind ?? d.resource}${d.name ? ` ${d.name}` : ''}`;

/** The decisions in a time range, newest first, optionally only the denials; each links to its explanation. */
export function decisionsLog(namespace: string, since: string, until: string): HTMLElement {
  const deniedOnly = h('input', { type: 'checkbox', id: 'denied-only' });
  const body = h('tbody');
  const { more, status, reload } = pager<Decision>(body, {
    path: (after) =>
      `/v1/namespaces/${enc(namespace)}/decisions?order=newest&limit=${PAGE}&since=${enc(since)}&until=${enc(until)}${deniedOnly.checked ? '&allowed=false' : ''}${after ? `&after=${enc(after)}` : ''}`,
    row: (d) => row(namespace, d),
    summary: (shown) => (shown === 0 ? `No ${deniedOnly.checked ? 'denials' : 'decisions'} in this range.` : ''),
    moreLabel: 'Show older',
  });
  deniedOnly.addEventListener('change', reload);
  return h(
    'div',
    {},
    h('label', { class: 'toggle' }, deniedOnly, ' Denials only'),
    h('table', { class: 'list', id: 'decisions' }, h('caption', { class: 'visually-hidden' }, 'Decisions, newest first'), h('thead', {}, h('tr', {}, ...['Time', 'Requester', 'Request', 'Decision', ''].map((t) => h('th', { scope: 'col' }, t)))), body),
    more,
    status,
  );
}

function row(namespace: string, d: Decision): HTMLTableRowElement {
  return h(
    'tr',
    { class: d.allowed ? 'allowed' : 'denied', 'data-decision': d.id },
    h('td', {}, h('time', { datetime: d.time }, localTime(d.time))),
    h('td', {}, who(d.requester, d.onBehalfOf)),
    h('td', {}, what(d), d.dryRun ? h('span', { class: 'badge' }, 'dry run') : null),
    h('td', {}, d.allowed ? h('span', { class: 'ok' }, 'allowed') : h('span', { class: 'bad' }, `denied${d.result.denial ? ` (${d.result.denial.kind})` : d.result.stage ? ` (${d.result.stage})` : ''}`)),
    h('td', {}, h('a', { href: `#/ns/${enc(namespace)}/decisions/${enc(d.id)}`, 'aria-label': `why: decision ${d.id}` }, 'Why?')),
  );
}

/** A denial in plain words, with the numbers that decided it. */
export function explanation(allowed: boolean, result: Decision['result']): HTMLElement {
  if (allowed) {
    return h('div', { class: 'explanation ok', id: 'explanation' }, h('p', {}, h('strong', {}, 'Allowed. '), `It charges ${resourceList(result.charged)}.`));
  }
  const denial = result.denial;
  const exceeded = denial?.exceeded ?? (denial?.resource && denial.requested && denial.hard ? [{ resource: denial.resource, requested: denial.requested, used: denial.used, hard: denial.hard }] : []);
  let summary: string;
  switch (denial?.kind) {
    case 'Exceeded':
      summary = `It asked for more than quota ${denial.quota ?? ''} had left.`;
      break;
    case 'MustSpecify':
      summary = `Quota ${denial.quota ?? ''} limits ${(denial.resources ?? []).join(', ')}, so every object it counts must say how much of ${denial.resources && denial.resources.length > 1 ? 'them' : 'it'} it needs.`;
      break;
    default:
      summary = result.stage === 'LimitRanger' ? 'A LimitRange refused it before the quota was checked.' : 'It was refused.';
  }
  return h(
    'div',
    { class: 'explanation bad', id: 'explanation' },
    h('p', {}, h('strong', {}, 'Denied. '), summary),
    result.message ? h('p', {}, h('span', { class: 'label' }, 'Message: '), h('code', { class: 'message' }, result.message)) : null,
    exceeded.length > 0
      ? h(
          'table',
          { class: 'list exceeded' },
          h('caption', {}, 'Over the limit'),
          h('thead', {}, h('tr', {}, ...['Resource', 'Requested', 'Already used', 'Hard limit'].map((t) => h('th', { scope: 'col' }, t)))),
          h('tbody', {}, ...exceeded.map((e) => h('tr', {}, h('td', {}, e.resource), h('td', {}, e.requested), h('td', {}, e.used ?? '0'), h('td', {}, e.hard)))),
        )
      : null,
  );
}

/** One decision: who asked for what, when, and why it was allowed or denied. */
export async function decisionView(main: HTMLElement, namespace: string, id: string): Promise<void> {
  fill(main, h('p', { class: 'status', role: 'status' }, 'Loading…'));
  let d: Decision;
  try {
    d = await api<Decision>('GET', `/v1/namespaces/${enc(namespace)}/decisions/${enc(id)}`);
  } catch (error) {
    fill(main, h('p', {}, h('a', { href: `#/ns/${enc(namespace)}` }, `← ${namespace}`)), h('p', { class: 'error', role: 'alert' }, (error as ApiError).message));
    return;
  }
  const facts: [string, Node | string][] = [
    ['Time', h('time', { datetime: d.time }, localTime(d.time))],
    ['Requester', d.requester],
    ...(d.onBehalfOf ? ([['On behalf of', d.onBehalfOf]] as [string, string][]) : []),
    ['Request', what(d)],
    ['Through', d.source === 'webhook' ? 'the admission webhook' : 'the REST API'],
    ...(d.objectUid ? ([['Object uid', h('code', {}, d.objectUid)]] as [string, Node][]) : []),
    ...(d.dryRun ? ([['Dry run', 'yes: nothing was reserved']] as [string, string][]) : []),
    ...(d.result.reservationId ? ([['Reservation', h('code', {}, d.result.reservationId)]] as [string, Node][]) : []),
  ];
  fill(
    main,
    h('p', {}, h('a', { href: `#/ns/${enc(namespace)}` }, `← ${namespace}`)),
    h('h1', {}, `Decision ${d.id}: ${d.allowed ? 'allowed' : 'denied'}`),
    h('dl', { class: 'facts' }, ...facts.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
    h('h2', {}, 'Why'),
    explanation(d.allowed, d.result),
  );
  main.focus();
}
