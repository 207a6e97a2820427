import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { Ledger } from '../support/ledger.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type RunningApi } from '../support/api.js';
import { drawnPoints, launchChromium, SCREENSHOTS, signIn, type TestBrowser } from '../support/browser.js';
import { bearer, writeTokensFile } from '../support/tokens.js';

/**
 * The dashboard at /ui in Debian's Chromium (playwright-core), against the API with a seeded
 * history: sign-in, the namespaces list, the chart's points against the audit API, a denial
 * followed to its explanation, a what-if, an admin's quota edit, an auditor's read-only view,
 * and a cluster quota's page with its chart's points against its usage series. The first hour's
 * points (widths, markers, receipts, exports) are in dashboard-first-hour.browser.test.ts.
 */
const TOKENS = {
  admin: { name: 'platform-admin', token: 'admin-token-0123456789', roles: ['admin'] },
  auditor: { name: 'auditor-anna', token: 'auditor-token-0123456789', roles: ['auditor'] },
  webhook: { name: 'ci-pipeline', token: 'admission-token-0123456789', roles: ['admission'] },
};
const NS = 'team-a';
/** A namespace with a year of history: one step every 6 hours, usage in a weekly wave, the limit raised twice. */
const YEAR_NS = 'archive';
const YEAR_MS = 365 * 24 * 3600_000;
const STEP_MS = 6 * 3600_000;
const DAY_MS = 24 * 3600_000;

let api: RunningApi;
let chrome: TestBrowser;
let seededFrom: string;
let seededUntil: string;
let deniedDecision: string;
let yearStart: number;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const as = (who: keyof typeof TOKENS) => bearer(TOKENS[who].token);
const pod = (name: string, cpu = '100m') => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, uid: `uid-${name}` },
  spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu } } }] },
});
const putQuota = async (pods: string) => {
  const current = await api.request('GET', `/v1/namespaces/${NS}/resourcequotas/compute`, undefined, as('admin'));
  const body = {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: 'compute', ...(current.status === 200 ? { resourceVersion: current.body.metadata.resourceVersion } : {}) },
    spec: { hard: { pods, 'requests.cpu': '2' } },
  };
  const answer = await api.request('PUT', `/v1/namespaces/${NS}/resourcequotas/compute`, body, as('admin'));
  expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(300);
};
const reserve = (name: string) =>
  api.request('POST', `/v1/namespaces/${NS}/reservations`, { kind: 'Pod', object: pod(name) }, as('webhook'));
const shot = (page: Page, name: string) => page.screenshot({ path: fileURLToPath(new URL(`${name}.png`, SCREENSHOTS)), fullPage: true });

/**
 * Writes a year of admissions and releases through the real ledger with its clock set back a
 * year (so events, decisions, reservations and the head agree, as if it had run for a year),
 * then brings the read models and snapshots up to date.
 */
async function seedAYear(): Promise<void> {
  yearStart = Date.now() - YEAR_MS;
  let now = yearStart;
  const ledger = new Ledger(api.db.dataSource, { clock: () => now });
  const live: string[] = [];
  try {
    const hard = async (pods: string) => {
      const current = await ledger.getQuota(YEAR_NS, 'compute');
      await ledger.putQuota(
        YEAR_NS,
        { name: 'compute', spec: { hard: { pods } } },
        { actor: 'platform-admin', ...(current ? { expectedVersion: current.version } : {}) },
      );
    };
    await hard('20');
    for (let step = 1; now + STEP_MS < Date.now() - DAY_MS; step++) {
      now += STEP_MS;
      if (step === 400 || step === 1000) await hard(step === 400 ? '24' : '30');
      const target = 4 + Math.round(8 * (1 + Math.sin((2 * Math.PI * step) / 28)));
      while (live.length > target) await ledger.release(YEAR_NS, live.shift() ?? '', { actor: 'reconciler', reason: 'deleted' });
      while (live.length < target) {
        const { result } = await ledger.admit({
          namespace: YEAR_NS,
          source: 'rest',
          request: {
            operation: 'CREATE',
            groupResource: { group: '', resource: 'pods' },
            namespace: YEAR_NS,
            name: `batch-${step}-${live.length}`,
          },
          resources: { pods: '1' },
          dryRun: false,
          requester: 'nightly-batch',
        });
        if (!result.reservationId) throw new Error(`seeding was denied: ${result.message}`);
        live.push(result.reservationId);
      }
    }
  } finally {
    await ledger.close();
  }
  await api.settle();
}

