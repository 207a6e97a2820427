import { api, ApiError, enc } from '../api.js';
import { fill, h } from '../dom.js';
import { resourceList } from '../format.js';
import { parsePasted } from '../what-if.js';
import { explanation, type Decision } from './decisions.js';

interface WhatIfAnswer {
  readonly allowed: boolean;
  readonly code: number;
  readonly message?: string;
  readonly stage?: string;
  readonly denial?: Decision['result']['denial'];
  readonly charged: Record<string, string>;
}

const EXAMPLE = JSON.stringify(
  {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'what-if' },
    spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '500m', memory: '256Mi' } } }] },
  },
  null,
  2,
);

/** "Would this be admitted now?": a dry run against the namespace as it is; nothing is reserved. */
export function whatIfBox(namespace: string): HTMLElement {
  const input = h('textarea', { id: 'what-if-input', rows: 10, spellcheck: 'false', 'aria-describedby': 'what-if-help' });
  input.value = EXAMPLE;
  const result = h('div', { id: 'what-if-result', 'aria-live': 'polite' });
  const button = h('button', { type: 'submit' }, 'Would it be admitted?');
  const form = h(
    'form',
    { class: 'what-if' },
    h('label', { for: 'what-if-input' }, 'Object or request'),
    h(
      'p',
      { id: 'what-if-help', class: 'muted' },
      'Paste a Pod as YAML or JSON (kubectl get pod NAME -o yaml), another object, an AdmissionReview, or a REST reservation body. It is checked against this namespace’s quotas and limit ranges now, as a dry run: nothing is reserved.',
    ),
    input,
    h('div', {}, button),
    result,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void ask();
  });
  const ask = async (): Promise<void> => {
    // The last answer goes at once: it was about what was pasted before.
    fill(result, h('p', { class: 'status' }, 'Reading…'));
    button.disabled = true;
    const pasted = await parsePasted(input.value).finally(() => (button.disabled = false));
    if (!pasted.ok) {
      fill(result, h('p', { class: 'error', role: 'alert' }, pasted.problem));
      return;
    }
    if (pasted.namespace && pasted.namespace !== namespace) {
      fill(
        result,
        h(
          'p',
          { class: 'error', role: 'alert' },
          `The pasted object is for namespace “${pasted.namespace}”, and this page is “${namespace}”. `,
          h('a', { href: `#/ns/${enc(pasted.namespace)}` }, `Open ${pasted.namespace}`),
          ' to ask there, or remove metadata.namespace.',
        ),
      );
      return;
    }
    button.disabled = true;
    fill(result, h('p', { class: 'status' }, 'Asking…'));
    try {
      const answer = await api<WhatIfAnswer>('POST', `/v1/namespaces/${enc(namespace)}/whatif`, pasted.body);
      fill(
        result,
        h(
          'p',
          { class: answer.allowed ? 'verdict ok' : 'verdict bad', 'data-allowed': String(answer.allowed) },
          `${pasted.what}: ${answer.allowed ? 'would be admitted now' : 'would be denied now'}.`,
        ),
        answer.allowed ? h('p', {}, `It would charge ${resourceList(answer.charged)}.`) : explanation(false, answer),
      );
    } catch (error) {
      fill(result, h('p', { class: 'error', role: 'alert' }, (error as ApiError).message));
    } finally {
      button.disabled = false;
    }
  };
  return form;
}
