import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type RunningApi } from '../support/api.js';
import { launchChromium, signIn, type TestBrowser } from '../support/browser.js';
import { bearer, writeTokensFile } from '../support/tokens.js';

/**
 * What a newcomer saw on a namespace's page: "no quota" for a namespace limited only
 * by a ClusterResourceQuota; compute denials drawn on the storage charts; and a page 5,600 px
 * tall at 1400 px (13,000 at 420), now tabs of a screen or two each, the tab kept in the address.
 */
const TOKENS = {
  admin: { name: 'platform-admin', token: 'admin-token-0123456789', roles: ['admin'] },
  auditor: { name: 'auditor-anna', token: 'auditor-token-0123456789', roles: ['auditor'] },
  ci: { name: 'ci-pipeline', token: 'admission-token-0123456789', roles: ['admission'] },
};
const BUSY = 'busy';
const SOLO = 'solo';
const TABS = ['quotas', 'usage', 'changes', 'reservations', 'queue', 'decisions', 'what-if'];
const HEIGHT = 900;

let api: RunningApi;
let chrome: TestBrowser;
const as = (who: keyof typeof TOKENS) => bearer(TOKENS[who].token);
const put = async (path: string, body: unknown) => {
  const answer = await api.request('PUT', path, body, as('admin'));
  expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(300);
};
const reserve = (namespace: string, kind: string, name: string, resources: Record<string, string>) =>
  api.request('POST', `/v1/namespaces/${namespace}/reservations`, { kind, name, resources }, as('ci'));

beforeAll(async () => {
  api = await startApi({ insecureDev: false, tokensFile: writeTokensFile(Object.values(TOKENS)) }, 'qlnspage');
  await put(`/v1/namespaces/${BUSY}/resourcequotas/compute`, {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    spec: { hard: { pods: '40', 'requests.cpu': '4' } },
  });
  await put(`/v1/namespaces/${BUSY}/resourcequotas/storage`, {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    spec: { hard: { 'requests.storage': '10Gi', persistentvolumeclaims: '3' } },
  });
  // 30 pods, 3 denied for CPU, 2 claims denied for storage: more reservations and decisions than a page shows.
  for (let i = 0; i < 30; i++) expect((await reserve(BUSY, 'Pod', `web-${i}`, { pods: '1', 'requests.cpu': '100m' })).status).toBe(201);
  for (let i = 0; i < 3; i++) expect((await reserve(BUSY, 'Pod', `big-${i}`, { pods: '1', 'requests.cpu': '5' })).status).toBe(403);
  for (let i = 0; i < 2; i++)
    expect(
      (await reserve(BUSY, 'PersistentVolumeClaim', `data-${i}`, { persistentvolumeclaims: '1', 'requests.storage': '20Gi' })).status,
    ).toBe(403);
  // A namespace with no ResourceQuota, limited by a cluster quota over its tenant's namespaces.
  await put(`/v1/namespaces/${SOLO}`, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: SOLO, labels: { tenant: 'acme' } } });
  await put('/v1/clusterresourcequotas/acme', {
    apiVersion: 'quota.openshift.io/v1',
    kind: 'ClusterResourceQuota',
    metadata: { name: 'acme' },
    spec: { selector: { labels: { matchLabels: { tenant: 'acme' } } }, quota: { hard: { pods: '5' } } },
  });
  expect((await reserve(SOLO, 'Pod', 'one', { pods: '1' })).status).toBe(201);
  await api.settle();
  chrome = await launchChromium();
}, 120_000);

afterAll(async () => {
  await chrome?.close();
  await api?.close();
});

async function signedIn(hash: string, width = 1400): Promise<Page> {
  const page = await chrome.context.newPage();
  await page.setViewportSize({ width, height: HEIGHT });
  page.on('pageerror', (error) => {
    throw error;
  });
  return signIn(page, `${api.base}/ui/${hash}`, TOKENS.auditor.token, TOKENS.auditor.name);
}

/** Waits until nothing on the page says it is loading, then measures it. */
async function settledHeight(page: Page): Promise<number> {
  await expect
    .poll(() => page.locator('[role="tabpanel"]:not([hidden]) .status:text-is("Loading…"), [aria-busy="true"]').count(), {
      timeout: 15_000,
    })
    .toBe(0);
  // Runs in the page; the test's own types have no DOM.
  return page.evaluate(
    () => (globalThis as unknown as { document: { documentElement: { scrollHeight: number } } }).document.documentElement.scrollHeight,
  );
}

