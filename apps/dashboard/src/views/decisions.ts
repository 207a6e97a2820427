import type { DecisionView } from '@quota/api';
import type { AdmissionResult, DenialJson } from '@quota/domain';
import { api, type ApiError, apiText, enc } from '../api.js';
import { pager } from './pager.js';
import { download, fill, h } from '../dom.js';
import { decisionsCsv, exportName } from '../export.js';
import { localTime, resourceList, usageRatio, who } from '../format.js';
import { usageBar } from './bar.js';

/** A quota's refusal, as a decision's `result.denial` and a REST 403's `details.denial` carry it. */
export type Denial = DenialJson;

/** A decision as the audit API lists it (GET …/decisions), the domain's answer as its result. */
export type Decision = DecisionView<AdmissionResult>;

/** Rows per page: a screen or two of them (on a narrow screen each row is a card of several lines). */
const PAGE = (): number => (matchMedia('(max-width: 640px)').matches ? 6 : 20);

const what = (d: Decision): string => `${d.operation} ${d.kind ?? d.resource}${d.name ? ` ${d.name}` : ''}`;

/** A decision's receipt: its address on the page, to open or share. */
export const decisionHref = (namespace: string, id: string): string => `#/ns/${enc(namespace)}/decisions/${enc(id)}`;

/**
 * The decisions in a time range, newest first, optionally only the denials; each links to its
 * receipt. The same decisions export as NDJSON or CSV (the API's decisions/export, with the
 * table's filters), and a decision opens from its id.
 */
export function decisionsLog(namespace: string, since: string, until: string): HTMLElement {
  const deniedOnly = h('input', { type: 'checkbox', id: 'denied-only' });
  const body = h('tbody');
  const filters = () => `since=${enc(since)}&until=${enc(until)}${deniedOnly.checked ? '&allowed=false' : ''}`;
  const { more, status, reload } = pager<Decision>(body, {
    path: (after) =>
      `/v1/namespaces/${enc(namespace)}/decisions?order=newest&limit=${PAGE()}&${filters()}${after ? `&after=${enc(after)}` : ''}`,
    row: (d) => row(namespace, d),
    summary: (shown) => (shown === 0 ? `No ${deniedOnly.checked ? 'denials' : 'decisions'} in this range.` : ''),
    moreLabel: 'Show older',
  });
  deniedOnly.addEventListener('change', reload);
  const exportStatus = h('span', { class: 'status', role: 'status', id: 'export-status' });
  const exportAs = (format: 'ndjson' | 'csv') => async (): Promise<void> => {
    exportStatus.textContent = 'Exporting…';
    try {
      const ndjson = await apiText(`/v1/namespaces/${enc(namespace)}/decisions/export?${filters()}`);
      const what = `${namespace} ${deniedOnly.checked ? 'denials' : 'decisions'}`;
      if (format === 'csv') download(exportName(what, since, until, 'csv'), 'text/csv', decisionsCsv(ndjson));
      else download(exportName(what, since, until, 'ndjson'), 'application/x-ndjson', ndjson);
      exportStatus.textContent = '';
    } catch (error) {
      exportStatus.textContent = (error as ApiError).message;
    }
  };
  const idInput = h('input', {
    id: 'decision-id',
    inputmode: 'numeric',
    autocomplete: 'off',
    spellcheck: 'false',
    pattern: '[0-9]{1,18}',
    required: true,
    size: 12,
  });
  const find = h(
    'form',
    { class: 'find-decision' },
    h('label', { for: 'decision-id' }, 'Open a decision by id'),
    idInput,
    h('button', { type: 'submit', class: 'secondary' }, 'Open'),
  );
  find.addEventListener('submit', (event) => {
    event.preventDefault();
    location.hash = decisionHref(namespace, idInput.value.trim());
  });
  return h(
    'div',
    {},
    h(
      'div',
      { class: 'toolbar' },
      h('label', { class: 'toggle' }, deniedOnly, ' Denials only'),
      h(
        'span',
        { class: 'exports', role: 'group', 'aria-label': 'Export these decisions' },
        h('button', { type: 'button', class: 'secondary', id: 'export-ndjson', onclick: () => void exportAs('ndjson')() }, 'Export NDJSON'),
        h('button', { type: 'button', class: 'secondary', id: 'export-csv', onclick: () => void exportAs('csv')() }, 'Export CSV'),
        exportStatus,
      ),
      find,
    ),
    h(
      'table',
      { class: 'list stack', id: 'decisions' },
      h('caption', { class: 'visually-hidden' }, 'Decisions, newest first'),
      h('thead', {}, h('tr', {}, ...['Time', 'Requester', 'Request', 'Decision', ''].map((t) => h('th', { scope: 'col' }, t)))),
      body,
    ),
    more,
    status,
  );
}

