import './styles.css';
import { api, ApiError, tokenStore } from './api.js';
import { fill, h } from './dom.js';
import { canAudit, type WhoAmI } from './session.js';
import { clusterQuotaView } from './views/cluster-quota.js';
import { clusterQuotasView } from './views/cluster-quotas.js';
import { decisionView } from './views/decisions.js';
import { namespaceTab, namespaceView } from './views/namespace.js';
import { namespacesView } from './views/namespaces.js';
import { rangeRoute } from './views/range.js';

const main = document.getElementById('main') as HTMLElement;
const whoSlot = document.getElementById('who') as HTMLElement;
let who: WhoAmI | undefined;

/** What the service says before sign-in (GET /ui/session.json, no credentials): whether it wants a token, and where a development token is kept. */
interface Session {
  readonly authentication: 'token' | 'open';
  readonly devTokenFile?: string;
}
let session: Session | undefined;

/** Read once per load; a service that does not answer it is asked for a token as before. */
async function loadSession(): Promise<Session> {
  session ??= await api<Session>('GET', `${import.meta.env.BASE_URL}session.json`).catch((): Session => ({ authentication: 'token' }));
  return session;
}

/** Where a token comes from: the zero-setup start's development token (its file, when the service names it), or whoever runs the service. */
function whereTokensAre(devTokenFile: string | undefined): HTMLElement {
  return h(
    'div',
    { class: 'token-help', id: 'token-help' },
    h('h2', {}, 'Where is my token?'),
    h(
      'p',
      {},
      'Started with ',
      h('code', {}, 'npm start'),
      '? It printed a development token (the ',
      h('code', {}, 'token'),
      ' line, every role) and keeps it in ',
      devTokenFile ? h('code', { id: 'dev-token-file' }, devTokenFile) : h('code', {}, 'dev-token'),
      devTokenFile
        ? '. Show it with '
        : ' in its data directory (.quota-ledger/ in the project unless QUOTA_LEDGER_DATA_DIR says otherwise). Show it with ',
      h('code', {}, `cat ${devTokenFile ?? '.quota-ledger/dev-token'}`),
      '.',
    ),
    h(
      'p',
      {},
      'Otherwise, ask whoever runs this service for a token with the admin or auditor role (its SHA-256 digest goes in the TOKENS_FILE; see the documentation, “Security”).',
    ),
  );
}

/** The token form: shown when the service needs credentials and this tab has none, or the token was refused. */
function signIn(problem?: string): void {
  const input = h('input', {
    id: 'token',
    type: 'password',
    autocomplete: 'off',
    required: true,
    spellcheck: 'false',
    'aria-describedby': 'token-help',
  });
  const form = h(
    'form',
    { class: 'sign-in' },
    h('h1', {}, 'Sign in'),
    h(
      'p',
      {},
      'Enter an API token with the admin or auditor role. It is kept in this tab’s session storage until the tab closes, and sent only to this service.',
    ),
    problem ? h('p', { class: 'error', role: 'alert' }, problem) : null,
    h('label', { for: 'token' }, 'Token'),
    input,
    h('div', {}, h('button', { type: 'submit' }, 'Sign in')),
    whereTokensAre(session?.devTokenFile),
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
  void loadSession().then(() => signIn());
}

/**
 * Checks the token (GET /v1/whoami) and shows what its roles allow. Without a token, and a
 * service that wants one, the form comes first: asking whoami would only earn a 401.
 */
async function start(): Promise<void> {
  if (!tokenStore.get() && (await loadSession()).authentication === 'token') {
    signIn();
    return;
  }
  try {
    who = await api<WhoAmI>('GET', '/v1/whoami');
  } catch (error) {
    const e = error as ApiError;
    if (e.status === 401) {
      const had = tokenStore.get();
      tokenStore.clear();
      await loadSession();
      signIn(had ? `That token was not accepted: ${e.message}` : undefined);
    } else {
      fill(
        main,
        h('p', { class: 'error', role: 'alert' }, `The service did not answer: ${e.message}`),
        h('button', { type: 'button', onclick: () => void start() }, 'Try again'),
      );
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

/** `#/`, `#/ns/NAME?tab=overview|history|reservations|decisions|what-if&range=all|hour|day|week&until=…&since=…&at=…`, `#/ns/NAME/decisions/ID` (a receipt), `#/clusterresourcequotas[/NAME?range=…]`. */
function route(): void {
  if (!who) return;
  if (!canAudit(who)) {
    fill(
      main,
      h(
        'p',
        { class: 'error', role: 'alert' },
        `“${who.name}” has the roles ${who.roles.join(', ')}; the dashboard needs admin or auditor.`,
      ),
    );
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
    namespaceView(main, who, { namespace, tab: namespaceTab(params.get('tab')), ...rangeRoute(params) });
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