describe('a namespace covered only by a shared quota', () => {
  it('is listed as covered by it, not as having no quota, with a link to the cluster quota', async () => {
    const page = await signedIn('#/');
    const cell = page.locator(`tr[data-namespace="${SOLO}"] td`).nth(1);
    await expect.poll(() => cell.textContent()).toBe('covered by cluster quota acme');
    await cell.getByRole('link', { name: 'cluster quota acme' }).click();
    await page.waitForURL(/#\/clusterresourcequotas\/acme$/);
    await page.close();
  });

  it("shows the shared quota on the namespace's page: its hard limits, this namespace's part, a link to its page", async () => {
    const page = await signedIn(`#/ns/${SOLO}`);
    const card = page.locator('[data-shared="ClusterResourceQuota/acme"]');
    await card.waitFor();
    expect(await card.locator('tr[data-resource="pods"]').getByRole('meter').getAttribute('aria-valuetext')).toBe('1 of 5 (20 %)');
    expect(await card.getByRole('link', { name: 'cluster quota acme' }).getAttribute('href')).toBe('#/clusterresourcequotas/acme');
    expect(await page.locator('#quotas').textContent()).not.toContain('no shared quota covers it');
    await page.close();
  });
});

describe('the usage charts', () => {
  it('draw each denial only on the charts of the quota and resources it was refused for', async () => {
    const page = await signedIn(`#/ns/${BUSY}?tab=usage`);
    const marks = (quota: string, resource: string) =>
      page.locator(`svg.chart[data-quota="${quota}"][data-resource="${resource}"] .denial-marker`).count();
    await page.locator('svg.chart[data-resource="requests.storage"]').waitFor();
    expect({
      cpu: await marks('compute', 'requests.cpu'),
      pods: await marks('compute', 'pods'),
      storage: await marks('storage', 'requests.storage'),
      claims: await marks('storage', 'persistentvolumeclaims'),
    }).toEqual({
      cpu: 3,
      pods: 0,
      storage: 2,
      claims: 0,
    });
    await page.close();
  });
});

describe("a namespace's page as tabs", () => {
  it.each([1400, 420])(
    'fits each tab in two screens at %i px wide',
    async (width) => {
      const heights: Record<string, number> = {};
      for (const tab of TABS) {
        const page = await signedIn(`#/ns/${BUSY}?tab=${tab}`, width);
        await page.locator(`#panel-${tab}:not([hidden]) h2`).first().waitFor();
        heights[tab] = await settledHeight(page);
        await page.close();
      }
      // What each measured, in the failure message.
      expect(
        Object.entries(heights).filter(([, height]) => height > 2 * HEIGHT),
        JSON.stringify(heights),
      ).toEqual([]);
    },
    120_000,
  );

  it('are tabs a screen reader and a keyboard can use, and the address keeps the one chosen', async () => {
    const page = await signedIn(`#/ns/${BUSY}`);
    const tablist = page.getByRole('tablist', { name: `Views of ${BUSY}` });
    expect(await tablist.getByRole('tab').allTextContents()).toEqual([
      'Quotas now',
      'Usage',
      'Changes',
      'Reservations',
      'Queue',
      'Decisions',
      'What if?',
    ]);
    expect(await tablist.getByRole('tab', { selected: true }).textContent()).toBe('Quotas now');
    await tablist.getByRole('tab', { name: 'Decisions' }).click();
    expect(await page.getByRole('tab', { name: 'Decisions' }).getAttribute('aria-selected')).toBe('true');
    await page.getByRole('tabpanel', { name: 'Decisions' }).locator('#decisions tbody tr').first().waitFor();
    expect(await page.locator('#panel-quotas').isHidden()).toBe(true);
    expect(page.url()).toContain('tab=decisions');
    // The arrow keys move between tabs, each shown as it is reached; Tab stops on the chosen one only.
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => page.locator(':focus').textContent()).toBe('What if?');
    expect(page.url()).toContain('tab=what-if');
    expect(await page.getByRole('tab', { name: 'Decisions' }).getAttribute('tabindex')).toBe('-1');
    // A reload (or the address shared) opens the same tab.
    await page.reload();
    await page.getByRole('tab', { name: 'What if?', selected: true }).waitFor();
    expect(await page.locator('#panel-what-if').isVisible()).toBe(true);
    await page.close();
  });
});

