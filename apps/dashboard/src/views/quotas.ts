import { api, ApiError, enc } from '../api.js';
import { type CoveringQuota, coveringPlace } from '../cluster-quota.js';
import { fill, h } from '../dom.js';
import { usageRatio } from '../format.js';
import { usageBar } from './bar.js';
import { sharedQueueTable } from './queue.js';

interface ResourceQuota {
  readonly apiVersion: string;
  readonly kind: 'ResourceQuota';
  readonly metadata: { readonly name: string; readonly namespace: string; readonly resourceVersion?: string };
  readonly spec: { readonly hard?: Record<string, string> } & Record<string, unknown>;
  readonly status?: { readonly hard?: Record<string, string>; readonly used?: Record<string, string> };
}

interface Quota {
  readonly name: string;
  readonly hard: Record<string, string>;
  readonly used: Record<string, string>;
}

/**
 * The namespace's quotas now, exact (as admission sees them), each resource as a bar; admins can change hard limits here.
 * Length: one view's DOM, built top to bottom in the order the page shows it.
 */
export function quotasNow(namespace: string, editable: boolean, onChanged: () => void): HTMLElement {
  const container = h('div', { id: 'quotas' }, h('p', { class: 'status', role: 'status' }, 'Loading…'));
  const load = async (): Promise<void> => {
    try {
      const usage = await api<{ quotas: Quota[]; shared?: CoveringQuota[] }>('GET', `/v1/namespaces/${enc(namespace)}/usage`);
      const shared = usage.shared ?? [];
      if (usage.quotas.length === 0 && shared.length === 0) {
        fill(container, h('p', { class: 'muted' }, 'No ResourceQuota in this namespace, and no shared quota covers it.'));
        return;
      }
      fill(
        container,
        ...(usage.quotas.length === 0
          ? [h('p', { class: 'muted' }, 'No ResourceQuota of its own: the shared quotas below limit it.')]
          : usage.quotas.map((quota) => card(quota))),
        ...shared.map(sharedCard),
      );
    } catch (error) {
      fill(container, h('p', { class: 'error', role: 'alert' }, (error as ApiError).message));
    }
  };
  const card = (quota: Quota): HTMLElement => {
    const section = h(
      'section',
      { class: 'quota', 'data-quota': quota.name, 'aria-labelledby': `quota-${quota.name}` },
      h('h3', { id: `quota-${quota.name}` }, quota.name),
      h(
        'table',
        { class: 'list' },
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Resource'), h('th', { scope: 'col' }, 'Used / hard'))),
        h(
          'tbody',
          {},
          ...Object.entries(quota.hard).map(([resource, limit]) =>
            h(
              'tr',
              {},
              h('td', { 'data-label': 'Resource' }, resource),
              h(
                'td',
                { 'data-label': 'Used / hard' },
                usageBar(usageRatio(quota.used[resource], limit), quota.used[resource] ?? '0', limit, `${resource} in quota ${quota.name}`),
              ),
            ),
          ),
        ),
      ),
    );
    if (editable) section.append(editor(quota.name));
    return section;
  };
  const editor = (name: string): HTMLElement => {
    const open = h('button', { type: 'button', class: 'secondary', 'aria-expanded': 'false' }, 'Edit hard limits');
    const form = h('form', { class: 'quota-edit', hidden: true });
    const message = h('p', { role: 'status' });
    // The object is read when the editor opens, so its resourceVersion is fresh; the whole object
    // goes back with it, and a concurrent edit is a 409 with a message, not a lost update.
    let quota: ResourceQuota | undefined;
    let inputs: { resource: string; input: HTMLInputElement }[] = [];
    const show = async (): Promise<void> => {
      try {
        quota = await api<ResourceQuota>('GET', `/v1/namespaces/${enc(namespace)}/resourcequotas/${enc(name)}`);
      } catch (error) {
        message.textContent = (error as ApiError).message;
        return;
      }
      inputs = Object.entries(quota.spec.hard ?? {}).map(([resource, value]) => ({
        resource,
        input: h('input', {
          id: `hard-${name}-${resource}`.replace(/[^A-Za-z0-9_-]/g, '_'),
          name: resource,
          value,
          required: true,
          autocomplete: 'off',
          spellcheck: 'false',
        }),
      }));
      fill(
        form,
        ...inputs.map(({ resource, input }) => h('div', { class: 'field' }, h('label', { for: input.id }, resource), input)),
        h(
          'div',
          {},
          h('button', { type: 'submit' }, 'Save'),
          ' ',
          h('button', { type: 'button', class: 'secondary', onclick: () => toggle(false) }, 'Cancel'),
        ),
        message,
      );
      form.hidden = false;
      // The editor has its own Cancel: the button that opened it goes while it is open.
      open.hidden = true;
      open.setAttribute('aria-expanded', 'true');
      inputs[0]?.input.focus();
    };
    const toggle = (visible: boolean): void => {
      if (visible) {
        void show();
        return;
      }
      form.hidden = true;
      open.hidden = false;
      open.setAttribute('aria-expanded', 'false');
      open.focus();
    };
    open.addEventListener('click', () => toggle(Boolean(form.hidden)));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      if (!quota) return;
      const current = quota;
      void (async () => {
        const hard = Object.fromEntries(inputs.map((i) => [i.resource, i.input.value.trim()]));
        message.className = '';
        message.textContent = 'Saving…';
        try {
          const { status: _status, ...object } = current;
          await api('PUT', `/v1/namespaces/${enc(namespace)}/resourcequotas/${enc(name)}`, { ...object, spec: { ...current.spec, hard } });
          onChanged();
        } catch (error) {
          message.textContent = (error as ApiError).message;
          message.className = 'error';
        }
      })();
    });
    return h('div', {}, open, form, form.hidden ? message : null);
  };
  void load();
  return container;
}