function row(namespace: string, d: Decision): HTMLTableRowElement {
  return h(
    'tr',
    { class: d.allowed ? 'allowed' : 'denied', 'data-decision': d.id },
    h('td', { 'data-label': 'Time' }, h('time', { datetime: d.time }, localTime(d.time))),
    h('td', { 'data-label': 'Requester' }, who(d.requester, d.onBehalfOf)),
    h('td', { 'data-label': 'Request' }, what(d), d.dryRun ? h('span', { class: 'badge' }, 'dry run') : null),
    h(
      'td',
      { 'data-label': 'Decision', class: 'decision' },
      d.allowed
        ? h('span', { class: 'ok' }, 'allowed')
        : h(
            'span',
            { class: 'bad' },
            `denied${d.result.denial ? ` (${d.result.denial.kind})` : d.result.stage ? ` (${d.result.stage})` : ''}`,
          ),
    ),
    h('td', { 'data-label': '' }, h('a', { href: decisionHref(namespace, d.id), 'aria-label': `why: decision ${d.id}` }, 'Why?')),
  );
}

/** A denial in plain words, with the numbers that decided it. */
/** Why a decision (or a what-if's answer, which names its stage as a plain string) went as it did. */
export function explanation(
  allowed: boolean,
  result: Pick<AdmissionResult, 'charged' | 'denial' | 'message'> & { readonly stage?: string },
): HTMLElement {
  if (allowed) {
    return h(
      'div',
      { class: 'explanation ok', id: 'explanation' },
      h('p', {}, h('strong', {}, 'Allowed. '), `It charges ${resourceList(result.charged)}.`),
    );
  }
  const denial = result.denial;
  const exceeded =
    denial?.exceeded ??
    (denial?.resource && denial.requested && denial.hard
      ? [{ resource: denial.resource, requested: denial.requested, used: denial.used, hard: denial.hard }]
      : []);
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
          { class: 'list stack exceeded' },
          h('caption', {}, 'Over the limit'),
          h('thead', {}, h('tr', {}, ...['Resource', 'Requested', 'Already used', 'Hard limit'].map((t) => h('th', { scope: 'col' }, t)))),
          h(
            'tbody',
            {},
            ...exceeded.map((e) =>
              h(
                'tr',
                {},
                h('td', { 'data-label': 'Resource' }, e.resource),
                h('td', { 'data-label': 'Requested' }, e.requested),
                h('td', { 'data-label': 'Already used' }, e.used ?? '0'),
                h('td', { 'data-label': 'Hard limit' }, e.hard),
              ),
            ),
          ),
        )
      : null,
  );
}

interface UsageThen {
  readonly version: number;
  readonly quotas: readonly { readonly name: string; readonly hard: Record<string, string>; readonly used: Record<string, string> }[];
}

/**
 * One decision's receipt, from its id (`#/ns/NAME/decisions/ID`, an address to share): who asked
 * for what, when, through what, what it charged or why it was denied, the quotas as the ledger
 * had them at that instant, and the record itself as the API keeps it.
 * Length: one view's DOM, built top to bottom in the order the page shows it.
 */