describe("a namespace's queue: its waiters in order, and what each waits for", () => {
  it('lists the waiters in queue order with what each waits for, and is empty once a release admits them', async () => {
    const ns = 'waiting';
    await put(`/v1/namespaces/${ns}/resourcequotas/compute`, {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      spec: { hard: { 'requests.cpu': '2' } },
    });
    const holder = await reserve(ns, 'Pod', 'web-1', { 'requests.cpu': '2' });
    expect(holder.status).toBe(201);
    const wait = (name: string, priority: number) =>
      api.request(
        'POST',
        `/v1/namespaces/${ns}/reservations`,
        { kind: 'Job', name, resources: { 'requests.cpu': '1' }, wait: { seconds: 600, priority } },
        as('ci'),
      );
    expect((await wait('train-low', 0)).status).toBe(202);
    expect((await wait('train-high', 10)).status).toBe(202);

    const page = await signedIn(`#/ns/${ns}?tab=queue`);
    const rows = page.locator('#queue tbody tr');
    await expect.poll(() => rows.count()).toBe(2);
    const cells = async (i: number) => (await rows.nth(i).locator('td').allTextContents()).map((text) => text.trim());
    expect((await cells(0)).slice(0, 4)).toEqual([
      '1',
      expect.stringMatching(/^Job train-high/),
      '10',
      'compute: requests.cpu needs 1, 2 of 2 used',
    ]);
    expect((await cells(1)).slice(0, 3)).toEqual(['2', expect.stringMatching(/^Job train-low/), '0']);
    expect((await cells(0))[5]).toMatch(/^in (9|10) min$/);

    await api.request('DELETE', `/v1/namespaces/${ns}/reservations/${holder.body.id}`, undefined, as('ci'));
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.locator('#panel-queue .status:text-is("No reservation is waiting.")').waitFor();
    expect(await rows.count()).toBe(0);
    await page.close();
  });
  it("lists on a cluster quota's page the waiters of its namespaces that wait for it", async () => {
    const queued = await api.request(
      'POST',
      `/v1/namespaces/${SOLO}/reservations`,
      { kind: 'Job', name: 'batch-1', resources: { pods: '5' }, wait: { seconds: 600 } },
      as('ci'),
    );
    expect(queued.status).toBe(202);
    const page = await signedIn('#/clusterresourcequotas/acme');
    const row = page.locator('#crq-queue tbody tr');
    await row.first().waitFor();
    expect((await row.first().locator('td').allTextContents()).slice(0, 5).map((t) => t.trim())).toEqual([
      SOLO,
      '1',
      expect.stringMatching(/^Job batch-1/),
      '0',
      'acme: pods needs 5, 1 of 5 used',
    ]);
    expect(await row.first().getByRole('link', { name: SOLO }).getAttribute('href')).toBe(`#/ns/${SOLO}?tab=queue`);
    await api.request('DELETE', `/v1/namespaces/${SOLO}/reservations/${queued.body.id}`, undefined, as('ci'));
    await page.close();
  });
  it("lists a hierarchical quota's waiters over its whole subtree on its card, in each namespace it covers", async () => {
    await put('/v1/namespaces/org-dev', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'org-dev', labels: { 'org.tree.hnc.x-k8s.io/depth': '1' } },
    });
    await put('/v1/namespaces/org/hierarchicalresourcequotas/tree', {
      apiVersion: 'hnc.x-k8s.io/v1alpha2',
      kind: 'HierarchicalResourceQuota',
      metadata: { name: 'tree' },
      spec: { hard: { pods: '1' } },
    });
    expect((await reserve('org', 'Pod', 'first', { pods: '1' })).status).toBe(201);
    const queued = await api.request(
      'POST',
      '/v1/namespaces/org-dev/reservations',
      { kind: 'Job', name: 'nightly', resources: { pods: '1' }, wait: { seconds: 600 } },
      as('ci'),
    );
    expect(queued.status, JSON.stringify(queued.body)).toBe(202);
    for (const ns of ['org', 'org-dev']) {
      const page = await signedIn(`#/ns/${ns}?tab=quotas`);
      const row = page.locator('#shared-HierarchicalResourceQuota-org-tree-queue tbody tr');
      await row.first().waitFor();
      expect(await row.count()).toBe(1);
      expect((await row.first().locator('td').allTextContents()).slice(0, 5).map((t) => t.trim())).toEqual([
        'org-dev',
        '1',
        expect.stringMatching(/^Job nightly/),
        '0',
        expect.stringMatching(/tree: pods needs 1, 1 of 1 used$/),
      ]);
      await page.close();
    }
    await api.request('DELETE', `/v1/namespaces/org-dev/reservations/${queued.body.id}`, undefined, as('ci'));
  });
});