/** A page signed in with a token: the sign-in form, once, as a person would. */
async function signedIn(who: keyof typeof TOKENS, hash = '#/'): Promise<Page> {
  const page = await chrome.context.newPage();
  page.on('pageerror', (error) => {
    throw error;
  });
  return signIn(page, `${api.base}/ui/${hash}`, TOKENS[who].token, TOKENS[who].name);
}

/** A cluster quota's series as its chart draws it: the samples where the quota existed, with one resource's used and hard. */
function sharedPoints(
  series: { points: { at: string; defined: boolean; used: Record<string, string>; hard: Record<string, string> }[] },
  resource: string,
): { at: string; used: string; hard: string }[] {
  return series.points.flatMap((p) =>
    p.defined && p.hard[resource] !== undefined ? [{ at: p.at, used: p.used[resource] ?? '0', hard: p.hard[resource] }] : [],
  );
}

/** The range a chart on the page draws (each chart says so in data-since and data-until). */
async function chartRange(page: Page, resource: string): Promise<{ since: string; until: string }> {
  const chart = page.locator(`svg.chart[data-resource="${resource}"]`);
  await chart.waitFor();
  return { since: (await chart.getAttribute('data-since')) ?? '', until: (await chart.getAttribute('data-until')) ?? '' };
}

/** The controls and meters on the page that have no accessible name (each as the start of its markup). */
function unnamedControls(page: Page): Promise<string[]> {
  // Runs in the page; the test's own types have no DOM, so the element is read structurally.
  return page.locator('a, button, input, select, textarea, [role="meter"], svg.chart').evaluateAll((elements) =>
    elements
      .filter((element) => {
        const labels = (element as unknown as { labels?: ArrayLike<{ textContent: string | null }> | null }).labels;
        const name = element.getAttribute('aria-label') ?? (labels && labels.length > 0 ? labels[0]?.textContent : element.textContent);
        return !name?.trim();
      })
      .map((element) => element.outerHTML.slice(0, 120)),
  );
}

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  api = await startApi({ insecureDev: false, tokensFile: writeTokensFile(Object.values(TOKENS)) }, 'qlui');
  // The history: a quota of 2 pods, two pods admitted, a third denied, the limit raised to 3,
  // a third pod admitted; a pause between steps so that each state spans several samples.
  seededFrom = new Date(Date.now() - 1000).toISOString();
  await sleep(1000);
  await putQuota('2');
  await sleep(400);
  expect((await reserve('web-1')).status).toBe(201);
  await sleep(400);
  expect((await reserve('web-2')).status).toBe(201);
  await sleep(400);
  const denied = await reserve('web-3');
  expect(denied.status).toBe(403);
  await sleep(400);
  await putQuota('3');
  await sleep(400);
  expect((await reserve('web-3')).status).toBe(201);
  await sleep(400);
  seededUntil = new Date(Date.now() + 1000).toISOString();
  const decisions = await api.request('GET', `/v1/namespaces/${NS}/decisions?allowed=false`, undefined, as('auditor'));
  deniedDecision = decisions.body.items[0].id;
  // Other namespaces, for the list and its search.
  for (const ns of ['payments', 'search-infra']) {
    const answer = await api.request(
      'PUT',
      `/v1/namespaces/${ns}/resourcequotas/small`,
      { apiVersion: 'v1', kind: 'ResourceQuota', spec: { hard: { pods: '10' } } },
      as('admin'),
    );
    expect(answer.status).toBe(201);
  }
  await seedAYear();
  chrome = await launchChromium();
});

afterAll(async () => {
  await chrome?.close();
  await api?.close();
});