/**
 * A shared quota covering the namespace: its hard limits and what this namespace uses of them
 * (its part; the total, over every namespace it covers, is on the shared quota's page).
 */
function sharedCard(quota: CoveringQuota): HTMLElement {
  const { label, href } = coveringPlace(quota);
  const id = `shared-${quota.kind}-${quota.namespace ?? ''}-${quota.name}`.replace(/[^A-Za-z0-9_-]/g, '_');
  return h(
    'section',
    {
      class: 'quota shared',
      'data-shared': `${quota.kind}/${quota.namespace ? `${quota.namespace}/` : ''}${quota.name}`,
      'aria-labelledby': id,
    },
    h('h3', { id }, h('a', { href }, label)),
    h(
      'p',
      { class: 'muted' },
      'Shared with the other namespaces it covers: this namespace’s part of its use, against its hard limits. ',
      quota.kind === 'ClusterResourceQuota'
        ? h('span', {}, 'Its total is on ', h('a', { href }, 'its page'), '.')
        : h(
            'span',
            {},
            'Its total: ',
            h('code', {}, `GET /v1/namespaces/${quota.namespace ?? ''}/hierarchicalresourcequotas/${quota.name}/usage`),
            '.',
          ),
    ),
    h(
      'table',
      { class: 'list' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Resource'), h('th', { scope: 'col' }, 'This namespace / hard'))),
      h(
        'tbody',
        {},
        ...Object.entries(quota.hard).map(([resource, limit]) =>
          h(
            'tr',
            { 'data-resource': resource },
            h('td', { 'data-label': 'Resource' }, resource),
            h(
              'td',
              { 'data-label': 'This namespace / hard' },
              usageBar(
                usageRatio(quota.used[resource], limit),
                quota.used[resource] ?? '0',
                limit,
                `${resource}: this namespace's part of ${label}`,
              ),
            ),
          ),
        ),
      ),
    ),
    // A hierarchical quota has no page of its own: its waiters, over its whole subtree, are here.
    quota.kind === 'HierarchicalResourceQuota' && quota.namespace
      ? h(
          'div',
          {},
          h('h4', {}, 'Waiting for room'),
          sharedQueueTable(
            `/v1/namespaces/${enc(quota.namespace)}/hierarchicalresourcequotas/${enc(quota.name)}/queue`,
            quota.name,
            `${id}-queue`,
          ),
        )
      : null,
  );
}
