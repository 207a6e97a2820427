import type { ApiError } from '../api.js';
import type { Series } from '../chart.js';
import { fill, h } from '../dom.js';
import { localTime, parseInstant, usageRatio } from '../format.js';
import { usageBar } from './bar.js';

/** Usage as it was at an instant (`usage?at=`): every quota's hard and used, and for a shared quota each namespace's part. */
export interface Instant {
  readonly at: string;
  readonly version: number;
  readonly quotas: readonly {
    readonly name: string;
    readonly hard: Readonly<Record<string, string>>;
    readonly used: Readonly<Record<string, string>>;
  }[];
  readonly parts?: readonly { readonly namespace: string; readonly used: Readonly<Record<string, string>> }[];
}

/**
 * "Usage at this instant": a click on a chart (or an instant typed in, or a step to the previous
 * or next sample) asks the as-of API and shows every quota as admission saw it then, exact.
 * `onShow` is told the instant (the charts draw a line there, the address keeps it).
 */
export function instantPanel(
  series: Series,
  load: (at: string) => Promise<Instant>,
  onShow: (at: string) => void,
): { element: HTMLElement; show: (at: string) => void } {
  const ats = series.points.map((p) => p.at);
  const input = h('input', {
    id: 'instant-at',
    type: 'text',
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: 'YYYY-MM-DD HH:MM:SS',
    'aria-describedby': 'instant-help',
  });
  const result = h('div', { id: 'instant-result', 'aria-live': 'polite' });
  const previous = h('button', { type: 'button', class: 'secondary', disabled: true }, '← Previous sample');
  const next = h('button', { type: 'button', class: 'secondary', disabled: true }, 'Next sample →');
  let current: string | undefined;
  let generation = 0;

  const show = (at: string): void => {
    current = at;
    input.value = localTime(at);
    const index = ats.indexOf(at);
    previous.disabled = index <= 0 && !(index === -1 && ats.some((a) => a < at));
    next.disabled = index === ats.length - 1 || (index === -1 && !ats.some((a) => a > at));
    onShow(at);
    const mine = ++generation;
    fill(result, h('p', { class: 'status', role: 'status' }, 'Loading…'));
    load(at).then(
      (instant) => {
        if (mine === generation) fill(result, instantTable(instant));
      },
      (error: unknown) => {
        if (mine === generation) fill(result, h('p', { class: 'error', role: 'alert' }, (error as ApiError).message));
      },
    );
  };
  const step = (direction: -1 | 1): void => {
    if (current === undefined) return;
    const at = current;
    const target = direction < 0 ? [...ats].reverse().find((a) => a < at) : ats.find((a) => a > at);
    if (target) show(target);
  };
  previous.addEventListener('click', () => step(-1));
  next.addEventListener('click', () => step(1));
  const form = instantForm(series, input, [previous, next], result, show);
  const element = h(
    'section',
    { class: 'instant', id: 'instant', 'aria-labelledby': 'h-instant' },
    h('h3', { id: 'h-instant' }, 'Usage at an instant'),
    h(
      'p',
      { id: 'instant-help', class: 'muted' },
      'Click a chart to see every quota as admission saw it at that sample (exact, from the ledger), or type an instant.',
    ),
    form,
    result,
  );
  return { element, show };
}

/** The instant typed in: in local time or RFC 3339, shown on submit; one that does not read as an instant is said in `result`. */
function instantForm(
  series: Series,
  input: HTMLInputElement,
  steps: readonly HTMLButtonElement[],
  result: HTMLElement,
  show: (at: string) => void,
): HTMLFormElement {
  const form = h(
    'form',
    { class: 'instant-form' },
    h('label', { for: 'instant-at' }, 'Instant'),
    input,
    h('button', { type: 'submit' }, 'Show'),
    ...steps,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const at = parseInstant(input.value);
    if (at === undefined) {
      fill(
        result,
        h(
          'p',
          { class: 'error', role: 'alert' },
          `“${input.value.trim()}” is not an instant: write it as ${localTime(series.until)} (your time zone) or in RFC 3339 (2026-01-01T12:00:00Z).`,
        ),
      );
      return;
    }
    show(at);
  });
  return form;
}

function instantTable(instant: Instant): HTMLElement {
  const rows = instant.quotas.flatMap((quota) =>
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
            `${resource} in quota ${quota.name} at ${localTime(instant.at)}`,
          ),
        ),
      ),
    ),
  );
  const resources = [...new Set(instant.quotas.flatMap((q) => Object.keys(q.hard)))];
  return h(
    'div',
    { 'data-at': instant.at },
    h('p', {}, 'At ', h('time', { datetime: instant.at }, localTime(instant.at)), ` (version ${instant.version}):`),
    rows.length === 0
      ? h('p', { class: 'muted' }, 'No quota had a hard limit then.')
      : h(
          'table',
          { class: 'list stack', id: 'instant-usage' },
          h('thead', {}, h('tr', {}, ...['Quota', 'Resource', 'Used / hard'].map((t) => h('th', { scope: 'col' }, t)))),
          h('tbody', {}, ...rows),
        ),
    instant.parts && instant.parts.length > 0
      ? h(
          'table',
          { class: 'list stack', id: 'instant-parts' },
          h('caption', {}, 'Each namespace’s part then'),
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Namespace'), ...resources.map((r) => h('th', { scope: 'col' }, r)))),
          h(
            'tbody',
            {},
            ...instant.parts.map((part) =>
              h(
                'tr',
                { 'data-namespace': part.namespace },
                h('td', { 'data-label': 'Namespace' }, part.namespace),
                ...resources.map((r) => h('td', { 'data-label': r }, part.used[r] ?? '0')),
              ),
            ),
          ),
        )
      : null,
  );
}