describe('the dashboard in Chromium', () => {
  it('asks for a token once, keeps it for the tab, and refuses a wrong one', async () => {
    const page = await chrome.context.newPage();
    await page.goto(`${api.base}/ui/`);
    await page.getByLabel('Token').fill('not-a-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('not accepted');
    await page.getByLabel('Token').fill(TOKENS.auditor.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#who').getByText('auditor-anna').waitFor();
    await page.reload();
    await page.locator('#who').getByText('auditor-anna').waitFor();
    expect(await page.getByLabel('Token').count()).toBe(0);
    // A new tab is a new session: it asks again.
    const other = await chrome.context.newPage();
    await other.goto(`${api.base}/ui/`);
    await other.getByLabel('Token').waitFor();
    await page.close();
    await other.close();
  });

  it('lists namespaces with their tightest quota, and finds them by name', async () => {
    const page = await signedIn('auditor');
    const row = page.locator('tr[data-namespace="team-a"]');
    await row.waitFor();
    expect(await row.textContent()).toContain('compute · pods');
    expect(await row.getByRole('meter').getAttribute('aria-valuetext')).toBe('3 of 3 (100 %)');
    expect(await page.locator('tr[data-namespace]').count()).toBe(4);
    await shot(page, 'namespaces');
    await page.getByLabel('Find a namespace').fill('pay');
    await expect
      .poll(() => page.locator('tr[data-namespace]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-namespace'))))
      .toEqual(['payments']);
    await page.getByLabel('Find a namespace').fill('nothing-like-this');
    await expect.poll(() => page.getByRole('status').textContent()).toContain('No namespace contains');
    await page.close();
  });

  it('draws the points the audit API gives for the range, steps and all', async () => {
    const page = await signedIn('auditor', `#/ns/${NS}?tab=usage&range=hour&since=${seededFrom}&until=${seededUntil}`);
    const drawn = await drawnPoints(page, 'pods');
    const series = await api.request(
      'GET',
      `/v1/namespaces/${NS}/usage/series?since=${seededFrom}&until=${seededUntil}&points=100`,
      undefined,
      as('auditor'),
    );
    const expected = series.body.points.flatMap(
      (p: { at: string; quotas: { name: string; used: Record<string, string>; hard: Record<string, string> }[] }) => {
        const quota = p.quotas.find((q) => q.name === 'compute');
        return quota ? [{ at: p.at, used: quota.used['pods'] ?? '0', hard: quota.hard['pods'] }] : [];
      },
    );
    expect(drawn).toEqual(expected);
    // The story of the seeded history, read off the chart: each state in order.
    const states = drawn.map((p) => `${p.used}/${p.hard}`).filter((state, i, all) => state !== all[i - 1]);
    expect(states).toEqual(['0/2', '1/2', '2/2', '2/3', '3/3']);
    // Two limit markers (defined, raised) and one denial on the pods chart.
    const chart = page.locator('svg.chart[data-resource="pods"]');
    expect(await chart.locator('.limit-marker').count()).toBe(2);
    expect(await chart.locator('a.denial-marker').count()).toBe(1);
    // The requests.cpu chart draws too: 100m per pod.
    expect((await drawnPoints(page, 'requests.cpu')).at(-1)).toMatchObject({ used: '300m', hard: '2' });
    await shot(page, 'namespace-chart');
    await page.close();
  });

  it('draws a week of a year-long history, and moves a week earlier', async () => {
    const until = new Date(yearStart + 200 * DAY_MS).toISOString();
    const page = await signedIn('auditor', `#/ns/${YEAR_NS}?tab=usage&range=week&until=${until}`);
    const drawn = await drawnPoints(page, 'pods');
    expect(drawn).toHaveLength(169);
    const since = new Date(Date.parse(until) - 7 * DAY_MS).toISOString();
    const series = await api.request(
      'GET',
      `/v1/namespaces/${YEAR_NS}/usage/series?since=${since}&until=${until}&points=169`,
      undefined,
      as('auditor'),
    );
    expect(drawn.map((p) => [p.at, p.used, p.hard])).toEqual(
      series.body.points.map((p: { at: string; quotas: { used: Record<string, string>; hard: Record<string, string> }[] }) => [
        p.at,
        p.quotas[0]?.used['pods'],
        p.quotas[0]?.hard['pods'],
      ]),
    );
    // The weekly wave: usage runs between 4 and 20 pods within the week.
    const used = drawn.map((p) => Number(p.used));
    expect(Math.min(...used)).toBeLessThanOrEqual(5);
    expect(Math.max(...used)).toBeGreaterThanOrEqual(19);
    await shot(page, 'year-history-week');

    // By default the whole year, from its first event: all three limits, in 100 samples.
    const whole = await signedIn('auditor', `#/ns/${YEAR_NS}?tab=usage`);
    const wholeRange = await chartRange(whole, 'pods');
    expect(Date.parse(wholeRange.since)).toBeLessThan(yearStart);
    expect((yearStart - Date.parse(wholeRange.since)) / (Date.parse(wholeRange.until) - Date.parse(wholeRange.since))).toBeLessThan(0.1);
    const wholeDrawn = await drawnPoints(whole, 'pods');
    const wholeSeries = await api.request(
      'GET',
      `/v1/namespaces/${YEAR_NS}/usage/series?since=${encodeURIComponent(wholeRange.since)}&until=${encodeURIComponent(wholeRange.until)}&points=100`,
      undefined,
      as('auditor'),
    );
    expect(wholeDrawn.map((p) => p.at)).toEqual(
      wholeSeries.body.points.filter((p: { quotas: unknown[] }) => p.quotas.length > 0).map((p: { at: string }) => p.at),
    );
    expect([...new Set(wholeDrawn.map((p) => p.hard))]).toEqual(['20', '24', '30']);
    await shot(whole, 'year-history-all');
    await whole.close();

    await page.getByRole('link', { name: '← Earlier' }).click();
    await page.waitForURL((url) => url.hash.includes(`until=${encodeURIComponent(since)}`));
    await expect.poll(async () => (await drawnPoints(page, 'pods'))[0]?.at).toBe(new Date(Date.parse(since) - 7 * DAY_MS).toISOString());

    // How long another week takes to draw, from the route change to the chart of that week with
    // its 169 points (the goal: < 300 ms). Printed, not asserted: tests don't time things.
    const other = new Date(yearStart + 100 * DAY_MS).toISOString();
    const drawMs = await page.evaluate(
      async ({ hash, until }) => {
        // The page's globals (this file is compiled without the DOM's types).
        const page = globalThis as unknown as {
          location: { hash: string };
          document: {
            querySelector(
              selector: string,
            ): { getAttribute(name: string): string | null; querySelectorAll(selector: string): { length: number } } | null;
          };
          requestAnimationFrame(callback: () => void): void;
        };
        const t0 = performance.now();
        page.location.hash = hash;
        while (performance.now() - t0 < 10_000) {
          const chart = page.document.querySelector('svg.chart[data-resource="pods"]');
          if (chart?.getAttribute('data-until') === until && chart.querySelectorAll('circle.point').length === 169)
            return performance.now() - t0;
          await new Promise<void>((resolve) => page.requestAnimationFrame(resolve));
        }
        return Number.NaN;
      },
      { hash: `#/ns/${YEAR_NS}?tab=usage&range=week&until=${encodeURIComponent(other)}`, until: other },
    );
    console.log(`dashboard: a week of the year-long namespace drawn in ${drawMs.toFixed(1)} ms (route change to 169 points)`);
    expect(drawMs, 'the week chart drew').not.toBeNaN();
    await page.close();
  });

  it('follows a denial from the chart to its explanation, by keyboard', async () => {
    const page = await signedIn('auditor', `#/ns/${NS}?tab=usage&range=hour&since=${seededFrom}&until=${seededUntil}`);
    const marker = page.locator(`svg.chart[data-resource="pods"] a.denial-marker[data-decision="${deniedDecision}"]`);
    await marker.focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(new RegExp(`#/ns/${NS}/decisions/${deniedDecision}$`));
    const why = page.locator('#explanation');
    await why.waitFor();
    expect(await page.locator('h1').textContent()).toBe(`Decision ${deniedDecision}: denied`);
    expect(await why.textContent()).toContain('exceeded quota: compute');
    const over = why.locator('table.exceeded tbody tr').first();
    expect(await over.locator('td').allTextContents()).toEqual(['pods', '1', '2', '2']);
    expect(await page.locator('dl.facts').textContent()).toContain('ci-pipeline');
    await shot(page, 'denial-explanation');
    // The decisions log on the namespace page leads to the same explanation.
    await page.goto(`${api.base}/ui/#/ns/${NS}?tab=decisions&range=hour`);
    await page.getByLabel('Denials only').check();
    await expect.poll(() => page.locator('#decisions tbody tr').count()).toBe(1);
    await page.locator(`#decisions tr[data-decision="${deniedDecision}"]`).getByRole('link').click();
    await page.locator('#explanation').waitFor();
    await page.close();
  });

  it('names every control, so a keyboard or screen-reader user can find it', async () => {
    const page = await signedIn('admin', `#/ns/${NS}?tab=usage&range=hour&since=${seededFrom}&until=${seededUntil}`);
    await page.locator('svg.chart').first().waitFor();
    // Every tab's controls are in the page (the other tabs' hidden), named as well.
    await page.locator('#decisions tbody tr').first().waitFor({ state: 'attached' });
    expect(await unnamedControls(page)).toEqual([]);
    // Tab from the top of the page reaches the range controls, in reading order.
    await page.locator('body').focus();
    const focused: string[] = [];
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press('Tab');
      focused.push(((await page.locator(':focus').textContent()) ?? '').trim());
    }
    expect(focused).toContain('Day');
    expect(focused.indexOf('Hour')).toBeLessThan(focused.indexOf('Week'));
    await page.close();
  });

  it('shows the reservations with state, age, object and requester', async () => {
    const page = await signedIn('auditor', `#/ns/${NS}?tab=reservations`);
    const rows = page.locator('#reservations tbody tr');
    await expect.poll(() => rows.count()).toBe(3);
    const cells = await rows.first().locator('td').allTextContents();
    expect(cells[0]).toContain('Pod web-1');
    expect(cells[1]).toBe('reserved');
    expect(cells[2]).toMatch(/^\d+ (s|min)$/);
    expect(cells[3]).toBe('ci-pipeline');
    expect(cells[4]).toContain('pods: 1');
    await page.close();
  });

  it('answers a what-if without writing anything, and an auditor sees no edit controls', async () => {
    const page = await signedIn('auditor', `#/ns/${NS}?tab=what-if`);
    expect(await page.locator('#read-only').textContent()).toBe('read-only');
    await page.locator('section.quota[data-quota="compute"]').waitFor({ state: 'attached' });
    expect(await page.getByRole('button', { name: 'Edit hard limits' }).count()).toBe(0);
    const before = await api.request('GET', `/v1/namespaces/${NS}/usage`, undefined, as('auditor'));

    await page.getByLabel('Object or request').fill(JSON.stringify(pod('web-4')));
    await page.getByRole('button', { name: 'Would it be admitted?' }).click();
    const verdict = page.locator('#what-if-result .verdict');
    await verdict.waitFor();
    expect(await verdict.getAttribute('data-allowed')).toBe('false');
    expect(await page.locator('#what-if-result').textContent()).toContain('exceeded quota: compute');
    await shot(page, 'what-if-denied');

    // Neither JSON nor YAML: a message that says where it went wrong.
    await page.getByLabel('Object or request').fill('kind: Pod\n  name: [web');
    await page.getByRole('button', { name: 'Would it be admitted?' }).click();
    await expect.poll(() => page.locator('#what-if-result').textContent()).toContain('Not YAML or JSON');

    const after = await api.request('GET', `/v1/namespaces/${NS}/usage`, undefined, as('auditor'));
    expect(after.body.version).toBe(before.body.version);
    await page.close();
  });

  it('lets an admin raise a hard limit, after which the what-if admits', async () => {
    const page = await signedIn('admin', `#/ns/${NS}`);
    expect(await page.locator('#read-only').count()).toBe(0);
    await page.getByRole('button', { name: 'Edit hard limits' }).click();
    await page.getByLabel('pods', { exact: true }).fill('5');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect
      .poll(async () => page.locator('section.quota[data-quota="compute"]').getByRole('meter').first().getAttribute('aria-valuetext'))
      .toBe('3 of 5 (60 %)');
    const quota = await api.request('GET', `/v1/namespaces/${NS}/resourcequotas/compute`, undefined, as('admin'));
    expect(quota.body.spec.hard).toEqual({ pods: '5', 'requests.cpu': '2' });

    // An AdmissionReview pasted as the webhook would receive it.
    await page.getByRole('tab', { name: 'What if?' }).click();
    const review = {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: { uid: 'r1', operation: 'CREATE', namespace: NS, object: pod('web-4', '500m') },
    };
    await page.getByLabel('Object or request').fill(JSON.stringify(review));
    await page.getByRole('button', { name: 'Would it be admitted?' }).click();
    const verdict = page.locator('#what-if-result .verdict');
    await verdict.waitFor();
    expect(await verdict.getAttribute('data-allowed')).toBe('true');
    const answer = await page.locator('#what-if-result').textContent();
    expect(answer).toContain('would be admitted now');
    expect(answer).toMatch(/\bpods: 1\b/);
    expect(answer).toContain('requests.cpu: 500m');
    await shot(page, 'what-if-admitted');
    await page.close();
  });

  it('lists the cluster quotas, and shows one with its namespaces, their use, its usage chart and its history', async () => {
    for (const ns of ['acme-web', 'acme-jobs']) {
      const answer = await api.request(
        'PUT',
        `/v1/namespaces/${ns}`,
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { tenant: 'acme' } } },
        as('admin'),
      );
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    }
    const crq = (pods: string, resourceVersion?: string) => ({
      apiVersion: 'quota.openshift.io/v1',
      kind: 'ClusterResourceQuota',
      metadata: { name: 'acme', ...(resourceVersion ? { resourceVersion } : {}) },
      spec: { selector: { labels: { matchLabels: { tenant: 'acme' } } }, quota: { hard: { pods } } },
    });
    // A pod in one namespace fills it, one in the other is denied, and the limit is raised: a
    // pause between steps so that each state spans several samples of the chart.
    const crqFrom = new Date(Date.now() - 1000).toISOString();
    await sleep(1000);
    const created = await api.request('PUT', '/v1/clusterresourcequotas/acme', crq('1'), as('admin'));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await sleep(400);
    const reserved = await api.request(
      'POST',
      '/v1/namespaces/acme-web/reservations',
      { kind: 'Pod', object: pod('acme-1') },
      as('webhook'),
    );
    expect(reserved.status, JSON.stringify(reserved.body)).toBe(201);
    await sleep(400);
    const refused = await api.request(
      'POST',
      '/v1/namespaces/acme-jobs/reservations',
      { kind: 'Pod', object: pod('acme-2') },
      as('webhook'),
    );
    expect(refused.status, JSON.stringify(refused.body)).toBe(403);
    await sleep(400);
    // A second change, so the history has a before and an after.
    const raised = await api.request(
      'PUT',
      '/v1/clusterresourcequotas/acme',
      crq('20', created.body.metadata.resourceVersion),
      as('admin'),
    );
    expect(raised.status, JSON.stringify(raised.body)).toBe(200);
    await sleep(400);
    const crqUntil = new Date(Date.now() + 1000).toISOString();
    const seriesOf = async (range: { since: string; until: string }, points: number) => {
      const answer = await api.request(
        'GET',
        `/v1/clusterresourcequotas/acme/usage/series?since=${encodeURIComponent(range.since)}&until=${encodeURIComponent(range.until)}&points=${points}`,
        undefined,
        as('auditor'),
      );
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body.points).toHaveLength(points);
      return answer.body;
    };

    const page = await signedIn('auditor');
    await page.getByRole('navigation', { name: 'Lists' }).getByRole('link', { name: 'Cluster quotas' }).click();
    await page.waitForURL(/#\/clusterresourcequotas$/);
    const row = page.locator('#crq-list tr[data-cluster-quota="acme"]');
    await row.waitFor();
    expect((await row.locator('td').allTextContents()).slice(0, 4)).toEqual(['acme', 'tenant=acme', '2', 'pods']);
    expect(await row.getByRole('meter').getAttribute('aria-valuetext')).toBe('1 of 20 (5 %)');
    await expect.poll(() => page.getByRole('status').textContent()).toBe('1 cluster quota.');
    expect(await unnamedControls(page)).toEqual([]);
    await shot(page, 'cluster-quotas');

    await row.getByRole('link', { name: 'acme' }).click();
    await page.waitForURL(/#\/clusterresourcequotas\/acme$/);
    const namespaces = page.locator('#crq-namespaces tbody tr');
    await namespaces.first().waitFor();
    expect(await page.locator('h1').textContent()).toBe('acme');
    expect(await page.locator('#crq-total tr[data-resource="pods"]').getByRole('meter').getAttribute('aria-valuetext')).toBe(
      '1 of 20 (5 %)',
    );
    expect(await namespaces.evaluateAll((rows) => rows.map((r) => r.getAttribute('data-namespace')))).toEqual(['acme-jobs', 'acme-web']);
    expect(await namespaces.nth(0).locator('td').allTextContents()).toEqual(['acme-jobs', '0 (0 %)']);
    expect(await namespaces.nth(1).locator('td').allTextContents()).toEqual(['acme-web', '1 (100 %)']);
    expect(await page.locator('#crq-namespaces tfoot td').allTextContents()).toEqual(['1 of 20']);
    const history = page.locator('#crq-history tbody tr');
    await expect.poll(() => history.count()).toBe(2);
    const change = async (i: number) => {
      const cells = history.nth(i).locator('td');
      return [...(await cells.allTextContents()).slice(0, 3), await cells.nth(3).locator('div.lines > div').allTextContents()];
    };
    expect(await change(0)).toEqual([
      expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
      'defined',
      'platform-admin',
      ['pods: 1', 'selector: tenant=acme'],
    ]);
    expect(await change(1)).toEqual([
      expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
      'changed',
      'platform-admin',
      ['pods: 1 → 20'],
    ]);
    // Its usage chart, by default over its whole history (from its first change to now): the
    // points its usage series gives for that range.
    const all = await chartRange(page, 'pods');
    const firstChange = Date.parse(
      (await api.request('GET', '/v1/clusterresourcequotas/acme/history?limit=1', undefined, as('auditor'))).body.items[0].time,
    );
    expect(Date.parse(all.since)).toBeLessThan(firstChange);
    expect((firstChange - Date.parse(all.since)) / (Date.parse(all.until) - Date.parse(all.since))).toBeLessThan(0.1);
    expect(await page.locator('.zoom [aria-current="true"]').textContent()).toBe('All');
    const drawnAll = await drawnPoints(page, 'pods');
    expect(drawnAll).toEqual(sharedPoints(await seriesOf(all, 100), 'pods'));
    expect(drawnAll.at(-1)).toMatchObject({ used: '1', hard: '20' });
    expect(await unnamedControls(page)).toEqual([]);
    await shot(page, 'cluster-quota');

    // Each namespace leads to its own page.
    await page.locator('#crq-namespaces').getByRole('link', { name: 'acme-web' }).click();
    await page.waitForURL(/#\/ns\/acme-web$/);
    await expect.poll(() => page.locator('h1').textContent()).toBe('acme-web');
    await page.close();

    // The seconds of its story, as an exact range in the address: every sample the series gives.
    const story = await signedIn('auditor', `#/clusterresourcequotas/acme?range=hour&since=${crqFrom}&until=${crqUntil}`);
    const drawn = await drawnPoints(story, 'pods');
    expect(drawn).toEqual(sharedPoints(await seriesOf({ since: crqFrom, until: crqUntil }, 100), 'pods'));
    expect(drawn.map((p) => `${p.used}/${p.hard}`).filter((state, i, all) => state !== all[i - 1])).toEqual(['0/1', '1/1', '1/20']);
    // Two limit markers (defined, raised) and the denial, which leads nowhere: the marker does not
    // say in which namespace it was decided. The list under the chart says it in words.
    const chart = story.locator('svg.chart[data-resource="pods"]');
    expect(await chart.locator('.limit-marker').count()).toBe(2);
    expect(await chart.locator('.denial-marker').count()).toBe(1);
    expect(await chart.locator('a').count()).toBe(0);
    const denial = story.locator('#markers li.denial');
    expect(await denial.textContent()).toContain('denied acme-2 (ci-pipeline): ');
    expect(await denial.locator('a').count()).toBe(0);
    // Each limit change says what it did, before → after.
    expect(await story.locator('#markers li.limit').allTextContents()).toEqual([
      expect.stringMatching(/ quota acme changed by platform-admin: pods: 1 → 20$/),
      expect.stringMatching(/ quota acme defined by platform-admin: pods: 1, selector: tenant=acme$/),
    ]);
    expect(await unnamedControls(story)).toEqual([]);
    await shot(story, 'cluster-quota-chart');

    // The same range choices as a namespace's page: the hour up to the same end, in 61 samples.
    await story.getByRole('group', { name: 'Range' }).getByRole('link', { name: 'Hour' }).click();
    await story.waitForURL((url) => url.hash === `#/clusterresourcequotas/acme?range=hour&until=${encodeURIComponent(crqUntil)}`);
    const hour = { since: new Date(Date.parse(crqUntil) - 3600_000).toISOString(), until: crqUntil };
    await expect.poll(() => chartRange(story, 'pods')).toEqual(hour);
    expect(await story.locator('.zoom [aria-current="true"]').textContent()).toBe('Hour');
    expect(await drawnPoints(story, 'pods')).toEqual(sharedPoints(await seriesOf(hour, 61), 'pods'));
    await story.close();
  });
});