export async function decisionView(main: HTMLElement, namespace: string, id: string): Promise<void> {
  const back = h('p', {}, h('a', { href: `#/ns/${enc(namespace)}` }, `← ${namespace}`));
  fill(main, back, h('p', { class: 'status', role: 'status' }, 'Loading…'));
  const base = `/v1/namespaces/${enc(namespace)}`;
  let d: Decision;
  try {
    d = await api<Decision>('GET', `${base}/decisions/${enc(id)}`);
  } catch (error) {
    fill(main, back, h('h1', {}, `Decision ${id}`), h('p', { class: 'error', role: 'alert' }, (error as ApiError).message));
    return;
  }
  const facts: [string, Node | string][] = [
    ['Decision', h('code', {}, d.id)],
    ['Namespace', h('a', { href: `#/ns/${enc(d.namespace)}` }, d.namespace)],
    ['Time', h('time', { datetime: d.time }, `${localTime(d.time)} (${d.time})`)],
    ['Requester', d.requester],
    ...(d.onBehalfOf ? ([['On behalf of', d.onBehalfOf]] as [string, string][]) : []),
    ['Request', what(d)],
    ['Resource', d.resource],
    ['Through', d.source === 'webhook' ? 'the admission webhook' : 'the REST API'],
    ...(d.objectUid ? ([['Object uid', h('code', {}, d.objectUid)]] as [string, Node][]) : []),
    ['Dry run', d.dryRun ? 'yes: nothing was reserved' : 'no'],
    ['Answer', `${d.allowed ? 'allowed' : 'denied'} (HTTP ${d.result.code})${d.result.stage ? `, at ${d.result.stage}` : ''}`],
    ...(d.result.charged ? ([['Charged', resourceList(d.result.charged)]] as [string, string][]) : []),
    ...(d.result.reservationId ? ([['Reservation', h('code', {}, d.result.reservationId)]] as [string, Node][]) : []),
  ];
  const link = new URL(decisionHref(namespace, d.id), location.href).href;
  const linkField = h('input', { id: 'receipt-link', readonly: true, value: link, spellcheck: 'false' });
  const copied = h('span', { class: 'status', role: 'status' });
  const copy = h('button', { type: 'button', class: 'secondary' }, 'Copy link');
  copy.addEventListener('click', () => {
    linkField.select();
    // The clipboard API needs a secure context; elsewhere the selected field is there to copy by hand.
    void navigator.clipboard?.writeText(link).then(
      () => (copied.textContent = 'Copied.'),
      () => (copied.textContent = 'Selected: copy it with Ctrl+C.'),
    );
  });
  const record = JSON.stringify(d, null, 2);
  const saveRecord = h('button', { type: 'button', class: 'secondary', id: 'receipt-download' }, 'Download the record (JSON)');
  saveRecord.addEventListener('click', () => download(`${d.namespace} decision ${d.id}.json`, 'application/json', `${record}\n`));
  const then = h('div', { id: 'receipt-usage' }, h('p', { class: 'status', role: 'status' }, 'Loading…'));
  fill(
    main,
    back,
    h('h1', {}, `Decision ${d.id}: ${d.allowed ? 'allowed' : 'denied'}`),
    h('div', { class: 'share' }, h('label', { for: 'receipt-link' }, 'Link to this receipt'), linkField, copy, copied),
    h('dl', { class: 'facts', id: 'receipt' }, ...facts.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
    h('h2', {}, 'Why'),
    explanation(d.allowed, d.result),
    h('h2', {}, 'The quotas at that instant'),
    h('p', { class: 'muted' }, 'As the ledger had them at the decision’s time (usage?at=), to the millisecond.'),
    then,
    h('h2', {}, 'The record'),
    h('details', { class: 'record' }, h('summary', {}, 'As the API keeps it (JSON)'), h('pre', { id: 'receipt-json' }, record)),
    h('p', {}, saveRecord),
  );
  main.focus();
  try {
    const usage = await api<UsageThen>('GET', `${base}/usage?at=${enc(d.time)}`);
    const rows = usage.quotas.flatMap((quota) =>
      Object.entries(quota.hard).map(([resource, limit]) =>
        h(
          'tr',
          { 'data-quota': quota.name, 'data-resource': resource },
          h('td', { 'data-label': 'Quota' }, quota.name),
          h('td', { 'data-label': 'Resource' }, resource),
          h(
            'td',
            { 'data-label': 'Used / hard' },
            usageBar(
              usageRatio(quota.used[resource], limit),
              quota.used[resource] ?? '0',
              limit,
              `${resource} in quota ${quota.name} then`,
            ),
          ),
        ),
      ),
    );
    fill(
      then,
      rows.length === 0
        ? h('p', { class: 'muted' }, 'No quota had a hard limit then.')
        : h(
            'table',
            { class: 'list stack' },
            h('caption', { class: 'visually-hidden' }, `Quotas at version ${usage.version}`),
            h('thead', {}, h('tr', {}, ...['Quota', 'Resource', 'Used / hard'].map((t) => h('th', { scope: 'col' }, t)))),
            h('tbody', {}, ...rows),
          ),
    );
  } catch (error) {
    fill(then, h('p', { class: 'error', role: 'alert' }, (error as ApiError).message));
  }
}
