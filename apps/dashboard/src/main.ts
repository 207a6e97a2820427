import './styles.css';
import { api, ApiError, tokenStore } from './api.js';
import { fill, h } from './dom.js';
import { canAudit, type WhoAmI } from './session.js';
import { clusterQuotaView } from './views/cluster-quota.js';
import { clusterQuotasView } from './views/cluster-quotas.js';
import { decisionView } from './views/decisions.js';
import { namespaceView } from './views/namespace.js';
import { namespacesView } from './views/namespaces.js';
import { rangeRoute } from './views/range.js';

const main = document.getElementById('main') as HTMLElement;
const whoSlot = document.getElementById('who') as HTMLElement;
let who: WhoAmI | undefined;

/** The token form: shown when the service asks for credentials (401) or the token was refused. */
function signIn(problem?: string): void {
  const input = h('input', { id: 'token', type: 'password', autocomplete: 'off', required: true, spellcheck: 'false' });
  const form = h(
    'form',
    { class: 'sign-in' },
    h('h1', {}, 'Sign in'),
    h('p', {}, 'Enter an API token with the admin or auditor role. It is kept in this tab’s session storage until the tab closes, and sent only to this service.'),
    problem ? h('p', { class: 'error', role: 'alert' }, problem) : null,
    h('label', { for: 'token' }, 'Token'),
    input,
    h('div', {}, h('button', { type: 'submit' }, 'Sign in')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    tokenStore.set(input.value.trim());
    void start();
  });
  fill(main, form);
  fill(whoSlot);
  input.focus();
}

function signOut(): void {
  tokenStore.clear();
  who = undefined;
  signIn();
}

/** Checks the token (GET /v1/whoami) and shows what its roles allow. */
async function start(): Promise<void> {
  try {
    who = await api<WhoAmI>('GET', '/v1/whoami');
  } catch (error) {
    const e = error as ApiError;
    if (e.status === 401) {
      const had = tokenStore.get();
      tokenStore.clear();
      signIn(had ? `That token was not accepted: ${e.message}` : undefined);
    } else {
      fill(main, h('p', { class: 'error', role: 'alert' }, `The service did not answer: ${e.message}`), h('button', { type: 'button', onclick: () => void start() }, 'Try again'));
    }
    return;
  }
  const readOnly = !who.roles.includes('admin');
  fill(
    whoSlot,
    `${who.name} (${who.roles.join(', ')})`,
    readOnly ? h('span', { class: 'badge', id: 'read-only' }, 'read-only') : null,
    tokenStore.get() ? h('button', { type: 'button', class: 'link', onclick: signOut }, 'Sign out') : null,
  );
  route();
}

/** `#/`, `#/ns/NAME?range=day&until=…`, `#/ns/NAME/decisions/ID`, `#/clusterresourcequotas[/NAME?range=day&until=…]`. */
function route(): void {
  if (!who) return;
  if (!canAudit(who)) {
    fill(main, h('p', { class: 'error', role: 'alert' }, `“${who.name}” has the roles ${who.roles.join(', ')}; the dashboard needs admin or auditor.`));
    return;
  }
  const [path = '', query = ''] = location.hash.replace(/^#/, '').split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const params = new URLSearchParams(query);
  if (parts[0] === 'ns' && parts[1]) {
    const namespace = parts[1];
    if (parts[2] === 'decisions' && parts[3]) {
      document.title = `Decision ${parts[3]} · ${namespace} · quota-ledger`;
      void decisionView(main, namespace, parts[3]);
      return;
    }
    document.title = `${namespace} · quota-ledger`;
    namespaceView(main, who, { namespace, ...rangeRoute(params) });
    return;
  }
  if (parts[0] === 'clusterresourcequotas') {
    if (parts[1]) {
      document.title = `${parts[1]} · Cluster quotas · quota-ledger`;
      void clusterQuotaView(main, parts[1], rangeRoute(params));
      return;
    }
    document.title = 'Cluster quotas · quota-ledger';
    clusterQuotasView(main, who);
    return;
  }
  document.title = 'Namespaces · quota-ledger';
  namespacesView(main, who);
}

window.addEventListener('hashchange', () => {
  route();
  main.focus({ preventScroll: false });
});
void start();
